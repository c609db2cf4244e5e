package ai_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/aifeature"
	"corkboard/board"

	"github.com/google/go-cmp/cmp"
)

func TestStructured_RetryThenOK(t *testing.T) {
	good := ai.Rewrite{Rewritten: "Users log in with a one-time code."}
	fake := aitest.New(t, aitest.Seq(
		aitest.JSON(`{"rewritten": `), // cut-off JSON
		aitest.JSON(good),
	))
	svc, usage := newService(t, fake)

	got, err := svc.NotesRewrite(t.Context(), ai.RewriteNoteRequest{BoardID: "b1", Content: "users login w/ code", Instruction: "Fix the grammar"})
	if err != nil {
		t.Fatalf("NotesRewrite: %v", err)
	}
	if *got != good {
		t.Errorf("got %+v, want %+v", *got, good)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Stream == nil || *r.Stream {
			t.Errorf("call %d streamed; structured calls should not", i+1)
		}
		var schema map[string]any
		if err := json.Unmarshal(r.Format, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("call %d format = %s, want the JSON schema", i+1, r.Format)
		}
	}
	retry := reqs[1].Messages
	if a := retry[len(retry)-2]; a.Role != "assistant" || a.Content != `{"rewritten": ` {
		t.Errorf("retry does not show the bad answer: %+v", a)
	}
	if u := retry[len(retry)-1]; u.Role != "user" || !strings.Contains(u.Content, "not valid JSON") {
		t.Errorf("retry does not say what was wrong: %q", u.Content)
	}
	if u := usage(); len(u) != 1 || u[0].Calls != 2 || u[0].Feature != aifeature.NotesRewrite {
		t.Errorf("usage = %+v", u)
	}
}

func TestStructured_BadTwiceIsUpstream(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.JSON(`{"rewritten": ""}`)))
	svc, _ := newService(t, fake)
	_, err := svc.NotesRewrite(t.Context(), ai.RewriteNoteRequest{BoardID: "b1", Content: "x", Instruction: "Shorter"})
	be := wantCode(t, err, board.EUPSTREAM)
	if !strings.Contains(be.Message, "invalid output twice") || !strings.Contains(be.Message, "/rewritten") {
		t.Errorf("message = %q", be.Message)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("model calls = %d, want 2", n)
	}
}

func TestStructured_UpstreamErrorNotRetried(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Reply{Status: 500, Error: "CUDA error"}))
	svc, _ := newService(t, fake)
	_, err := svc.NotesRewrite(t.Context(), ai.RewriteNoteRequest{BoardID: "b1", Content: "x", Instruction: "Shorter"})
	wantCode(t, err, board.EUPSTREAM)
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("model calls = %d, want 1", n)
	}
}

func documentNotes(n int) ai.DocumentNotes {
	var d ai.DocumentNotes
	for i := range n {
		d.Notes = append(d.Notes, ai.DocumentNote{Title: fmt.Sprintf("Topic %d", i+1), Content: "Text", SuggestedColor: "blue", SuggestedType: "note"})
	}
	return d
}

func TestDocumentToNotes(t *testing.T) {
	tests := []struct {
		name      string
		replies   []aitest.Reply
		wantNotes int
		wantCalls int
	}{
		{"OK", []aitest.Reply{aitest.JSON(documentNotes(3))}, 3, 1},
		{"TrimsExtras", []aitest.Reply{aitest.JSON(documentNotes(20))}, 15, 1},
		{"RetriesZero", []aitest.Reply{aitest.JSON(documentNotes(0)), aitest.JSON(documentNotes(2))}, 2, 2},
		{"RetriesBadEnum", []aitest.Reply{aitest.JSON(`{"notes":[{"title":"a","content":"b","suggestedColor":"red","suggestedType":"note"}]}`), aitest.JSON(documentNotes(1))}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, aitest.Seq(tt.replies...))
			svc, _ := newService(t, fake)
			got, err := svc.DocumentToNotes(t.Context(), ai.DocumentRequest{Text: "# Spec\nLots of text.", Filename: "spec.md"})
			if err != nil {
				t.Fatalf("DocumentToNotes: %v", err)
			}
			if len(got.Notes) != tt.wantNotes {
				t.Errorf("notes = %d, want %d", len(got.Notes), tt.wantNotes)
			}
			if n := len(fake.Requests()); n != tt.wantCalls {
				t.Errorf("model calls = %d, want %d", n, tt.wantCalls)
			}
			if user := fake.Requests()[0].Messages[1].Content; !strings.Contains(user, "spec.md") || !strings.Contains(user, "Lots of text.") {
				t.Errorf("user message = %q", user)
			}
		})
	}
}

func TestDocumentToNotes_SizeLimit(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.JSON(documentNotes(1))))
	svc, _ := newService(t, fake)
	// "é" is two bytes but one character: the limit counts characters.
	atLimit := strings.Repeat("é", ai.MaxDocumentText)
	if _, err := svc.DocumentToNotes(t.Context(), ai.DocumentRequest{Text: atLimit}); err != nil {
		t.Fatalf("100,000 characters: %v", err)
	}
	_, err := svc.DocumentToNotes(t.Context(), ai.DocumentRequest{Text: atLimit + "x"})
	if be := wantCode(t, err, board.EINVALID); be.Field != "text" {
		t.Errorf("field = %q, want text", be.Field)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("model calls = %d, want 1 (none for the rejected text)", n)
	}
}

func TestGenerateFrontmatter_DropsUnknownRelationships(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.JSON(map[string]any{
		"description": "How users log in.",
		"relationships": []map[string]string{
			{"noteId": "n1", "type": "relates_to", "reason": "same flow"},
			{"noteId": "n99", "type": "blocks", "reason": "invented"},
			{"noteId": "n0", "type": "duplicates", "reason": "itself"},
			{"noteId": "n1", "type": "depends_on", "reason": "again"},
		},
	})))
	svc, _ := newService(t, fake)
	got, err := svc.GenerateFrontmatter(t.Context(), ai.FrontmatterRequest{
		BoardID: "b1", NoteID: "n0", Title: "Login", Content: "Passwordless login.",
		AllNotes: []ai.BoardNote{{ID: "n0", Title: "Login"}, {ID: "n1", Title: "Magic link"}},
	})
	if err != nil {
		t.Fatalf("GenerateFrontmatter: %v", err)
	}
	want := &ai.Frontmatter{Description: "How users log in.", Relationships: []ai.Relationship{{NoteID: "n1", Title: "Magic link", Type: "relates_to", Reason: "same flow"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frontmatter (-want +got):\n%s", diff)
	}
}

func TestNotesAnalyze_LocatesSections(t *testing.T) {
	content := "Users log in.\nThe code  expires soon.\nAdmins use 2FA."
	fake := aitest.New(t, aitest.Always(aitest.JSON(ai.Analysis{Suggestions: []ai.Advice{
		{SectionText: "Users log in.", Advice: "Say how.", Actions: []ai.AdviceAction{{Label: "Add method", Instruction: "Name the login method"}}},
		{SectionText: "the code expires SOON.", Advice: "Give the lifetime.", Actions: []ai.AdviceAction{}},
		{SectionText: "Nothing like this", Advice: "General advice.", Actions: []ai.AdviceAction{}},
	}})))
	svc, _ := newService(t, fake)
	got, err := svc.NotesAnalyze(t.Context(), ai.AnalyzeNoteRequest{BoardID: "b1", Title: "Login", Content: content})
	if err != nil {
		t.Fatalf("NotesAnalyze: %v", err)
	}
	var sections []string
	for _, s := range got.Suggestions {
		sections = append(sections, s.SectionText)
	}
	if diff := cmp.Diff([]string{"Users log in.", "The code  expires soon.", ""}, sections); diff != "" {
		t.Errorf("sectionText (-want +got):\n%s", diff)
	}
	if got.Suggestions[0].Actions[0].Instruction != "Name the login method" {
		t.Errorf("actions = %+v", got.Suggestions[0].Actions)
	}
}

func TestTrackerAnalyzeAndRewrite(t *testing.T) {
	item := board.TrackerItem{ID: "i1", Key: "CB-1", Type: "story", Summary: "Login", Description: "Users log in."}
	t.Run("Analyze", func(t *testing.T) {
		fake := aitest.New(t, aitest.Always(aitest.JSON(ai.Analysis{Suggestions: []ai.Advice{{SectionText: "Login", Advice: "Too vague.", Actions: []ai.AdviceAction{{Label: "Expand", Instruction: "Say who logs in and how"}}}}})))
		svc, _ := newService(t, fake)
		got, err := svc.TrackerAnalyze(t.Context(), ai.TrackerAnalyzeRequest{BoardID: "b1", Item: item})
		if err != nil {
			t.Fatalf("TrackerAnalyze: %v", err)
		}
		if len(got.Suggestions) != 1 || got.Suggestions[0].SectionText != "Login" {
			t.Errorf("got %+v", got)
		}
		if user := fake.Requests()[0].Messages[1].Content; !strings.Contains(user, `key="CB-1"`) {
			t.Errorf("user message lacks the item: %q", user)
		}
	})
	t.Run("RewriteSummaryIsOneLine", func(t *testing.T) {
		fake := aitest.New(t, aitest.Always(aitest.JSON(ai.Rewrite{Rewritten: "As a user,\nI log in\nwith a code"})))
		svc, _ := newService(t, fake)
		got, err := svc.TrackerRewrite(t.Context(), ai.TrackerRewriteRequest{BoardID: "b1", Item: item, Field: "summary", Instruction: "Make it a user story"})
		if err != nil {
			t.Fatalf("TrackerRewrite: %v", err)
		}
		if got.Rewritten != "As a user, I log in with a code" {
			t.Errorf("rewritten = %q", got.Rewritten)
		}
	})
}

func TestTrackerGenerate(t *testing.T) {
	items := []board.TrackerItem{
		{ID: "e1", Key: "CB-1", Type: "epic", Summary: "Login"},
		{ID: "s1", Key: "CB-2", Type: "story", Summary: "Magic link", ParentID: "e1"},
	}
	answer := ai.TrackerGeneration{
		Items: []ai.GeneratedItem{
			{Type: "task", Summary: "Send the mail", Description: "SMTP", ParentID: "e1", ReplacesID: "s1"},
			{Type: "epic", Summary: "Check\nthe link", Description: "", ParentID: "ghost", ReplacesID: "ghost"},
		},
		RecommendedNextStep: ai.NextStep{Step: "task", Reason: "Stories are ready."},
	}
	tests := []struct {
		name string
		req  ai.TrackerGenerateRequest
		want []ai.GeneratedItem
	}{
		{
			name: "GenerateStep",
			req:  ai.TrackerGenerateRequest{Mode: ai.ModeGenerateStep, Step: "story"},
			want: []ai.GeneratedItem{
				{Type: "story", Summary: "Send the mail", Description: "SMTP", ParentID: "e1"},
				{Type: "story", Summary: "Check the link"},
			},
		},
		{
			name: "GenerateChildren",
			req:  ai.TrackerGenerateRequest{Mode: ai.ModeGenerateChildren, ParentID: "s1"},
			want: []ai.GeneratedItem{
				{Type: "task", Summary: "Send the mail", Description: "SMTP", ParentID: "s1"},
				{Type: "task", Summary: "Check the link", ParentID: "s1"},
			},
		},
		{
			name: "RegenerateItems",
			req:  ai.TrackerGenerateRequest{Mode: ai.ModeRegenerateItems, ItemIDs: []string{"s1"}},
			want: []ai.GeneratedItem{
				{Type: "story", Summary: "Send the mail", Description: "SMTP", ParentID: "e1", ReplacesID: "s1"},
				{Type: "epic", Summary: "Check the link"},
			},
		},
		{
			name: "Count",
			req:  ai.TrackerGenerateRequest{Mode: ai.ModeGenerateStep, Step: "task", Count: 1},
			want: []ai.GeneratedItem{{Type: "task", Summary: "Send the mail", Description: "SMTP", ParentID: "e1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, aitest.Always(aitest.JSON(answer)))
			svc, _ := newService(t, fake)
			tt.req.BoardID, tt.req.Items = "b1", items
			got, err := svc.TrackerGenerate(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("TrackerGenerate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if got.RecommendedNextStep != answer.RecommendedNextStep {
				t.Errorf("next step = %+v", got.RecommendedNextStep)
			}
		})
	}
}

func TestTrackerGenerate_Deadline(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Reply{Hang: true}))
	svc, _ := newService(t, fake) // Timeout stays at two minutes
	ai.SetTrackerDeadline(svc, 150*time.Millisecond)
	start := time.Now()
	_, err := svc.TrackerGenerate(t.Context(), ai.TrackerGenerateRequest{BoardID: "b1", Mode: ai.ModeGenerateStep, Step: "epic"})
	be := wantCode(t, err, board.EUNAVAILABLE)
	if !strings.Contains(be.Message, "no answer within 150ms") {
		t.Errorf("message = %q", be.Message)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	select {
	case <-fake.Cancelled():
	case <-time.After(5 * time.Second):
		t.Error("the model request was not cancelled at the deadline")
	}
}
