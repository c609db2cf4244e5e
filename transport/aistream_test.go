package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"corkboard/transport"
)

// uiPart is the part of an assembled UIMessage part a test looks at.
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

// verifyUIStream runs testdata/verify-ui-stream.mjs, the AI SDK's own
// stream parser and useChat's state machine, on the answer to POST url
// with body and the extra request headers, and fails on any chunk it
// rejects.
func verifyUIStream(t *testing.T, sdkDir, url string, body []byte, headers map[string]string, expectError bool) uiMessage {
	t.Helper()
	bodyFile := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join("testdata", "verify-ui-stream.mjs"), url, bodyFile}
	if expectError {
		args = append(args, "--expect-error")
	}
	h, err := json.Marshal(headers)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "AI_SDK_DIR="+sdkDir, "VERIFY_HEADERS="+string(h))
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
	return m
}

// TestAIChatAISDKParser runs the AI SDK's own stream parser and useChat's
// state machine over real chat and subagent answers from the whole stack
// (the real ai package on the fake Ollama, the session cookie passed in
// VERIFY_HEADERS), and checks the message the client assembles. Skipped
// unless CORKBOARD_AI_SDK_DIR is set (make test sets it).
func TestAIChatAISDKParser(t *testing.T) {
	dir := aitest.AISDKDir(t)

	e := newAIEnv(t)
	ada := e.claim("ada@example.com", aiBoard)
	tests := []struct {
		name        string
		path        string
		body        map[string]any
		script      aitest.Script
		expectError bool
		check       func(t *testing.T, m uiMessage)
	}{
		{name: "ChatTextAndTools", path: "/api/canvas/chat", body: chatRequest(aiBoard), script: aitest.Always(aiRoutes()[0].reply),
			check: func(t *testing.T, m uiMessage) {
				parts := m.content()
				if len(parts) != 3 {
					t.Fatalf("parts = %+v", parts)
				}
				text, ok, bad := parts[0], parts[1], parts[2]
				if text.Type != "text" || text.Text != "I'll add a note." || text.State != "done" {
					t.Errorf("text part = %+v", text)
				}
				if ok.Type != "tool-createNote" || ok.State != "input-available" || ok.Input["title"] != "Go" {
					t.Errorf("createNote part = %+v", ok)
				}
				if bad.Type != "tool-updateNote" || bad.State != "output-error" || bad.RawInput["title"] != float64(7) || !strings.Contains(bad.ErrorText, "/title") {
					t.Errorf("updateNote part = %+v", bad)
				}
			}},
		{name: "ChatTranscript", path: "/api/canvas/chat", body: chatRequest(aiBoard),
			script: aitest.Always(aitest.Transcript(t, filepath.Join("..", "ai", "testdata", "chat-text.ndjson"))),
			check: func(t *testing.T, m uiMessage) {
				if parts := m.content(); len(parts) != 1 || !strings.HasPrefix(parts[0].Text, "Your board has two notes") {
					t.Errorf("parts = %+v", parts)
				}
			}},
		{name: "SubagentReasked", path: "/api/canvas/subagent", body: subagentRequest(aiBoard), script: aitest.Seq(
			aitest.Calls(aitest.ToolCall{Name: "createPlaceholderNote", Args: `{"title":"Risks"}`}),
			aitest.JSON(`{"suggestions":[{"label":"a","prompt":"b"},{"label":"c","prompt":"d"},{"label":"e","prompt":"f"}]}`),
		), check: func(t *testing.T, m uiMessage) {
			parts := m.content()
			if parts[0].Type != "tool-createPlaceholderNote" || parts[0].State != "input-available" {
				t.Errorf("first part = %+v", parts[0])
			}
			if _, ok := ai.ParseSuggestions(parts[len(parts)-1].Text); !ok {
				t.Errorf("last part does not hold the suggestion block: %+v", parts)
			}
		}},
		{name: "ErrorMidStream", path: "/api/canvas/chat", body: chatRequest(aiBoard), expectError: true,
			script: aitest.Always(aitest.Transcript(t, filepath.Join("..", "ai", "testdata", "error-midstream.ndjson"))),
			check: func(t *testing.T, m uiMessage) {
				if m.ChunkTypes[len(m.ChunkTypes)-1] != "error" {
					t.Errorf("chunk types = %v", m.ChunkTypes)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := e.calls()
			e.setScript(func(c aitest.Call) aitest.Reply {
				c.N -= base
				return tt.script(c)
			})
			b, err := json.Marshal(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			cookie := map[string]string{"cookie": fmt.Sprintf("%s=%s", transport.SessionCookie, ada)}
			tt.check(t, verifyUIStream(t, dir, e.srv.URL+tt.path, b, cookie, tt.expectError))
		})
	}
}

// TestAIGoldenStreamsAISDKParser runs every UI message stream recorded in
// testdata/ai-golden through the AI SDK's parser and state machine, so
// that the bytes the golden test holds the server to are bytes the client
// accepts.
func TestAIGoldenStreamsAISDKParser(t *testing.T) {
	dir := aitest.AISDKDir(t)
	files, err := filepath.Glob(filepath.Join("testdata", "ai-golden", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	streams := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		head, body, _ := bytes.Cut(data, []byte("\n\n"))
		if !bytes.Contains(head, []byte("Content-Type: text/event-stream")) {
			continue
		}
		streams++
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// The recorded headers; "status" and "credits charged" are
				// the golden test's own lines.
				for line := range strings.Lines(string(head)) {
					k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
					if k != "status" && k != "credits charged" {
						w.Header().Set(k, v)
					}
				}
				w.Write(body)
			}))
			defer srv.Close()
			expectError := bytes.Contains(body, []byte(`data: {"type":"error"`))
			m := verifyUIStream(t, dir, srv.URL, []byte("{}"), nil, expectError)
			if len(m.ChunkTypes) < 4 {
				t.Errorf("chunk types = %v", m.ChunkTypes)
			}
		})
	}
	if streams < 10 {
		t.Fatalf("%d UI message streams in testdata/ai-golden, want every chat and subagent case", streams)
	}
}
