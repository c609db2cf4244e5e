package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"corkboard/ai/aitest"
)

// e2eScript is the script the browser tests use; every test here runs it,
// so a recording that stops fitting what ai expects fails in Go first.
const e2eScript = "../../web/e2e/ollama/script.json"

func startFake(t *testing.T, script string) *aitest.Server {
	t.Helper()
	srv, err := newServer(script, "qwen3:4b", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func client(t *testing.T, base string) *api.Client {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return api.NewClient(u, http.DefaultClient)
}

func TestRuleMatching(t *testing.T) {
	_, rules, err := aitest.LoadRules(e2eScript)
	if err != nil {
		t.Fatal(err)
	}
	sys := func(s string) api.Message { return api.Message{Role: "system", Content: s} }
	user := func(s string) api.Message { return api.Message{Role: "user", Content: s} }
	tool := api.Message{Role: "tool", Content: `{"ok":true}`}
	tools := []api.Tool{{Type: "function"}}
	format := json.RawMessage(`{"type":"object"}`)
	cases := []struct {
		name string
		req  api.ChatRequest
		want string
	}{
		{"ChatFirstTurnCallsCreateNote", api.ChatRequest{Messages: []api.Message{sys("You are the assistant of a Corkboard board: …"), user("Add a launch checklist")}, Tools: tools}, "chat-create-note"},
		{"ChatAfterToolResultAnswers", api.ChatRequest{Messages: []api.Message{sys("You are the assistant of a Corkboard board"), user("Add a launch checklist"), {Role: "assistant"}, tool}, Tools: tools}, "chat-after-tool"},
		{"ChatQuestionAnswersText", api.ChatRequest{Messages: []api.Message{sys("You are the assistant of a Corkboard board"), user("What is on this board?")}, Tools: tools}, "chat-text"},
		{"UserWordBeatsSystem", api.ChatRequest{Messages: []api.Message{sys("You are the assistant of a Corkboard board"), user("please FAKE-MODEL-404")}}, "model-404"},
		{"CutOnlyForNotes", api.ChatRequest{Messages: []api.Message{sys("You write one sticky note of a Corkboard board"), user("Request: FAKE-CUT")}}, "note-ai-cut"},
		{"CutWordInChatIsChat", api.ChatRequest{Messages: []api.Message{sys("You are the assistant of a Corkboard board"), user("FAKE-CUT")}}, "chat-create-note"},
		{"SubagentStreamed", api.ChatRequest{Messages: []api.Message{sys("You are the phase guide of a Corkboard board"), user("What next?")}, Tools: tools}, "subagent"},
		{"SubagentSuggestionsCallUnscripted", api.ChatRequest{Messages: []api.Message{sys("You are the phase guide of a Corkboard board"), user("Now give exactly three")}, Format: format}, ""},
		{"GeneratePRD", api.ChatRequest{Messages: []api.Message{sys("You write a product requirements document (PRD) as one sticky note of a Corkboard board, for a product team."), user("Request: x")}}, "note-ai-generate-prd"},
		{"OtherCommand", api.ChatRequest{Messages: []api.Message{sys("You write an epic as one sticky note of a Corkboard board, for a product team."), user("Request: x")}}, "note-ai-command"},
		{"AskAI", api.ChatRequest{Messages: []api.Message{sys("You write one sticky note of a Corkboard board: a clear, useful document"), user("Request: x")}}, "note-ai-ask"},
		{"TrackerChildren", api.ChatRequest{Messages: []api.Message{sys("You plan work for a product team"), user("## Task\nBreak this item down into items of type \"task\"")}, Format: format}, "tracker-generate-children"},
		{"TrackerStep", api.ChatRequest{Messages: []api.Message{sys("You plan work for a product team"), user("## Task\nGenerate new items of type \"story\".")}, Format: format}, "tracker-generate-step"},
		{"Unknown", api.ChatRequest{Messages: []api.Message{sys("You are a poet"), user("A poem")}}, ""},
		{"NoMessages", api.ChatRequest{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := aitest.RuleFor(rules, aitest.Call{N: 1, Request: tc.req}); got != tc.want {
				t.Errorf("rule = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReplies sends chat requests with the real ollama client and checks
// what comes back: a recording, a scripted HTTP error, a cut stream, and the
// loud 500 of a request no rule matches.
func TestReplies(t *testing.T) {
	srv := startFake(t, e2eScript)
	c := client(t, srv.URL)
	chat := func(system, user, model string) (string, error) {
		var text strings.Builder
		sawDone := false
		err := c.Chat(context.Background(), &api.ChatRequest{Model: model, Messages: []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}},
			func(r api.ChatResponse) error {
				text.WriteString(r.Message.Content)
				sawDone = sawDone || r.Done
				return nil
			})
		if err == nil && !sawDone {
			err = errors.New("stream ended without its done line")
		}
		return text.String(), err
	}
	cases := []struct {
		name, system, user, model string
		wantText, wantErr         string
	}{
		{"Recording", "You write a product requirements document (PRD)", "Request: login", "qwen3:4b", "TITLE: Passwordless login PRD\n---\n## Problem\n", ""},
		{"StatusRule", "You are the assistant of a Corkboard board", "FAKE-MODEL-404", "qwen3:4b", "", "model 'qwen3:4b' not found"},
		{"UnknownModel", "You are the assistant of a Corkboard board", "hi", "llama9:1b", "", "model 'llama9:1b' not found"},
		{"Cut", "You write one sticky note of a Corkboard board", "FAKE-CUT", "qwen3:4b", "TITLE: Cut answer\n---\nThe first part arrived", "stream ended without its done line"},
		{"ErrorLine", "You are the assistant of a Corkboard board", "FAKE-ERROR-MIDSTREAM", "qwen3:4b", "Let me look", "model runner has unexpectedly stopped"},
		{"NoRule", "You are a poet", "A poem about bolts", "qwen3:4b", "", `aitest: no rule matches chat request 6: system prompt "You are a poet", last user message "A poem about bolts", last role "user", 0 tools, format false`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, err := chat(tc.system, tc.user, tc.model)
			if !strings.HasPrefix(text, tc.wantText) {
				t.Errorf("text = %q, want it to start with %q", text, tc.wantText)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestLoadRulesErrors: a broken script fails when it is loaded, naming the
// rule, not when a browser test first needs it.
func TestLoadRulesErrors(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"NoRules", `{"rules": []}`, "no rules"},
		{"UnknownKey", `{"rules": [{"name": "a", "match": {"sytem": "x"}, "reply": {"text": ["x"]}}]}`, `unknown field "sytem"`},
		{"NoName", `{"rules": [{"reply": {"text": ["x"]}}]}`, "rule 1 has no name"},
		{"TwoReplies", `{"rules": [{"name": "a", "reply": {"text": ["x"], "file": "x.ndjson"}}]}`, `rule "a": reply needs exactly one of`},
		{"MissingFile", `{"rules": [{"name": "a", "reply": {"file": "nope.ndjson"}}]}`, `rule "a": aitest: read transcript`},
		{"StatusWithoutError", `{"rules": [{"name": "a", "reply": {"status": 404}}]}`, "needs an error message"},
		{"BadArgs", `{"rules": [{"name": "a", "reply": {"toolCalls": [{"name": "createNote", "args": [1]}]}}]}`, "args must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "script.json")
			if err := os.WriteFile(path, []byte(tc.script), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := aitest.LoadRules(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRunPrintsURL runs the command as main does and talks to the URL it
// prints.
func TestRunPrintsURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-script", e2eScript, "-models", "qwen3:4b, qwen3:8b"}, pw, io.Discard, nil)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "fake ollama listening on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	list, err := client(t, base).List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list.Models {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "qwen3:4b,qwen3:8b" {
		t.Errorf("models = %v", names)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), nil, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "-script is required") {
		t.Errorf("without -script: %v", err)
	}
}
