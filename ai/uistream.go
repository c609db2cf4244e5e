package ai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tmaxmax/go-sse"
)

// A UI message stream chunk, one struct per chunk type so that each carries
// exactly the fields ai-protocols.md §1 lists (ai 5.0.x rejects extra keys;
// input must be present even when null).
type (
	chunkStart struct {
		Type      string `json:"type"`
		MessageID string `json:"messageId,omitempty"`
	}
	chunkBare struct {
		Type string `json:"type"`
	}
	chunkID struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	chunkDelta struct {
		Type  string `json:"type"`
		ID    string `json:"id"`
		Delta string `json:"delta"`
	}
	chunkToolInput struct {
		Type       string          `json:"type"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Input      json.RawMessage `json:"input"`
	}
	chunkToolInputError struct {
		Type       string          `json:"type"`
		ToolCallID string          `json:"toolCallId"`
		ToolName   string          `json:"toolName"`
		Input      json.RawMessage `json:"input"`
		ErrorText  string          `json:"errorText"`
	}
	chunkError struct {
		Type      string `json:"type"`
		ErrorText string `json:"errorText"`
	}
)

// uiStream writes one assistant message as an AI SDK UI message stream
// (SSE). Nothing reaches the client before begin, so a handler can still
// answer an ordinary JSON error (503 when Ollama is down) until the model's
// first line arrives. It keeps the order the client enforces: start,
// start-step, text parts opened before their deltas and closed before a
// tool call or the end, finish-step, finish, [DONE].
type uiStream struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	deadline time.Time

	started   bool
	done      bool
	err       error // first write error; later writes are skipped
	nextID    int
	textID    string // open text part, "" when none
	reasonID  string // open reasoning part
	stepOpen  bool
	textSoFar strings.Builder // all text of the message, for the suggestion check
	makeID    func() string
}

func newUIStream(w http.ResponseWriter, deadline time.Time, newID func() string) *uiStream {
	return &uiStream{w: w, rc: http.NewResponseController(w), deadline: deadline, makeID: newID}
}

// begin writes the headers, start and start-step once.
func (s *uiStream) begin() error {
	if s.started {
		return s.err
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	h.Set("X-Accel-Buffering", "no")
	// The server's WriteTimeout may be shorter than a model answer; the
	// request's own deadline bounds every write instead. Writers that do
	// not support deadlines (recorders, some middleware) are fine.
	_ = s.rc.SetWriteDeadline(s.deadline)
	s.w.WriteHeader(http.StatusOK)
	s.send(chunkStart{Type: "start", MessageID: "msg-" + s.makeID()})
	s.startStep()
	return s.err
}

func (s *uiStream) startStep() {
	s.send(chunkBare{Type: "start-step"})
	s.stepOpen = true
}

// send frames one chunk as `data: <json>\n\n` and flushes it.
func (s *uiStream) send(chunk any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		s.err = fmt.Errorf("ai: encode chunk: %w", err)
		return
	}
	s.writeEvent(string(b))
}

// writeEvent writes one SSE event whose data is a single line. go-sse's
// Message frames it; json.Marshal never emits a raw newline, so the event
// is exactly one `data:` line, and "[DONE]" frames as `data: [DONE]`.
func (s *uiStream) writeEvent(data string) {
	var m sse.Message
	m.AppendData(data)
	if _, err := m.WriteTo(s.w); err != nil {
		s.err = fmt.Errorf("ai: write stream: %w", err)
		return
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = fmt.Errorf("ai: flush stream: %w", err)
	}
}

func (s *uiStream) newID(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s-%d", prefix, s.nextID)
}

// text streams a piece of the answer, opening a text part when needed.
func (s *uiStream) text(delta string) {
	if delta == "" {
		return
	}
	s.endReasoning()
	if s.textID == "" {
		s.textID = s.newID("text")
		s.send(chunkID{Type: "text-start", ID: s.textID})
	}
	s.textSoFar.WriteString(delta)
	s.send(chunkDelta{Type: "text-delta", ID: s.textID, Delta: delta})
}

func (s *uiStream) endText() {
	if s.textID != "" {
		s.send(chunkID{Type: "text-end", ID: s.textID})
		s.textID = ""
	}
}

// reasoning streams model thinking, when a model sends it anyway.
func (s *uiStream) reasoning(delta string) {
	if delta == "" {
		return
	}
	s.endText()
	if s.reasonID == "" {
		s.reasonID = s.newID("reasoning")
		s.send(chunkID{Type: "reasoning-start", ID: s.reasonID})
	}
	s.send(chunkDelta{Type: "reasoning-delta", ID: s.reasonID, Delta: delta})
}

func (s *uiStream) endReasoning() {
	if s.reasonID != "" {
		s.send(chunkID{Type: "reasoning-end", ID: s.reasonID})
		s.reasonID = ""
	}
}

// tool sends a validated tool call: tool-input-available, or
// tool-input-error when its arguments were rejected. Ollama delivers each
// call whole, so no tool-input-start/-delta is needed.
func (s *uiStream) tool(c checkedCall) {
	s.endText()
	s.endReasoning()
	input := c.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	if c.ErrorText != "" {
		s.send(chunkToolInputError{Type: "tool-input-error", ToolCallID: c.ID, ToolName: c.Name, Input: input, ErrorText: c.ErrorText})
		return
	}
	s.send(chunkToolInput{Type: "tool-input-available", ToolCallID: c.ID, ToolName: c.Name, Input: input})
}

func (s *uiStream) closeParts() {
	s.endText()
	s.endReasoning()
	if s.stepOpen {
		s.send(chunkBare{Type: "finish-step"})
		s.stepOpen = false
	}
}

// finish ends the message normally.
func (s *uiStream) finish() error {
	if s.done {
		return s.err
	}
	s.done = true
	s.closeParts()
	s.send(chunkBare{Type: "finish"})
	s.writeEvent("[DONE]")
	return s.err
}

// fail ends a started message with an error chunk, which useChat shows as
// the chat's error.
func (s *uiStream) fail(errText string) {
	if s.done {
		return
	}
	s.done = true
	s.closeParts()
	s.send(chunkError{Type: "error", ErrorText: errText})
	s.writeEvent("[DONE]")
}
