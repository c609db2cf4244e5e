// Package aitest is a fake Ollama for tests: an httptest.Server that speaks
// GET /api/tags and POST /api/chat, answers each chat request with a
// scripted Reply (streamed as NDJSON, one flushed line per chunk, tool calls
// included), records every request, and can misbehave the ways a real
// Ollama does: an unknown model (404), an error line inside a 200 stream, a
// stream cut before its done line, and a stream that hangs until the client
// goes away. NewServer builds one without a testing.TB, and LoadRules reads
// a JSON script of rules (the corkboard-fakeollama command's, for the
// browser tests; docs/ai.md).
package aitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// Call is one chat request the fake received: N counts from 1.
type Call struct {
	N       int
	Request api.ChatRequest
}

// Streamed reports whether the client asked for a streamed answer (the
// default).
func (c Call) Streamed() bool {
	return c.Request.Stream == nil || *c.Request.Stream
}

// Script chooses the reply to a call.
type Script func(c Call) Reply

// ToolCall is a scripted tool call; Args is its arguments as raw JSON.
type ToolCall struct {
	ID   string
	Name string
	Args string
}

// Reply is what the fake answers to one chat request. When Lines is set it
// is replayed verbatim (a recorded transcript); otherwise the answer is
// built from Text, Thinking and ToolCalls: one NDJSON line per text chunk,
// one per tool call, then the done line — or, for a request with
// "stream": false, one line holding the whole message.
type Reply struct {
	// Status, when not 0 or 200, answers with that status and
	// {"error": Error}.
	Status int
	Error  string

	Text      []string
	Thinking  []string
	ToolCalls []ToolCall
	// DoneReason is the done line's done_reason; "" means "stop".
	DoneReason string

	// ErrorLine, when set, is sent as an {"error": …} line after the
	// chunks, in place of the done line (HTTP status stays 200).
	ErrorLine string
	// Cut ends the answer after the chunks without a done line.
	Cut bool
	// Hang sends the chunks, then waits until the client goes away.
	Hang bool
	// Gate, when set, makes the reply wait after its chunks until the
	// gate of that name is released (Server.Release, or POST
	// /fake/gates/{name}), and only then cut or finish the answer: a test
	// sees the chunks arrive before what follows them happens.
	Gate string

	// Lines are raw NDJSON lines replayed as they are.
	Lines []string
}

// Text returns a reply streaming the given chunks of text.
func Text(chunks ...string) Reply { return Reply{Text: chunks} }

// Calls returns a reply making the given tool calls.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// JSON returns a reply whose text is v encoded as JSON, or v itself when it
// is a string (for invalid JSON).
func JSON(v any) Reply {
	if s, ok := v.(string); ok {
		return Reply{Text: []string{s}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return Reply{Text: []string{string(b)}}
}

// Seq answers the n-th call with replies[n-1], and later calls with an
// HTTP 500 so that a test sees unexpected extra calls.
func Seq(replies ...Reply) Script {
	return func(c Call) Reply {
		if c.N <= len(replies) {
			return replies[c.N-1]
		}
		return Reply{Status: http.StatusInternalServerError, Error: fmt.Sprintf("aitest: no reply scripted for call %d", c.N)}
	}
}

// Always answers every call with r.
func Always(r Reply) Script { return func(Call) Reply { return r } }

// Transcript reads an NDJSON file (one JSON object per line) into a Reply
// that replays it.
func Transcript(tb testing.TB, path string) Reply {
	tb.Helper()
	r, err := ReadTranscript(path)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// ReadTranscript is Transcript for code without a testing.TB (the
// corkboard-fakeollama command).
func ReadTranscript(path string) (Reply, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Reply{}, fmt.Errorf("aitest: read transcript: %w", err)
	}
	var lines []string
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); l != "" {
			if !json.Valid([]byte(l)) {
				return Reply{}, fmt.Errorf("aitest: %s: invalid JSON line %q", path, l)
			}
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return Reply{}, fmt.Errorf("aitest: %s: no lines", path)
	}
	return Reply{Lines: lines}, nil
}

// Server is the fake Ollama. Its URL is the base URL to configure.
type Server struct {
	URL string

	srv    *httptest.Server
	models []string
	script Script

	mu        sync.Mutex
	calls     []Call
	gates     map[string]chan struct{}
	cancelled chan struct{}
	once      sync.Once
}

// Option configures a Server.
type Option func(*Server)

// WithModels sets the models the fake has (default "qwen3:4b"). A chat
// request for any other model gets 404 "model not found".
func WithModels(names ...string) Option {
	return func(s *Server) { s.models = names }
}

// New starts a fake Ollama answering chat requests with script; it is
// closed when the test ends.
func New(tb testing.TB, script Script, opts ...Option) *Server {
	tb.Helper()
	s := NewServer(script, opts...)
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a fake Ollama on a free port of 127.0.0.1 answering chat
// requests with script, for code without a testing.TB (the
// corkboard-fakeollama command); Close stops it.
func NewServer(script Script, opts ...Option) *Server {
	s := &Server{models: []string{"qwen3:4b"}, script: script, cancelled: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", s.tags)
	mux.HandleFunc("POST /api/chat", s.chat)
	mux.HandleFunc("POST /fake/gates/{name}", func(w http.ResponseWriter, r *http.Request) {
		s.Release(r.PathValue("name"))
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// gate returns the channel of the named gate; each release puts one token
// in it, so a release that comes before the wait is not lost.
func (s *Server) gate(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = map[string]chan struct{}{}
	}
	g, ok := s.gates[name]
	if !ok {
		g = make(chan struct{}, 64)
		s.gates[name] = g
	}
	return g
}

// Release lets one reply waiting at (or next arriving at) the named gate
// go on.
func (s *Server) Release(name string) {
	select {
	case s.gate(name) <- struct{}{}:
	default: // 64 releases nobody waited for: a test bug, not worth blocking
	}
}

// Close stops the server, waiting for the requests in flight.
func (s *Server) Close() { s.srv.Close() }

// Calls returns every chat request received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Requests returns the bodies of every chat request received so far.
func (s *Server) Requests() []api.ChatRequest {
	calls := s.Calls()
	out := make([]api.ChatRequest, len(calls))
	for i, c := range calls {
		out[i] = c.Request
	}
	return out
}

// Cancelled is closed when a hanging reply saw its client go away.
func (s *Server) Cancelled() <-chan struct{} { return s.cancelled }

func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	var list api.ListResponse
	for _, m := range s.models {
		list.Models = append(list.Models, api.ListModelResponse{Name: m, Model: m, ModifiedAt: time.Unix(1767225600, 0).UTC(), Size: 2_600_000_000})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	s.mu.Lock()
	call := Call{N: len(s.calls) + 1, Request: req}
	s.calls = append(s.calls, call)
	s.mu.Unlock()

	if !slices.Contains(s.models, req.Model) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
		return
	}
	reply := s.script(call)
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeJSON(w, reply.Status, map[string]string{"error": reply.Error})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	out := ndjson{w: w, rc: http.NewResponseController(w)}
	var finished bool
	switch {
	case reply.Lines != nil:
		for _, l := range reply.Lines {
			out.raw(l)
		}
		finished = true
	case !call.Streamed():
		finished = s.answerWhole(r, out, req.Model, reply)
	default:
		finished = s.answerChunks(r, out, req.Model, reply)
	}
	if !finished {
		return
	}
	if reply.ErrorLine != "" {
		out.line(map[string]string{"error": reply.ErrorLine})
	}
	if reply.Hang {
		<-r.Context().Done()
		s.once.Do(func() { close(s.cancelled) })
	}
}

// ndjson writes an answer one line at a time, each flushed at once so the
// client sees it arrive.
type ndjson struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// line writes v as one JSON line.
func (o ndjson) line(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	o.raw(string(b))
}

// raw writes l as it is, and a newline.
func (o ndjson) raw(l string) {
	o.w.Write([]byte(l + "\n"))
	o.rc.Flush()
}

// answerWhole answers a request with stream=false: the whole message in
// one done line, after the gate. It reports false when the answer ends
// here (the client went away, or the reply is cut).
func (s *Server) answerWhole(r *http.Request, out ndjson, model string, reply Reply) bool {
	if !s.waitGate(r, reply.Gate) || reply.Cut {
		return false
	}
	if !reply.Hang && reply.ErrorLine == "" {
		msg := message(strings.Join(reply.Text, ""), strings.Join(reply.Thinking, ""), reply.ToolCalls)
		out.line(done(model, msg, reply.DoneReason))
	}
	return true
}

// answerChunks streams the reply's thinking, text and tool calls one chunk
// a line, then, after the gate, the done line unless the reply is cut,
// hangs or ends in an error line. It reports false when the client went
// away at the gate.
func (s *Server) answerChunks(r *http.Request, out ndjson, model string, reply Reply) bool {
	for _, t := range reply.Thinking {
		out.line(chunk(model, api.Message{Role: "assistant", Thinking: t}))
	}
	for _, t := range reply.Text {
		out.line(chunk(model, api.Message{Role: "assistant", Content: t}))
	}
	for i, tc := range reply.ToolCalls {
		m := message("", "", []ToolCall{tc})
		m.ToolCalls[0].Function.Index = i
		out.line(chunk(model, m))
	}
	if !s.waitGate(r, reply.Gate) {
		return false
	}
	if !reply.Cut && !reply.Hang && reply.ErrorLine == "" {
		out.line(done(model, api.Message{Role: "assistant"}, reply.DoneReason))
	}
	return true
}

// waitGate waits at the reply's gate, if any; false when the client went
// away meanwhile.
func (s *Server) waitGate(r *http.Request, name string) bool {
	if name == "" {
		return true
	}
	select {
	case <-s.gate(name):
		return true
	case <-r.Context().Done():
		return false
	}
}

func message(text, thinking string, calls []ToolCall) api.Message {
	m := api.Message{Role: "assistant", Content: text, Thinking: thinking}
	for i, tc := range calls {
		args := api.NewToolCallFunctionArguments()
		if err := json.Unmarshal([]byte(cmpOr(tc.Args, "{}")), &args); err != nil {
			panic(fmt.Sprintf("aitest: tool call %s: args are not a JSON object: %v", tc.Name, err))
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%s", i, tc.Name)
		}
		m.ToolCalls = append(m.ToolCalls, api.ToolCall{ID: id, Function: api.ToolCallFunction{Index: i, Name: tc.Name, Arguments: args}})
	}
	return m
}

var created = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func chunk(model string, m api.Message) api.ChatResponse {
	return api.ChatResponse{Model: model, CreatedAt: created, Message: m}
}

func done(model string, m api.Message, reason string) api.ChatResponse {
	if reason == "" {
		reason = "stop"
	}
	return api.ChatResponse{Model: model, CreatedAt: created, Message: m, Done: true, DoneReason: reason,
		Metrics: api.Metrics{PromptEvalCount: 100, EvalCount: 20, TotalDuration: time.Second}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
