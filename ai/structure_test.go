package ai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/board"
)

// TestChat_ConnectNotes: the model sees the board's frames and
// connectors, and connects the notes it creates (by their refs) and the
// board's notes and frames; a connector to something neither has, or from
// a note to itself, is refused with a reason.
func TestChat_ConnectNotes(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Transcript(t, "testdata/chat-connect-notes.ndjson")))
	svc, _ := newService(t, fake)
	rec := &recorder{}
	req := chatRequest("Add the risks of magic links and link them to it")
	req.BoardState.Frames = []board.Frame{{ID: "f1", Title: "Security", X: 0, Y: 0, W: 800, H: 400}}
	req.BoardState.Connectors = []board.Connector{{ID: "c0", From: "n2", To: "n1", Label: "complements"}}
	if err := svc.Chat(t.Context(), req, rec); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	sys := fake.Requests()[0].Messages[0].Content
	for _, want := range []string{`- id="f1" title="Security" at=(0,0) size=800x400`, `- "n2" -> "n1" label="complements"`} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	calls := rec.of(ai.EventToolCall)
	if len(calls) != 6 {
		t.Fatalf("%d tool calls, want 6", len(calls))
	}
	for i, want := range []struct{ name, errorText, input string }{
		{"createNote", "", `"ref":"risk-1"`},
		{"createNote", "", `"ref":"risk-2"`},
		{"connectNotes", "", `{"from":"risk-1","label":"threatens","to":"n1"}`},
		{"connectNotes", "", `{"dash":"dashed","from":"risk-2","style":"line","to":"f1"}`},
		{"connectNotes", `"risk-3" is neither a note on the board nor the ref of a note created earlier`, ""},
		{"connectNotes", "two different notes", ""},
	} {
		tc := calls[i].ToolCall
		if tc.Name != want.name || !strings.Contains(tc.ErrorText, want.errorText) || want.errorText == "" && tc.ErrorText != "" ||
			!strings.Contains(string(tc.Input), want.input) {
			t.Errorf("call %d = %s %s (error %q), want %s %s (error %q)", i, tc.Name, tc.Input, tc.ErrorText, want.name, want.input, want.errorText)
		}
	}
	var in map[string]any
	if err := json.Unmarshal(calls[2].ToolCall.Input, &in); err != nil || in["from"] != "risk-1" {
		t.Errorf("connectNotes input %s: %v", calls[2].ToolCall.Input, err)
	}
}

// TestChat_ConnectNotesBeforeItsNote: a ref is known only after the
// createNote that gives it.
func TestChat_ConnectNotesBeforeItsNote(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Calls(
		aitest.ToolCall{Name: "connectNotes", Args: `{"from":"later","to":"n1"}`},
		aitest.ToolCall{Name: "createNote", Args: `{"title":"Later","content":"x","ref":"later"}`},
	)))
	svc, _ := newService(t, fake)
	rec := &recorder{}
	if err := svc.Chat(t.Context(), chatRequest("Link it"), rec); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	calls := rec.of(ai.EventToolCall)
	if len(calls) != 2 || !strings.Contains(calls[0].ToolCall.ErrorText, `"later"`) || calls[1].ToolCall.ErrorText != "" {
		t.Fatalf("calls = %+v, want the early connectNotes refused and the createNote accepted", calls)
	}
}
