package transport_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/ai/aitest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden answers in testdata/ai-golden/")

// ndjsonLine is one line of a scripted Ollama answer, for replies whose
// order the aitest builders cannot express (text after a tool call).
func ndjsonLine(msg string) string {
	return `{"model":"qwen3:4b","created_at":"2026-01-05T09:00:00Z","message":{"role":"assistant",` + msg + `},"done":false}`
}

const ndjsonDone = `{"model":"qwen3:4b","created_at":"2026-01-05T09:00:01Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":100,"eval_count":20}`

// goldenCase is one AI request whose whole answer is compared with a file.
type goldenCase struct {
	name   string
	path   string
	body   map[string]any
	script aitest.Script
}

func goldenCases(t *testing.T) []goldenCase {
	transcript := func(name string) aitest.Script {
		return aitest.Always(aitest.Transcript(t, filepath.Join("..", "ai", "testdata", name)))
	}
	noteCommand := func(id string) map[string]any {
		r := noteAIRequest(id)
		delete(r, "prompt")
		return r
	}
	cases := []goldenCase{
		// Recorded Ollama transcripts.
		{"chat-transcript-text", "/api/canvas/chat", chatRequest(aiBoard), transcript("chat-text.ndjson")},
		{"chat-transcript-tool-call", "/api/canvas/chat", chatRequest(aiBoard), transcript("chat-tool-call.ndjson")},
		{"chat-transcript-error-midstream", "/api/canvas/chat", chatRequest(aiBoard), transcript("error-midstream.ndjson")},
		{"note-ai-transcript", "/api/canvas/note-ai", noteAIRequest(aiBoard), transcript("note-ai-answer.ndjson")},
		{"note-ai-command-transcript", "/api/canvas/note-ai/generate-prd", noteCommand(aiBoard), transcript("note-ai-answer.ndjson")},

		// Every part transition of a UI message stream: reasoning, text,
		// tool calls (valid, repaired, invalid, unknown, without an id),
		// text after a tool call, reasoning after text.
		{"chat-parts", "/api/canvas/chat", chatRequest(aiBoard), aitest.Always(aitest.Reply{Lines: []string{
			ndjsonLine(`"content":"","thinking":"The user wants"`),
			ndjsonLine(`"content":"","thinking":" a note."`),
			ndjsonLine(`"content":"I'll add "`),
			ndjsonLine(`"content":"a note."`),
			ndjsonLine(`"content":"","tool_calls":[{"id":"call_ok","function":{"index":0,"name":"createNote","arguments":{"title":"Go","content":"Fast builds","color":"red","mood":"happy"}}}]`),
			ndjsonLine(`"content":"","tool_calls":[{"id":"call_bad","function":{"index":1,"name":"updateNote","arguments":{"id":"n1","title":7}}},{"function":{"index":2,"name":"launchRocket","arguments":{}}}]`),
			ndjsonLine(`"content":"Done: \"Go\" <added> \u2713\nNext?"`),
			ndjsonLine(`"content":"","thinking":"Anything else?"`),
			ndjsonLine(`"content":"","tool_calls":[{"function":{"index":3,"name":"deleteNote","arguments":{"id":"n2"}}}]`),
			ndjsonDone,
		}})},
		{"chat-only-done", "/api/canvas/chat", chatRequest(aiBoard), aitest.Always(aitest.Reply{Lines: []string{ndjsonDone}})},
		{"chat-cut", "/api/canvas/chat", chatRequest(aiBoard), aitest.Always(aitest.Reply{Text: []string{"Half an"}, Cut: true})},
		{"chat-error-line-first", "/api/canvas/chat", chatRequest(aiBoard), aitest.Always(aitest.Reply{ErrorLine: "out of memory"})},
		{"chat-upstream-500", "/api/canvas/chat", chatRequest(aiBoard), aitest.Always(aitest.Reply{Status: 500, Error: "boom"})},
		{"chat-no-tools", "/api/canvas/chat", chatRequest(aiBoard), aitest.Always(aitest.Reply{Status: 400, Error: "registry.ollama.ai/library/gemma:2b does not support tools"})},

		// The subagent's suggestion block: in the answer, asked for again,
		// synthesised.
		{"subagent-block", "/api/canvas/subagent", subagentRequest(aiBoard), aitest.Always(aitest.Text("Start by talking to users.\n\n", suggestionBlock))},
		{"subagent-reasked", "/api/canvas/subagent", subagentRequest(aiBoard), aitest.Seq(
			aitest.Calls(aitest.ToolCall{ID: "call_1", Name: "createPlaceholderNote", Args: `{"title":"Risks"}`}),
			aitest.JSON(`{"suggestions":[{"label":"a","prompt":"b"},{"label":"c","prompt":"d"},{"label":"e","prompt":"f"}]}`),
		)},
		{"subagent-synthesised", "/api/canvas/subagent", subagentRequest(aiBoard), aitest.Seq(
			aitest.Text("Talk to users first."),
			aitest.JSON(`not json`),
		)},
		{"subagent-reask-fails-upstream", "/api/canvas/subagent", subagentRequest(aiBoard), aitest.Seq(
			aitest.Text("Talk to users first."),
			aitest.Reply{Status: 500, Error: "boom"},
		)},
		{"subagent-error-midstream", "/api/canvas/subagent", subagentRequest(aiBoard), aitest.Always(aitest.Reply{Text: []string{"Let me"}, ErrorLine: "model crashed"})},

		// note-ai: the tool loop, repairs, errors before and after the
		// first byte.
		{"note-ai-tool-loop", "/api/canvas/note-ai", noteAIRequest(aiBoard), aitest.Seq(
			aitest.Reply{Text: []string{"Let me look around."}, ToolCalls: []aitest.ToolCall{
				{ID: "c1", Name: "searchNotes", Args: `{"query":"login"}`},
				{ID: "c2", Name: "readNote", Args: `{"id":"n2"}`},
			}},
			aitest.Text("TITLE: Login PRD\n", "---\n", "Links by e-mail."),
		)},
		{"note-ai-heading", "/api/canvas/note-ai", noteAIRequest(aiBoard), aitest.Always(aitest.Text("# Login flow\n\nStep one."))},
		{"note-ai-error-midstream", "/api/canvas/note-ai", noteAIRequest(aiBoard), aitest.Always(aitest.Reply{Text: []string{"TITLE: A\n---\n", "Body so far"}, ErrorLine: "model crashed"})},
		{"note-ai-upstream-500", "/api/canvas/note-ai", noteAIRequest(aiBoard), aitest.Always(aitest.Reply{Status: 500, Error: "boom"})},
		// A command's stream cut before Ollama's done line: the body is cut
		// too, after the text that arrived.
		{"note-ai-command-cut", "/api/canvas/note-ai/generate-prd", noteAIRequest(aiBoard), aitest.Always(aitest.Reply{Text: []string{"TITLE: A\n---\n", "Body so far"}, Cut: true})},
		{"note-ai-empty", "/api/canvas/note-ai", noteAIRequest(aiBoard), aitest.Always(aitest.Text(""))},
	}
	// The JSON endpoints, each with its usual answer.
	for _, rt := range aiRoutes() {
		if rt.want != nil {
			cases = append(cases, goldenCase{rt.name, rt.path, rt.body(aiBoard), aitest.Always(rt.reply)})
		}
	}
	return cases
}

// goldenHeaders are the response headers a golden answer records.
var goldenHeaders = []string{"Content-Type", "Cache-Control", "Connection", "X-Vercel-Ai-Ui-Message-Stream", "X-Accel-Buffering", "X-Content-Type-Options"}

// TestAIAnswersGolden records the complete answer of every AI endpoint to
// scripted and recorded Ollama answers (status, the stream headers, the
// body byte for byte, and whether the call stayed charged) and compares it
// with testdata/ai-golden/. The ids the server makes up are counted, so
// nothing is masked. go test ./transport -run TestAIAnswersGolden -update
// rewrites the files.
func TestAIAnswersGolden(t *testing.T) {
	e := newAIEnv(t, withCountedAIIDs())
	ada := e.claim("ada@example.com", aiBoard)
	for _, tc := range goldenCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			// Number this case's model calls from 1, whatever ran before.
			base := e.calls()
			e.setScript(func(c aitest.Call) aitest.Reply {
				c.N -= base
				return tc.script(c)
			})
			e.aiIDs.Store(0)
			before := e.used(ada)
			served := e.whenServed(tc.path)
			res, err := e.srv.Client().Do(e.newRequest(context.Background(), "POST", e.srv.URL+tc.path, ada, tc.body))
			if err != nil {
				t.Fatal(err)
			}
			body, readErr := io.ReadAll(res.Body)
			res.Body.Close()
			waitFor(t, served, "the handler to return") // refunds happen as it returns
			var b bytes.Buffer
			fmt.Fprintf(&b, "status: %d\n", res.StatusCode)
			for _, h := range goldenHeaders {
				if v := res.Header.Values(h); len(v) > 0 {
					fmt.Fprintf(&b, "%s: %s\n", h, strings.Join(v, ", "))
				}
			}
			fmt.Fprintf(&b, "credits charged: %d\n", e.used(ada)-before)
			// A cut answer (a text stream failing after its first byte)
			// says so: the body read fails after what arrived.
			if readErr != nil {
				fmt.Fprintf(&b, "body cut: %v\n", readErr)
			}
			b.WriteString("\n")
			b.Write(body)

			file := filepath.Join("testdata", "ai-golden", tc.name+".txt")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to record it)", err)
			}
			if got := b.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("answer differs from %s\n--- got:\n%s\n--- want:\n%s", file, got, want)
			}
		})
	}
}
