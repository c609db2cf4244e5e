package ai_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/aifeature"
	"corkboard/board"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"
)

func noteRequest(prompt string) ai.NoteAIRequest {
	return ai.NoteAIRequest{
		BoardID:     "board-1",
		NoteID:      "n0",
		Prompt:      prompt,
		NoteTitle:   "Login",
		NoteContent: "We need a login.",
		AllNotes: []ai.BoardNote{
			{ID: "n1", Title: "Magic link", Content: "Log in with a link sent by e-mail. Links expire after 15 minutes."},
			{ID: "n2", Title: "2FA", Content: "Second factor for admins."},
			{ID: "n3", Title: "Pricing", Content: "Free and team plans."},
		},
	}
}

// toolResult returns the content of the tool message answering callID.
func toolResult(t *testing.T, msgs []api.Message, callID string) map[string]any {
	t.Helper()
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == callID {
			var v map[string]any
			if err := json.Unmarshal([]byte(m.Content), &v); err != nil {
				t.Fatalf("tool result %q: %v", m.Content, err)
			}
			return v
		}
	}
	t.Fatalf("no tool result for %s in %d messages", callID, len(msgs))
	return nil
}

func TestNoteAI_StreamsTitleFormat(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Transcript(t, "testdata/note-ai-answer.ndjson")))
	svc, _ := newService(t, fake)
	rec := &recorder{}

	if err := svc.NoteAI(t.Context(), noteRequest("Write a PRD for passwordless login"), rec); err != nil {
		t.Fatalf("NoteAI: %v", err)
	}
	want := "TITLE: Passwordless login PRD\n---\n## Summary\nUsers sign in with a one-time code sent by e-mail.\n\n## Open questions\n- Code lifetime: TBD"
	if got := rec.text(); got != want {
		t.Errorf("text:\n%q\nwant:\n%q", got, want)
	}
	// The body streams as the model writes it: one event per piece after
	// the header, not one at the end.
	kinds := rec.kinds()
	if kinds[0] != "start" || kinds[len(kinds)-1] != "finish" || len(rec.of(ai.EventText)) < 4 {
		t.Errorf("event kinds = %v, want start, the text in several pieces, finish", kinds)
	}
	req := fake.Requests()[0]
	if len(req.Tools) != 4 {
		t.Errorf("tools declared = %d, want 4", len(req.Tools))
	}
	if user := req.Messages[1].Content; !strings.Contains(user, "Write a PRD for passwordless login") || !strings.Contains(user, "We need a login.") {
		t.Errorf("user message lacks the prompt or the note: %q", user)
	}
}

func TestNoteAI_Repairs(t *testing.T) {
	tests := []struct {
		name  string
		reply aitest.Reply
		want  string
	}{
		{"Heading", aitest.Text("# Login flow\n\nStep one."), "TITLE: Login flow\n---\nStep one."},
		{"NoTitle", aitest.Text("Just a body."), "TITLE: Login\n---\nJust a body."},
		{"BoldTitleNoSeparator", aitest.Text("TITLE: **Login**\n", "Body here."), "TITLE: Login\n---\nBody here."},
		{"ListAfterTitle", aitest.Text("Title: Plan\n", "- ", "one\n- two"), "TITLE: Plan\n---\n- one\n- two"},
		{"TitleOnly", aitest.Text("TITLE: Only a title"), "TITLE: Only a title\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, aitest.Always(tt.reply))
			svc, _ := newService(t, fake)
			rec := &recorder{}
			if err := svc.NoteAI(t.Context(), noteRequest("write"), rec); err != nil {
				t.Fatalf("NoteAI: %v", err)
			}
			if got := rec.text(); got != tt.want {
				t.Errorf("body = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNoteAI_ToolLoop(t *testing.T) {
	fake := aitest.New(t, aitest.Seq(
		aitest.Reply{Text: []string{"Let me look around."}, ToolCalls: []aitest.ToolCall{
			{ID: "c1", Name: "searchNotes", Args: `{"query":"magic link e-mail"}`},
			{ID: "c2", Name: "loadSkill", Args: `{"name":"prd"}`},
		}},
		aitest.Calls(
			aitest.ToolCall{ID: "c3", Name: "readNote", Args: `{"id":"n1"}`},
			aitest.ToolCall{ID: "c4", Name: "readNote", Args: `{"id":"n42"}`},
			aitest.ToolCall{ID: "c5", Name: "searchNotes", Args: `{"query":7}`},
		),
		aitest.Calls(aitest.ToolCall{ID: "c6", Name: "delegateToProgrammer", Args: `{"question":"How long should login links live?"}`}),
		aitest.Text("Fifteen minutes is common."), // the programmer's answer
		aitest.Text("TITLE: Login PRD\n---\nLinks expire after 15 minutes."),
	), aitest.WithModels("qwen3:4b", "qwen2.5-coder:7b"))
	svc, usage := newService(t, fake, func(c *ai.Config) { c.Models = map[ai.Feature]string{aifeature.Programmer: "qwen2.5-coder:7b"} })
	rec := &recorder{}

	if err := svc.NoteAI(t.Context(), noteRequest("Write a PRD"), rec); err != nil {
		t.Fatalf("NoteAI: %v", err)
	}
	if got, want := rec.text(), "TITLE: Login PRD\n---\nLinks expire after 15 minutes."; got != want {
		t.Errorf("body = %q, want %q (narration of tool steps must not leak)", got, want)
	}
	reqs := fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("model calls = %d, want 5", len(reqs))
	}
	step2 := reqs[1].Messages
	search := toolResult(t, step2, "c1")
	results, _ := search["results"].([]any)
	if len(results) == 0 || results[0].(map[string]any)["id"] != "n1" {
		t.Errorf("searchNotes result = %v, want n1 first", search)
	}
	if guide, _ := toolResult(t, step2, "c2")["guide"].(string); !strings.Contains(guide, "product requirements document") {
		t.Errorf("loadSkill returned %q", guide)
	}
	step3 := reqs[2].Messages
	if content, _ := toolResult(t, step3, "c3")["content"].(string); !strings.Contains(content, "15 minutes") {
		t.Errorf("readNote n1 = %q", content)
	}
	if e, _ := toolResult(t, step3, "c4")["error"].(string); !strings.Contains(e, "no note with id") {
		t.Errorf("readNote of an unknown id = %q, want an error result", e)
	}
	if e, _ := toolResult(t, step3, "c5")["error"].(string); !strings.Contains(e, "at /query") {
		t.Errorf("searchNotes with a bad argument = %q, want a validation error result", e)
	}
	programmer := reqs[3]
	if programmer.Model != "qwen2.5-coder:7b" || len(programmer.Tools) != 0 || !strings.Contains(programmer.Messages[0].Content, "software engineer") {
		t.Errorf("programmer call: model %q, %d tools, system %q", programmer.Model, len(programmer.Tools), programmer.Messages[0].Content)
	}
	if answer, _ := toolResult(t, reqs[4].Messages, "c6")["answer"].(string); answer != "Fifteen minutes is common." {
		t.Errorf("delegateToProgrammer result = %q", answer)
	}
	if u := usage(); len(u) != 1 || u[0].Calls != 5 || u[0].Feature != aifeature.NoteAI {
		t.Errorf("usage = %+v", u)
	}
}

func TestNoteAI_StepLimit(t *testing.T) {
	// A model that always wants another tool call.
	fake := aitest.New(t, func(c aitest.Call) aitest.Reply {
		if len(c.Request.Tools) == 0 {
			return aitest.Text("TITLE: Done\n---\nForced answer.")
		}
		return aitest.Calls(aitest.ToolCall{ID: fmt.Sprintf("c%d", c.N), Name: "searchNotes", Args: `{"query":"login"}`})
	})
	svc, _ := newService(t, fake)
	rec := &recorder{}

	if err := svc.NoteAI(t.Context(), noteRequest("Write a PRD"), rec); err != nil {
		t.Fatalf("NoteAI: %v", err)
	}
	reqs := fake.Requests()
	if len(reqs) != ai.MaxSteps {
		t.Fatalf("model calls = %d, want %d", len(reqs), ai.MaxSteps)
	}
	for i, r := range reqs {
		if withTools := len(r.Tools) > 0; withTools != (i < ai.MaxSteps-1) {
			t.Errorf("step %d declared %d tools", i+1, len(r.Tools))
		}
	}
	if last := reqs[ai.MaxSteps-1].Messages; !strings.Contains(last[len(last)-1].Content, "without calling tools") {
		t.Errorf("last step does not ask for the final answer: %q", last[len(last)-1].Content)
	}
	if got, want := rec.text(), "TITLE: Done\n---\nForced answer."; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

func TestNoteAI_EmptyAnswerIsUpstreamError(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Text("")))
	svc, _ := newService(t, fake)
	rec := &recorder{}
	wantCode(t, svc.NoteAI(t.Context(), noteRequest("Write"), rec), board.EUPSTREAM)
	if kinds := rec.kinds(); len(kinds) != 0 {
		t.Errorf("delivered %v before failing", kinds)
	}
	if n := len(fake.Requests()); n != ai.MaxSteps {
		t.Errorf("model calls = %d, want %d (nudged until the step limit)", n, ai.MaxSteps)
	}
}

func TestNoteAI_ErrorAfterStart(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Reply{Text: []string{"TITLE: X\n---\nHalf"}, ErrorLine: "model runner has unexpectedly stopped"}))
	svc, _ := newService(t, fake)
	rec := &recorder{}
	err := svc.NoteAI(t.Context(), noteRequest("Write"), rec)
	wantCode(t, err, board.EUPSTREAM)
	if !ai.Streamed(err) {
		t.Errorf("Streamed(err) = false after the body started")
	}
	if got := rec.text(); got != "TITLE: X\n---\nHalf" {
		t.Errorf("text = %q", got)
	}
	if diff := cmp.Diff([]string{"start", "text", "text", "error"}, rec.kinds()); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
}

func TestNoteCommand(t *testing.T) {
	t.Run("Commands", func(t *testing.T) {
		want := []string{"generate-decision", "generate-dev-task", "generate-epic", "generate-feedback", "generate-prd", "generate-qa-test", "generate-story"}
		if diff := cmp.Diff(want, ai.Commands()); diff != "" {
			t.Errorf("Commands() (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		fake := aitest.New(t, aitest.Always(aitest.Text("unused")))
		svc, _ := newService(t, fake)
		err := svc.NoteCommand(t.Context(), "generate-poem", noteRequest(""), &recorder{})
		be := wantCode(t, err, board.EINVALID)
		for _, c := range ai.Commands() {
			if !strings.Contains(be.Message, c) {
				t.Errorf("message %q does not list %s", be.Message, c)
			}
		}
		if len(fake.Requests()) != 0 {
			t.Error("the model was called for an unknown command")
		}
	})
	for _, c := range ai.Commands() {
		t.Run(c, func(t *testing.T) {
			fake := aitest.New(t, aitest.Always(aitest.Text("TITLE: T\n---\nB")))
			svc, _ := newService(t, fake)
			rec := &recorder{}
			// Commands work without a prompt: the note is the input.
			if err := svc.NoteCommand(t.Context(), c, noteRequest(""), rec); err != nil {
				t.Fatalf("NoteCommand: %v", err)
			}
			if rec.text() != "TITLE: T\n---\nB" {
				t.Errorf("body = %q", rec.text())
			}
			sys := fake.Requests()[0].Messages[0].Content
			if !strings.Contains(sys, "# Writing guide") || !strings.Contains(sys, "TITLE:") {
				t.Errorf("system prompt of %s lacks its guide or format: %q", c, sys)
			}
		})
	}
	t.Run("DistinctPrompts", func(t *testing.T) {
		fake := aitest.New(t, aitest.Always(aitest.Text("TITLE: T\n---\nB")))
		svc, _ := newService(t, fake)
		for _, c := range ai.Commands() {
			if err := svc.NoteCommand(t.Context(), c, noteRequest(""), &recorder{}); err != nil {
				t.Fatal(err)
			}
		}
		var systems []string
		for _, r := range fake.Requests() {
			systems = append(systems, r.Messages[0].Content)
		}
		if n := len(slices.Compact(slices.Sorted(slices.Values(systems)))); n != len(ai.Commands()) {
			t.Errorf("%d distinct system prompts for %d commands", n, len(ai.Commands()))
		}
	})
}

func TestSkills(t *testing.T) {
	for _, want := range []string{"prd", "epic", "story", "decision", "feedback", "dev-task", "qa-test"} {
		if !slices.Contains(ai.Skills(), want) {
			t.Errorf("Skills() = %v, lacks %s", ai.Skills(), want)
		}
	}
}
