package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"corkboard/ai"
)

// streamed collects what an ai stream delivers.
type streamed struct {
	text  string
	calls []ai.ToolCall
	err   error
}

func collect(t *testing.T, run func(ai.Sink) error) streamed {
	t.Helper()
	var got streamed
	err := run(ai.SinkFunc(func(_ context.Context, e ai.Event) error {
		switch e.Kind {
		case ai.EventText:
			got.text += e.Delta
		case ai.EventToolCall:
			got.calls = append(got.calls, e.ToolCall)
		case ai.EventError:
			got.err = e.Err
		}
		return nil
	}))
	if err != nil && got.err == nil {
		got.err = err
	}
	return got
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("request %s: %v", body, err)
	}
	return v
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRecordingsThroughService runs every AI feature of the real ai.Service
// (the real ollama client) against the fake with the e2e script, with the
// request bodies a browser sends, and checks each gets its recorded answer
// and the answer is valid: the web helpers' e2e tests rely on exactly these.
func TestRecordingsThroughService(t *testing.T) {
	srv := startFake(t, e2eScript)
	svc, err := ai.New(ai.Config{OllamaURL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const items = `[{"id": "item-1", "key": "CB-1", "type": "epic", "summary": "Passwordless login", "updatedAt": "2026-01-01T00:00:00Z", "version": 1}]`

	t.Run("ChatCreatesNoteThenAnswers", func(t *testing.T) { testRecordedChatCreatesNote(t, svc) })
	t.Run("ChatText", func(t *testing.T) {
		req := decode[ai.ChatRequest](t, `{"id": "c2", "boardId": "b1", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is on this board?"}]}]}`)
		got := collect(t, func(s ai.Sink) error { return svc.Chat(ctx, req, s) })
		if got.err != nil || !strings.HasPrefix(got.text, "Your board is about the **launch**") {
			t.Errorf("%+v", got)
		}
	})
	t.Run("Subagent", func(t *testing.T) { testRecordedSubagent(t, svc) })
	noteCases := []struct{ command, wantTitle string }{
		{"", "Onboarding checklist"},
		{"generate-prd", "Passwordless login PRD"},
		{"generate-epic", "Onboarding checklist"},
	}
	for _, tc := range noteCases {
		t.Run("NoteAI/"+tc.command, func(t *testing.T) {
			req := decode[ai.NoteAIRequest](t, `{"boardId": "b1", "noteId": "n1", "prompt": "Write it", "noteTitle": "Login"}`)
			got := collect(t, func(s ai.Sink) error {
				if tc.command == "" {
					return svc.NoteAI(ctx, req, s)
				}
				return svc.NoteCommand(ctx, tc.command, req, s)
			})
			if got.err != nil || !strings.HasPrefix(got.text, "TITLE: "+tc.wantTitle+"\n---\n") || len(got.text) < 60 {
				t.Errorf("%+v", got)
			}
		})
	}
	t.Run("NoteAICut", func(t *testing.T) {
		req := decode[ai.NoteAIRequest](t, `{"boardId": "b1", "noteId": "n1", "prompt": "FAKE-CUT"}`)
		srv.Release("note-ai-cut") // the rule waits at this gate for the browser tests
		got := collect(t, func(s ai.Sink) error { return svc.NoteAI(ctx, req, s) })
		if got.err == nil || got.text != "TITLE: Cut answer\n---\nThe first part arrived" {
			t.Errorf("%+v", got)
		}
	})

	jsonCases := []struct {
		name string
		call func(t *testing.T) (any, error)
		want string
	}{
		{"DocumentToNotes", func(t *testing.T) (any, error) {
			return svc.DocumentToNotes(ctx, decode[ai.DocumentRequest](t, `{"text": "Launch the beta to ten teams by March.", "filename": "plan.md"}`))
		}, `{"notes":[{"title":"Goal","content":"Launch the beta to **ten teams** by March.","suggestedColor":"green","suggestedType":"requirement"},{"title":"Risk: onboarding","content":"New users may not find the import button.","suggestedColor":"pink","suggestedType":"risk"},{"title":"Open question","content":"Which plan do beta teams get?","suggestedColor":"yellow","suggestedType":"question"}]}`},
		{"GenerateFrontmatter", func(t *testing.T) (any, error) {
			return svc.GenerateFrontmatter(ctx, decode[ai.FrontmatterRequest](t, `{"boardId": "b1", "noteId": "n1", "title": "Login", "content": "Passwordless", "allNotes": []}`))
		}, `{"description":"How users sign in to Corkboard without a password.","relationships":[]}`},
		{"NotesAnalyze", func(t *testing.T) (any, error) {
			return svc.NotesAnalyze(ctx, decode[ai.AnalyzeNoteRequest](t, `{"boardId": "b1", "title": "Login", "content": "Users log in."}`))
		}, `{"suggestions":[{"sectionText":"","advice":"The note has no acceptance criteria, so nobody can tell when it is done.","actions":[{"label":"Add acceptance criteria","instruction":"Add a short list of acceptance criteria at the end"}]},{"sectionText":"","advice":"No owner is named.","actions":[{"label":"Name an owner","instruction":"Add a line naming the owner of this work"}]}]}`},
		{"NotesRewrite", func(t *testing.T) (any, error) {
			return svc.NotesRewrite(ctx, decode[ai.RewriteNoteRequest](t, `{"boardId": "b1", "content": "Users log in.", "instruction": "Be precise"}`))
		}, `{"rewritten":"Users sign in with a one-time code sent to their e-mail address; the code expires after 10 minutes."}`},
		{"TrackerGenerateStep", func(t *testing.T) (any, error) {
			return svc.TrackerGenerate(ctx, decode[ai.TrackerGenerateRequest](t, `{"boardId": "b1", "mode": "generate_step", "step": "story", "items": `+items+`}`))
		}, `{"items":[{"type":"story","summary":"Sign in with a one-time code","description":"As a user, I want to sign in with a code sent by e-mail, so that I need no password.\n\n- [ ] The code arrives within a minute","parentId":""},{"type":"story","summary":"Invite a teammate to a board","description":"As an owner, I want to invite a teammate by e-mail, so that we can plan together.\n\n- [ ] The invitee sees the board","parentId":""}],"recommendedNextStep":{"step":"task","reason":"The stories are ready to be broken down into tasks."}}`},
		{"TrackerGenerateChildren", func(t *testing.T) (any, error) {
			return svc.TrackerGenerate(ctx, decode[ai.TrackerGenerateRequest](t, `{"boardId": "b1", "mode": "generate_children", "parentId": "item-1", "items": `+items+`}`))
		}, `{"items":[{"type":"story","summary":"Send the login code by e-mail","description":"Use the SMTP mailer; one code per request.","parentId":"item-1"},{"type":"story","summary":"Check the code and open a session","description":"Reject expired or wrong codes.","parentId":"item-1"}],"recommendedNextStep":{"step":"done","reason":"The item is fully broken down."}}`},
		{"TrackerRegenerate", func(t *testing.T) (any, error) {
			return svc.TrackerGenerate(ctx, decode[ai.TrackerGenerateRequest](t, `{"boardId": "b1", "mode": "regenerate_items", "itemIds": ["item-1"], "items": `+items+`}`))
		}, `{"items":[{"type":"epic","summary":"Sign in with a one-time e-mail code","description":"As a user, I want to sign in with a code sent by e-mail, so that I need no password.\n\n- [ ] Codes expire after 10 minutes","parentId":"","replacesId":"item-1"}],"recommendedNextStep":{"step":"task","reason":"The story is clear enough to plan its tasks."}}`},
		{"TrackerAnalyze", func(t *testing.T) (any, error) {
			return svc.TrackerAnalyze(ctx, decode[ai.TrackerAnalyzeRequest](t, `{"boardId": "b1", "item": {"id": "item-1", "key": "CB-1", "type": "story", "summary": "Login"}}`))
		}, `{"suggestions":[{"sectionText":"","advice":"The item has no acceptance criteria.","actions":[{"label":"Add acceptance criteria","instruction":"Add three acceptance criteria to the description"}]}]}`},
		{"TrackerRewrite", func(t *testing.T) (any, error) {
			return svc.TrackerRewrite(ctx, decode[ai.TrackerRewriteRequest](t, `{"boardId": "b1", "item": {"id": "item-1", "key": "CB-1", "type": "story", "summary": "Login"}, "field": "summary", "instruction": "Be precise"}`))
		}, `{"rewritten":"Sign in with a one-time code sent by e-mail"}`},
	}
	for _, tc := range jsonCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.call(t)
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(t, v); got != tc.want {
				t.Errorf("answer\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// testRecordedChatCreatesNote: the recorded chat calls createNote, then answers once given the tool's output.
func testRecordedChatCreatesNote(t *testing.T, svc *ai.Service) {
	ctx := context.Background()
	req := decode[ai.ChatRequest](t, `{"id": "c1", "boardId": "b1", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Add a launch checklist"}]}]}`)
	got := collect(t, func(s ai.Sink) error { return svc.Chat(ctx, req, s) })
	if got.err != nil || len(got.calls) != 1 || got.calls[0].Name != "createNote" || got.calls[0].ErrorText != "" {
		t.Fatalf("first turn: %+v", got)
	}
	var in struct{ Title, Content string }
	if err := json.Unmarshal(got.calls[0].Input, &in); err != nil || in.Title != "Launch checklist" || !strings.Contains(in.Content, "Invite ten teams") {
		t.Errorf("createNote input %s (%v)", got.calls[0].Input, err)
	}
	// The client applies the call and posts the conversation again
	// with the tool's output.
	req = decode[ai.ChatRequest](t, `{"id": "c1", "boardId": "b1", "messages": [
		{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Add a launch checklist"}]},
		{"id": "a1", "role": "assistant", "parts": [{"type": "step-start"}, {"type": "text", "text": "I'll add a note with the launch checklist."},
			{"type": "tool-createNote", "toolCallId": "`+got.calls[0].ID+`", "state": "output-available", "input": `+string(got.calls[0].Input)+`, "output": {"id": "n7"}}]}]}`)
	got = collect(t, func(s ai.Sink) error { return svc.Chat(ctx, req, s) })
	if got.err != nil || len(got.calls) != 0 || got.text != "I added the note **Launch checklist** to your board with three steps." {
		t.Errorf("second turn: %+v", got)
	}
}

// testRecordedSubagent: the recorded subagent answer ends with its three suggestions.
func testRecordedSubagent(t *testing.T, svc *ai.Service) {
	ctx := context.Background()
	req := decode[ai.ChatRequest](t, `{"id": "s1", "boardId": "b1", "currentPhase": {"id": "p1", "name": "Discovery"}, "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What next?"}]}]}`)
	got := collect(t, func(s ai.Sink) error { return svc.Subagent(ctx, req, s) })
	sug, ok := ai.ParseSuggestions(got.text)
	if got.err != nil || !ok || len(sug.Suggestions) != 3 || sug.Suggestions[0].Label != "Interview users" {
		t.Errorf("%+v %+v", got, sug)
	}
	if !strings.HasPrefix(got.text, "In **Discovery** the next step is to talk to users.") {
		t.Errorf("text %q", got.text)
	}
}
