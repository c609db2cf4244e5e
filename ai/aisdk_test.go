package ai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corkboard/ai"
	"corkboard/ai/aitest"
)

// uiPart is the part of an assembled UIMessage part the test looks at.
type uiPart struct {
	Type      string         `json:"type"`
	Text      string         `json:"text"`
	State     string         `json:"state"`
	Input     map[string]any `json:"input"`
	RawInput  map[string]any `json:"rawInput"`
	ErrorText string         `json:"errorText"`
}

// uiMessage is the verifier's output: the chunk types and the message
// useChat's state machine assembled from them.
type uiMessage struct {
	ChunkTypes []string `json:"chunkTypes"`
	Message    struct {
		Role  string   `json:"role"`
		Parts []uiPart `json:"parts"`
	} `json:"message"`
}

// content returns the message's parts without the step-start markers.
func (m uiMessage) content() []uiPart {
	var out []uiPart
	for _, p := range m.Message.Parts {
		if p.Type != "step-start" {
			out = append(out, p)
		}
	}
	return out
}

func TestUIStream_AISDKParser(t *testing.T) {
	sdk := aitest.AISDKDir(t)
	tests := []struct {
		name        string
		subagent    bool
		script      aitest.Script
		expectError bool
		check       func(t *testing.T, m uiMessage)
	}{
		{
			name: "TextAndTools",
			script: aitest.Always(aitest.Reply{
				Text: []string{"I'll add ", "two notes."},
				ToolCalls: []aitest.ToolCall{
					{ID: "call_ok", Name: "createNote", Args: `{"title":"Go","content":"Fast builds","color":"blue"}`},
					{ID: "call_bad", Name: "updateNote", Args: `{"id":"n1","title":7}`},
				},
			}),
			check: func(t *testing.T, m uiMessage) {
				parts := m.content()
				if len(parts) != 3 {
					t.Fatalf("parts = %+v", parts)
				}
				text, ok, bad := parts[0], parts[1], parts[2]
				if text.Type != "text" || text.Text != "I'll add two notes." || text.State != "done" {
					t.Errorf("text part = %+v", text)
				}
				if ok.Type != "tool-createNote" || ok.State != "input-available" || ok.Input["title"] != "Go" {
					t.Errorf("createNote part = %+v", ok)
				}
				if bad.Type != "tool-updateNote" || bad.State != "output-error" || bad.RawInput["title"] != float64(7) || !strings.Contains(bad.ErrorText, "/title") {
					t.Errorf("updateNote part = %+v", bad)
				}
			},
		},
		{
			name:   "Transcript",
			script: aitest.Always(aitest.Transcript(t, "testdata/chat-text.ndjson")),
			check: func(t *testing.T, m uiMessage) {
				if parts := m.content(); len(parts) != 1 || !strings.HasPrefix(parts[0].Text, "Your board has two notes") {
					t.Errorf("parts = %+v", parts)
				}
			},
		},
		{
			name:     "SubagentReasked",
			subagent: true,
			script: aitest.Seq(
				aitest.Calls(aitest.ToolCall{Name: "createPlaceholderNote", Args: `{"title":"Risks"}`}),
				aitest.JSON(`{"suggestions":[{"label":"a","prompt":"b"},{"label":"c","prompt":"d"},{"label":"e","prompt":"f"}]}`),
			),
			check: func(t *testing.T, m uiMessage) {
				parts := m.content()
				if parts[0].Type != "tool-createPlaceholderNote" || parts[0].State != "input-available" {
					t.Errorf("first part = %+v", parts[0])
				}
				if _, ok := ai.ParseSuggestions(parts[len(parts)-1].Text); !ok {
					t.Errorf("last part does not hold the suggestion block: %+v", parts)
				}
			},
		},
		{
			name:        "ErrorMidStream",
			script:      aitest.Always(aitest.Transcript(t, "testdata/error-midstream.ndjson")),
			expectError: true,
			check: func(t *testing.T, m uiMessage) {
				if m.ChunkTypes[len(m.ChunkTypes)-1] != "error" {
					t.Errorf("chunk types = %v", m.ChunkTypes)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, tt.script)
			svc, _ := newService(t, fake)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req ai.ChatRequest
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				run := svc.Chat
				if tt.subagent {
					run = svc.Subagent
				}
				if err := run(r.Context(), req, w); err != nil && !ai.Streamed(err) {
					http.Error(w, err.Error(), http.StatusBadGateway)
				}
			}))
			defer srv.Close()

			// The body useChat sends: id, messages, trigger, plus extra fields.
			body := `{"id":"chat-1","trigger":"submit-message","boardId":"board-1","currentPhase":{"id":"p1","name":"Discovery"},
				"boardState":{"notes":[{"id":"n1","title":"Magic link","content":"x"}]},
				"messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Add notes about Go"}]}]}`
			bodyFile := filepath.Join(t.TempDir(), "body.json")
			if err := os.WriteFile(bodyFile, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"testdata/verify-ui-stream.mjs", srv.URL, bodyFile}
			if tt.expectError {
				args = append(args, "--expect-error")
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", args...)
			cmd.Env = append(os.Environ(), "AI_SDK_DIR="+sdk)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the AI SDK rejected the stream: %v\n%s", err, stderr.String())
			}
			var m uiMessage
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("verifier output: %v\n%s", err, out)
			}
			tt.check(t, m)
		})
	}
}
