package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/aifeature"
)

// newAIEnv is the server with the real AI service on a fake Ollama, a
// clock stopped at billStart, and plenty of credits and requests for free
// users; opts come after, so they may change any of it.
func newAIEnv(tb testing.TB, opts ...option) *env {
	tb.Helper()
	return newEnv(tb, append([]option{withClock(billStart), withAI(), withPlans("free.credits=1000,free.rpm=1000")}, opts...)...)
}

// waitFor fails the test when ch is not closed within 10 seconds.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// gatedClient is an HTTP client for the AI service that holds back every
// Ollama answer after its first NDJSON line until release is closed.
func gatedClient(release <-chan struct{}) *http.Client {
	return &http.Client{Transport: &gatedTransport{base: http.DefaultTransport.(*http.Transport).Clone(), release: release}}
}

// gatedTransport hands the ollama client each /api/chat answer's first
// line at once and the rest only after release is closed: what reached the
// browser before that was streamed, not buffered.
type gatedTransport struct {
	base    http.RoundTripper
	release <-chan struct{}
}

func (g *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.base.RoundTrip(req)
	if err != nil || req.URL.Path != "/api/chat" {
		return resp, err
	}
	resp.Body = &gatedBody{body: resp.Body, br: bufio.NewReader(resp.Body), release: g.release, ctx: req.Context()}
	return resp, nil
}

type gatedBody struct {
	body      io.Closer
	br        *bufio.Reader
	release   <-chan struct{}
	ctx       context.Context
	first     []byte
	firstRead bool
	released  bool
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.firstRead {
		b.firstRead = true
		line, err := b.br.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		b.first = line
	}
	if len(b.first) > 0 {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	if !b.released {
		select {
		case <-b.release:
			b.released = true
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	return b.br.Read(p)
}

func (b *gatedBody) Close() error { return b.body.Close() }

// nextEvent reads one SSE event's data from a stream being received.
func nextEvent(br *bufio.Reader) (string, error) {
	var data string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return data, nil
		}
		data = strings.TrimPrefix(line, "data: ")
	}
}

// readUntilEvent reads events until one whose data contains want.
func readUntilEvent(t *testing.T, br *bufio.Reader, want string) {
	t.Helper()
	for {
		data, err := nextEvent(br)
		if err != nil {
			t.Fatalf("stream ended before an event with %q arrived: %v", want, err)
		}
		if strings.Contains(data, want) {
			return
		}
	}
}

// The test board: ada owns "b1" with two notes the requests mention.
const aiBoard = "b1"

var aiNotes = []map[string]any{
	{"id": "n1", "title": "Login", "content": "Users log in.", "color": "yellow", "type": "requirement", "x": 10, "y": 20},
	{"id": "n2", "title": "Magic link", "content": "Send a link by e-mail."},
}

func chatRequest(boardID string) map[string]any {
	return map[string]any{
		"id":         "chat-1",
		"trigger":    "submit-message",
		"boardId":    boardID,
		"messages":   []any{map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "Add a note about Go"}}}},
		"boardState": map[string]any{"name": "Launch", "notes": aiNotes},
		// Keys the server does not know (the AI SDK and apps add their own).
		"metadata": map[string]any{"client": "test"},
	}
}

func subagentRequest(boardID string) map[string]any {
	r := chatRequest(boardID)
	r["currentPhase"] = map[string]any{"id": "p1", "name": "Discovery", "description": "Understand the problem"}
	return r
}

func noteAIRequest(boardID string) map[string]any {
	return map[string]any{"boardId": boardID, "noteId": "n1", "prompt": "Write about login", "noteTitle": "Login", "noteContent": "We need a login.", "allNotes": aiNotes}
}

var trackerItem = map[string]any{"id": "s1", "key": "CB-2", "type": "story", "summary": "Log in", "description": "Users log in."}

const suggestionBlock = "```json\n" + `{"suggestions":[{"label":"Interview users","prompt":"Plan five interviews"},{"label":"Map the journey","prompt":"Sketch the journey"},{"label":"Collect metrics","prompt":"Which numbers matter?"}]}` + "\n```"

var (
	analysisAnswer = map[string]any{"suggestions": []any{map[string]any{
		"sectionText": "Users log in.", "advice": "Say how.",
		"actions": []any{map[string]any{"label": "Name the method", "instruction": "State the login method"}},
	}}}
	rewriteAnswer = map[string]any{"rewritten": "Users log in with a one-time code."}
)

// aiRoute is one AI endpoint with a valid request and a model answer to it.
type aiRoute struct {
	name  string
	path  string
	cost  int
	body  func(boardID string) map[string]any
	reply aitest.Reply
	// want is the exact JSON answer of a JSON endpoint (nil for streams).
	want any
}

func aiRoutes() []aiRoute {
	return []aiRoute{
		{name: "chat", path: "/api/canvas/chat", cost: 1, body: chatRequest,
			reply: aitest.Reply{Text: []string{"I'll add ", "a note."}, ToolCalls: []aitest.ToolCall{
				{ID: "call_ok", Name: "createNote", Args: `{"title":"Go","content":"Fast builds","color":"blue"}`},
				{ID: "call_bad", Name: "updateNote", Args: `{"id":"n1","title":7}`},
			}}},
		{name: "subagent", path: "/api/canvas/subagent", cost: 2, body: subagentRequest,
			reply: aitest.Text("Start by talking to users.\n\n", suggestionBlock)},
		{name: "note-ai", path: "/api/canvas/note-ai", cost: 2, body: noteAIRequest,
			reply: aitest.Text("TITLE: Login\n---\n", "Users log in with a code.")},
		{name: "note-ai-command", path: "/api/canvas/note-ai/generate-prd", cost: 2,
			body: func(id string) map[string]any {
				r := noteAIRequest(id)
				delete(r, "prompt") // a command works from the note alone
				return r
			},
			reply: aitest.Text("TITLE: Login PRD\n---\n", "## Problem\nUsers cannot log in.")},
		{name: "generate-frontmatter", path: "/api/canvas/generate-frontmatter", cost: 1,
			body: func(id string) map[string]any {
				return map[string]any{"boardId": id, "noteId": "n1", "title": "Login", "content": "Users log in.", "allNotes": aiNotes}
			},
			reply: aitest.JSON(map[string]any{"description": "How users log in.", "relationships": []any{
				map[string]any{"noteId": "n2", "type": "relates_to", "reason": "same flow"},
				map[string]any{"noteId": "n404", "type": "blocks", "reason": "invented"},
			}}),
			want: map[string]any{"description": "How users log in.", "relationships": []any{
				map[string]any{"noteId": "n2", "title": "Magic link", "type": "relates_to", "reason": "same flow"},
			}}},
		{name: "document-to-notes", path: "/api/canvas/document-to-notes", cost: 5,
			body: func(id string) map[string]any {
				return map[string]any{"boardId": id, "text": "# Login\nUsers log in with a code.", "filename": "login.md"}
			},
			reply: aitest.JSON(map[string]any{"notes": []any{map[string]any{"title": "Login", "content": "Users log in with a code.", "suggestedColor": "blue", "suggestedType": "requirement"}}}),
			want:  map[string]any{"notes": []any{map[string]any{"title": "Login", "content": "Users log in with a code.", "suggestedColor": "blue", "suggestedType": "requirement"}}}},
		{name: "notes-analyze", path: "/api/canvas/notes/analyze", cost: 2,
			body: func(id string) map[string]any {
				return map[string]any{"boardId": id, "noteId": "n1", "title": "Login", "content": "Users log in."}
			},
			reply: aitest.JSON(analysisAnswer), want: analysisAnswer},
		{name: "notes-rewrite", path: "/api/canvas/notes/rewrite", cost: 1,
			body: func(id string) map[string]any {
				return map[string]any{"boardId": id, "noteId": "n1", "content": "Users log in.", "instruction": "Say how."}
			},
			reply: aitest.JSON(rewriteAnswer), want: rewriteAnswer},
		{name: "tracker-generate", path: "/api/canvas/tracker/generate", cost: 3,
			body: func(id string) map[string]any {
				return map[string]any{"boardId": id, "mode": "generate_step", "step": "story",
					"items": []any{map[string]any{"id": "e1", "key": "CB-1", "type": "epic", "summary": "Accounts"}}}
			},
			reply: aitest.JSON(map[string]any{
				"items":               []any{map[string]any{"type": "task", "summary": "Log in with a code", "description": "AC", "parentId": "e1"}},
				"recommendedNextStep": map[string]any{"step": "task", "reason": "Break it down."},
			}),
			// generate_step sets the type the request asked for.
			want: map[string]any{
				"items":               []any{map[string]any{"type": "story", "summary": "Log in with a code", "description": "AC", "parentId": "e1"}},
				"recommendedNextStep": map[string]any{"step": "task", "reason": "Break it down."},
			}},
		{name: "tracker-analyze", path: "/api/canvas/tracker/analyze", cost: 2,
			body:  func(id string) map[string]any { return map[string]any{"boardId": id, "item": trackerItem} },
			reply: aitest.JSON(analysisAnswer), want: analysisAnswer},
		{name: "tracker-rewrite", path: "/api/canvas/tracker/rewrite", cost: 1,
			body: func(id string) map[string]any {
				return map[string]any{"boardId": id, "item": trackerItem, "field": "description", "instruction": "Say how."}
			},
			reply: aitest.JSON(rewriteAnswer), want: rewriteAnswer},
	}
}

// TestAIEndpoints calls every AI endpoint once through the whole stack and
// checks the content type and the shape of its answer, and that each call
// cost its credits.
func TestAIEndpoints(t *testing.T) {
	e := newAIEnv(t)
	ada := e.claim("ada@example.com", aiBoard)
	total := 0
	for _, rt := range aiRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			e.setScript(aitest.Always(rt.reply))
			before := e.calls()
			r := e.post(rt.path, ada, rt.body(aiBoard))
			if r.status != http.StatusOK {
				t.Fatalf("status=%d, want 200 (%s)", r.status, r.body)
			}
			switch rt.name {
			case "chat":
				checkChatAnswer(t, r)
			case "subagent":
				checkSubagentAnswer(t, r)
			case "note-ai", "note-ai-command":
				checkNoteAIAnswer(t, e, rt.name, r, before)
			default:
				checkJSONAnswer(t, r, rt.want)
			}
			if n := e.calls() - before; n != 1 {
				t.Errorf("model calls=%d, want 1", n)
			}
			total += rt.cost
			if got := e.used(ada); got != total {
				t.Errorf("used=%d after %s, want %d", got, rt.name, total)
			}
		})
	}
}

// checkChatAnswer checks the chat route's answer: an AI SDK UI message
// stream with the text, a tool call, and an invalid tool call as an error
// part.
func checkChatAnswer(t *testing.T, r answer) {
	t.Helper()
	ct := r.header.Get("Content-Type")
	if ct != "text/event-stream" || r.header.Get("X-Vercel-Ai-Ui-Message-Stream") != "v1" {
		t.Fatalf("Content-Type=%q, X-Vercel-Ai-Ui-Message-Stream=%q, want an AI SDK UI message stream", ct, r.header.Get("X-Vercel-Ai-Ui-Message-Stream"))
	}
	chunks := aitest.ParseUIStream(t, string(r.body))
	want := []string{"start", "start-step", "text-start", "text-delta", "text-delta", "text-end", "tool-input-available", "tool-input-error", "finish-step", "finish"}
	if got := aitest.ChunkTypes(chunks); !slices.Equal(got, want) {
		t.Fatalf("chunk types=%v, want %v", got, want)
	}
	if got := aitest.StreamText(chunks); got != "I'll add a note." {
		t.Errorf("text=%q", got)
	}
	ok, bad := chunks[6], chunks[7]
	if ok.Str("toolName") != "createNote" || !reflect.DeepEqual(ok["input"], map[string]any{"title": "Go", "content": "Fast builds", "color": "blue"}) {
		t.Errorf("createNote chunk=%v", ok)
	}
	// An invalid tool argument reaches the client as an error part with
	// what the model sent, not as a board change.
	if bad.Str("toolName") != "updateNote" || !strings.Contains(bad.Str("errorText"), "/title") ||
		!reflect.DeepEqual(bad["input"], map[string]any{"id": "n1", "title": float64(7)}) {
		t.Errorf("updateNote chunk=%v, want tool-input-error about /title", bad)
	}
}

// checkSubagentAnswer checks the subagent route's answer: a stream whose
// text ends with a block of three suggestions.
func checkSubagentAnswer(t *testing.T, r answer) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type=%q", ct)
	}
	text := aitest.StreamText(aitest.ParseUIStream(t, string(r.body)))
	if s, ok := ai.ParseSuggestions(text); !ok || len(s.Suggestions) != 3 || !strings.HasSuffix(text, "```") {
		t.Fatalf("answer %q does not end with a block of 3 suggestions", text)
	}
}

// checkNoteAIAnswer checks the note AI routes' plain-text answers, and
// that a command's own system prompt reached the model (call number
// before, counted from 0).
func checkNoteAIAnswer(t *testing.T, e *env, route string, r answer, before int) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Fatalf("Content-Type=%q, want text/plain; charset=utf-8", ct)
	}
	want := "TITLE: Login\n---\nUsers log in with a code."
	if route == "note-ai-command" {
		want = "TITLE: Login PRD\n---\n## Problem\nUsers cannot log in."
		sys := e.fake.Calls()[before].Request.Messages[0]
		if sys.Role != "system" || !strings.Contains(sys.Content, "product requirements document") {
			t.Errorf("system prompt=%q, want the PRD command's", sys.Content)
		}
	}
	if string(r.body) != want {
		t.Fatalf("body=%q, want %q", r.body, want)
	}
}

// checkJSONAnswer checks a JSON route's answer against want.
func checkJSONAnswer(t *testing.T, r answer, want any) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type=%q, want JSON", ct)
	}
	var got any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answer=%s, want %v", r.body, want)
	}
}

// TestAIStreamsFlushIncrementally: the first piece of an answer reaches the
// client while the model still holds back the rest, through every
// middleware (request log, quota gate, write deadlines).
func TestAIStreamsFlushIncrementally(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		body  func(string) map[string]any
		reply aitest.Reply
		first string // what must arrive before the rest is released
		whole func(t *testing.T, body []byte)
	}{
		{
			name: "UIMessageStream", path: "/api/canvas/chat", body: chatRequest,
			reply: aitest.Text("Hello", " world"),
			first: `"delta":"Hello"`,
			whole: func(t *testing.T, body []byte) {
				if got := aitest.StreamText(aitest.ParseUIStream(t, string(body))); got != "Hello world" {
					t.Fatalf("text=%q", got)
				}
			},
		},
		{
			name: "TextStream", path: "/api/canvas/note-ai", body: noteAIRequest,
			reply: aitest.Text("TITLE: Plan\n---\nFirst line.\n", "Second line."),
			first: "First line.",
			whole: func(t *testing.T, body []byte) {
				if want := "TITLE: Plan\n---\nFirst line.\nSecond line."; string(body) != want {
					t.Fatalf("body=%q, want %q", body, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			e := newAIEnv(t, withAIClient(gatedClient(release)))
			ada := e.claim("ada@example.com", aiBoard)
			e.setScript(aitest.Always(tt.reply))

			// A buffered answer would never show its first piece: the
			// deadline turns that into a failure instead of a hang.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			resp, err := http.DefaultClient.Do(e.newRequest(ctx, "POST", e.srv.URL+tt.path, ada, tt.body(aiBoard)))
			if err != nil {
				t.Fatalf("no answer while the model holds back the rest (headers buffered?): %v", err)
			}
			defer resp.Body.Close()
			var got []byte
			buf := make([]byte, 4096)
			for !bytes.Contains(got, []byte(tt.first)) {
				n, err := resp.Body.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					t.Fatalf("the first piece %q did not arrive before the rest was released (got %q): %v", tt.first, got, err)
				}
			}
			close(release)
			rest, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			tt.whole(t, append(got, rest...))
		})
	}
}

// TestAIClientDisconnect: a client that goes away cancels the model call.
// Once the answer has begun the call stays charged; before, it is refunded.
func TestAIClientDisconnect(t *testing.T) {
	t.Run("MidStream", func(t *testing.T) {
		e := newAIEnv(t)
		ada := e.claim("ada@example.com", aiBoard)
		e.setScript(aitest.Always(aitest.Reply{Text: []string{"Hel"}, Hang: true}))
		served := e.whenServed("/api/canvas/chat")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp, err := http.DefaultClient.Do(e.newRequest(ctx, "POST", e.srv.URL+"/api/canvas/chat", ada, chatRequest(aiBoard)))
		if err != nil {
			t.Fatal(err)
		}
		readUntilEvent(t, bufio.NewReader(resp.Body), `"delta":"Hel"`)
		cancel()
		resp.Body.Close()
		waitFor(t, e.fake.Cancelled(), "the model call to be cancelled")
		waitFor(t, served, "the handler to return")
		if got := e.used(ada); got != 1 {
			t.Fatalf("used=%d, want 1: an answer that began stays charged", got)
		}
	})
	t.Run("BeforeFirstByte", func(t *testing.T) {
		e := newAIEnv(t)
		ada := e.claim("ada@example.com", aiBoard)
		called := make(chan struct{})
		var once sync.Once
		e.setScript(func(aitest.Call) aitest.Reply {
			once.Do(func() { close(called) })
			return aitest.Reply{Hang: true}
		})
		served := e.whenServed("/api/canvas/note-ai")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(e.newRequest(ctx, "POST", e.srv.URL+"/api/canvas/note-ai", ada, noteAIRequest(aiBoard)))
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		waitFor(t, called, "the model call")
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("request error=%v, want context.Canceled", err)
		}
		waitFor(t, e.fake.Cancelled(), "the model call to be cancelled")
		waitFor(t, served, "the handler to return")
		if got := e.used(ada); got != 0 {
			t.Fatalf("used=%d, want 0: nothing was answered", got)
		}
	})
}

// TestAINoteAIStepLimit: a model that keeps calling tools gets at most six
// calls, the last one without tools, and its answer then is the note.
func TestAINoteAIStepLimit(t *testing.T) {
	e := newAIEnv(t)
	ada := e.claim("ada@example.com", aiBoard)
	e.setScript(func(c aitest.Call) aitest.Reply {
		if len(c.Request.Tools) > 0 {
			return aitest.Calls(aitest.ToolCall{Name: "searchNotes", Args: `{"query":"login"}`})
		}
		return aitest.Text("TITLE: Done\n---\nWritten at last.")
	})
	r := e.post("/api/canvas/note-ai", ada, noteAIRequest(aiBoard))
	if r.status != http.StatusOK || string(r.body) != "TITLE: Done\n---\nWritten at last." {
		t.Fatalf("%d %q, want the note written at the last step", r.status, r.body)
	}
	calls := e.fake.Calls()
	if len(calls) != ai.MaxSteps || ai.MaxSteps != 6 {
		t.Fatalf("model calls=%d, want 6", len(calls))
	}
	for i, c := range calls {
		if hasTools := len(c.Request.Tools) > 0; hasTools != (i < 5) {
			t.Errorf("call %d declares tools=%v", i+1, hasTools)
		}
	}
	// The whole loop is one request: charged once.
	if got, want := e.used(ada), featureCost(t, aifeature.NoteAI); got != want {
		t.Fatalf("used=%d, want %d", got, want)
	}
}

// TestAIStructuredRetry: a model that answers invalid JSON is asked once
// more; a second invalid answer is 502 and the credits come back.
func TestAIStructuredRetry(t *testing.T) {
	valid := aitest.JSON(map[string]any{"notes": []any{map[string]any{"title": "Login", "content": "Codes.", "suggestedColor": "blue", "suggestedType": "note"}}})
	body := map[string]any{"text": "Users log in with codes."}
	e := newAIEnv(t)
	ada := e.login("ada@example.com")

	e.setScript(aitest.Seq(aitest.JSON(`{"notes": [`), valid))
	r := e.post("/api/canvas/document-to-notes", ada, body)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"title":"Login"`) {
		t.Fatalf("bad then good: %d %s, want 200 with the notes", r.status, r.body)
	}
	if n := e.calls(); n != 2 {
		t.Fatalf("model calls=%d, want 2", n)
	}

	e.setScript(aitest.Always(aitest.JSON(`{"notes": []}`)))
	r = e.post("/api/canvas/document-to-notes", ada, body)
	if r.status != http.StatusBadGateway || !strings.Contains(r.object(t)["error"].(string), "invalid output twice") {
		t.Fatalf("bad twice: %d %s, want 502 saying so", r.status, r.body)
	}
	if got := e.used(ada); got != 5 {
		t.Fatalf("used=%d, want 5: the failed call must be refunded", got)
	}
}

// TestAIBadRequests: bodies the route refuses are 400 or 413, reach no
// model and cost nothing.
func TestAIBadRequests(t *testing.T) {
	e := newAIEnv(t)
	ada := e.claim("ada@example.com", aiBoard)
	noPrompt := noteAIRequest(aiBoard)
	delete(noPrompt, "prompt")
	stringPhase := subagentRequest(aiBoard)
	stringPhase["currentPhase"] = 7
	withStructure := func(key string, rows []any) map[string]any {
		r := chatRequest(aiBoard)
		r["boardState"] = map[string]any{"notes": aiNotes, key: rows}
		return r
	}
	conn := map[string]any{"id": "c1", "from": "n1", "to": "n2"}
	tests := []struct {
		name   string
		path   string
		body   any
		status int
		field  string
	}{
		{"ErrNotJSON", "/api/canvas/chat", `{"boardId":`, http.StatusBadRequest, ""},
		{"ErrWrongType", "/api/canvas/chat", `{"boardId":"b1","messages":"hi"}`, http.StatusBadRequest, "messages"},
		{"ErrNoMessages", "/api/canvas/chat", map[string]any{"boardId": aiBoard, "messages": []any{}}, http.StatusBadRequest, "messages"},
		{"ErrNoBoardID", "/api/canvas/chat", map[string]any{"messages": chatRequest("")["messages"]}, http.StatusBadRequest, "boardId"},
		{"ErrBadPhase", "/api/canvas/subagent", stringPhase, http.StatusBadRequest, "currentPhase"},
		{"ErrNoPrompt", "/api/canvas/note-ai", noPrompt, http.StatusBadRequest, "prompt"},
		{"ErrTrackerMode", "/api/canvas/tracker/generate", map[string]any{"boardId": aiBoard, "mode": "everything"}, http.StatusBadRequest, "mode"},
		{"ErrTooLarge", "/api/canvas/chat", `{"boardId":"b1","pad":"` + strings.Repeat("x", 8<<20) + `"}`, http.StatusRequestEntityTooLarge, ""},
		{"ErrTooManyConnectors", "/api/canvas/chat", withStructure("connectors", slices.Repeat([]any{conn}, ai.MaxBoardConnectors+1)), http.StatusBadRequest, "boardState.connectors"},
		{"ErrBadConnector", "/api/canvas/chat", withStructure("connectors", []any{map[string]any{"id": "c1", "from": "n1", "to": "n1"}}), http.StatusBadRequest, "boardState.connectors[0].to"},
		{"ErrBadFrame", "/api/canvas/chat", withStructure("frames", []any{map[string]any{"id": "f1", "w": 10, "h": 10}}), http.StatusBadRequest, "boardState.frames[0].w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post(tt.path, ada, tt.body)
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			if got := r.object(t)["field"]; tt.field != "" && got != tt.field {
				t.Errorf("field=%v, want %s (%s)", got, tt.field, r.body)
			}
		})
	}
	if n := e.calls(); n != 0 {
		t.Errorf("model calls=%d, want 0", n)
	}
	if got := e.used(ada); got != 0 {
		t.Errorf("used=%d, want 0", got)
	}

	// A string phase is as good as an object; null means none.
	for _, phase := range []any{"Discovery", nil} {
		e.setScript(aitest.Always(aitest.Text("Fine.\n\n", suggestionBlock)))
		body := subagentRequest(aiBoard)
		body["currentPhase"] = phase
		if r := e.post("/api/canvas/subagent", ada, body); r.status != http.StatusOK {
			t.Fatalf("currentPhase %v: %d %s", phase, r.status, r.body)
		}
	}
}

// TestAIUnknownCommand: an unknown note-ai command is 400 listing the
// commands, charges nothing and takes no rate-limit token.
func TestAIUnknownCommand(t *testing.T) {
	e := newAIEnv(t, withPlans("free.credits=1000,free.rpm=1"))
	ada := e.claim("ada@example.com", aiBoard)
	for range 2 {
		r := e.post("/api/canvas/note-ai/generate-poem", ada, noteAIRequest(aiBoard))
		if r.status != http.StatusBadRequest {
			t.Fatalf("status=%d, want 400 (%s)", r.status, r.body)
		}
		got := r.object(t)
		if k := keys(got); !slices.Equal(k, []string{"commands", "error", "field"}) {
			t.Fatalf("keys=%v, want commands, error, field", k)
		}
		var cmds []string
		for _, c := range got["commands"].([]any) {
			cmds = append(cmds, c.(string))
		}
		want := []string{"generate-decision", "generate-dev-task", "generate-epic", "generate-feedback", "generate-prd", "generate-qa-test", "generate-story"}
		if !slices.Equal(cmds, want) || got["field"] != "command" {
			t.Fatalf("commands=%v field=%v, want %v", cmds, got["field"], want)
		}
		if msg := got["error"].(string); !strings.Contains(msg, `"generate-poem"`) || !strings.Contains(msg, "generate-prd") {
			t.Errorf("error=%q, want the command and the list", msg)
		}
	}
	// The plan allows one request a minute: it is still there.
	e.setScript(aitest.Always(aitest.Text("TITLE: Story\n---\nAs a user…")))
	if r := e.post("/api/canvas/note-ai/generate-story", ada, noteAIRequest(aiBoard)); r.status != http.StatusOK {
		t.Fatalf("a known command after unknown ones: %d %s", r.status, r.body)
	}
	if got := e.used(ada); got != 2 {
		t.Fatalf("used=%d, want 2 (only the known command)", got)
	}
}

// TestAIWriteTimeout: AI answers outlive the server's WriteTimeout, which
// still cuts other routes (the control).
func TestAIWriteTimeout(t *testing.T) {
	e := newAIEnv(t)
	// A second listener for the same server, whose WriteTimeout has run
	// out before any handler starts.
	tight := httptest.NewUnstartedServer(e.handler)
	tight.Config.WriteTimeout = time.Nanosecond
	tight.Start()
	t.Cleanup(tight.Close)
	ada := e.claim("ada@example.com", aiBoard)
	post := func(path string, body any) (int, []byte, error) {
		resp, err := http.DefaultClient.Do(e.newRequest(context.Background(), "POST", tight.URL+path, ada, body))
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, data, err
	}
	resp, err := http.DefaultClient.Do(e.newRequest(context.Background(), "GET", tight.URL+"/api/me/usage", ada, nil))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("GET /api/me/usage answered on the tight listener: the test's WriteTimeout is not in force")
	}

	e.setScript(aitest.Always(aitest.Text("Still ", "here.")))
	status, body, err := post("/api/canvas/chat", chatRequest(aiBoard))
	if err != nil || status != http.StatusOK {
		t.Fatalf("chat: %d %v", status, err)
	}
	if got := aitest.StreamText(aitest.ParseUIStream(t, string(body))); got != "Still here." {
		t.Fatalf("chat text=%q", got)
	}
	e.setScript(aitest.Always(aitest.JSON(rewriteAnswer)))
	status, body, err = post("/api/canvas/notes/rewrite", map[string]any{"boardId": aiBoard, "content": "x", "instruction": "y"})
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), "one-time code") {
		t.Fatalf("notes/rewrite: %d %s %v", status, body, err)
	}
	// Errors too: a 400 is written after the deadline was lifted.
	status, body, err = post("/api/canvas/chat", `{}`)
	if err != nil || status != http.StatusBadRequest {
		t.Fatalf("bad chat: %d %s %v", status, body, err)
	}
}
