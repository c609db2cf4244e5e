package aihttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tmaxmax/go-sse"

	"corkboard/ai"
	"corkboard/board"
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

// uiMessageStream renders an ai answer as an AI SDK UI message stream
// (SSE, ai-protocols.md §1) on w: it is the ai.Sink of chat and subagent.
// Nothing is written before ai.EventStart, so until the model answers the
// handler can still answer a JSON error. It keeps the order the client
// enforces: start, start-step, text and reasoning parts opened before their
// deltas and closed before a tool call, another part or the end,
// finish-step, finish or error, [DONE]. Each chunk is written and flushed
// on its own; the route's aiWriteDeadlines bounds every write.
type uiMessageStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	started  bool
	done     bool
	err      error // first write error; later writes are skipped
	nextID   int
	textID   string // open text part, "" when none
	reasonID string // open reasoning part
	stepOpen bool
}

var _ ai.Sink = (*uiMessageStream)(nil)

func newUIMessageStream(w http.ResponseWriter) *uiMessageStream {
	return &uiMessageStream{w: w, rc: http.NewResponseController(w)}
}

// Event renders one event and returns the first write error, which stops
// the answer.
func (s *uiMessageStream) Event(_ context.Context, e ai.Event) error {
	if (e.Kind != ai.EventStart && !s.started) || s.done {
		return fmt.Errorf("aihttp: UI message stream: %s event out of order", e.Kind)
	}
	switch e.Kind {
	case ai.EventStart:
		s.begin(e.MessageID)
	case ai.EventReasoning:
		s.reasoning(e.Delta)
	case ai.EventText:
		s.text(e.Delta)
	case ai.EventTextEnd:
		s.endText()
	case ai.EventToolCall:
		s.tool(e.ToolCall)
	case ai.EventFinish:
		s.done = true
		s.closeParts()
		s.send(chunkBare{Type: "finish"})
		s.writeEvent("[DONE]")
	case ai.EventError:
		// useChat shows the error chunk as the chat's error.
		s.done = true
		s.closeParts()
		s.send(chunkError{Type: "error", ErrorText: board.ErrorMessage(e.Err)})
		s.writeEvent("[DONE]")
	}
	return s.err
}

// begin writes the headers, start and start-step.
func (s *uiMessageStream) begin(messageID string) {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.send(chunkStart{Type: "start", MessageID: messageID})
	s.send(chunkBare{Type: "start-step"})
	s.stepOpen = true
}

// send frames one chunk as `data: <json>\n\n` and flushes it.
func (s *uiMessageStream) send(chunk any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		s.err = fmt.Errorf("aihttp: encode UI chunk: %w", err)
		return
	}
	s.writeEvent(string(b))
}

// writeEvent writes one SSE event whose data is a single line. go-sse's
// Message frames it; json.Marshal never emits a raw newline, so the event
// is exactly one `data:` line, and "[DONE]" frames as `data: [DONE]`.
func (s *uiMessageStream) writeEvent(data string) {
	if s.err != nil {
		return
	}
	var m sse.Message
	m.AppendData(data)
	if _, err := m.WriteTo(s.w); err != nil {
		s.err = fmt.Errorf("aihttp: write UI stream: %w", err)
		return
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = fmt.Errorf("aihttp: flush UI stream: %w", err)
	}
}

// partID names a new part; text and reasoning parts share the count.
func (s *uiMessageStream) partID(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s-%d", prefix, s.nextID)
}

// text streams a piece of the answer, opening a text part when needed.
func (s *uiMessageStream) text(delta string) {
	s.endReasoning()
	s.partDelta("text", &s.textID, delta)
}

func (s *uiMessageStream) endText() { s.endPart("text", &s.textID) }

// reasoning streams model thinking, when a model sends it anyway.
func (s *uiMessageStream) reasoning(delta string) {
	s.endText()
	s.partDelta("reasoning", &s.reasonID, delta)
}

func (s *uiMessageStream) endReasoning() { s.endPart("reasoning", &s.reasonID) }

// partDelta sends delta in the part of kind ("text", "reasoning") whose id
// *id holds, first opening one ("<kind>-start") when none is open.
func (s *uiMessageStream) partDelta(kind string, id *string, delta string) {
	if *id == "" {
		*id = s.partID(kind)
		s.send(chunkID{Type: kind + "-start", ID: *id})
	}
	s.send(chunkDelta{Type: kind + "-delta", ID: *id, Delta: delta})
}

// endPart closes the part of kind whose id *id holds, if one is open.
func (s *uiMessageStream) endPart(kind string, id *string) {
	if *id != "" {
		s.send(chunkID{Type: kind + "-end", ID: *id})
		*id = ""
	}
}

// tool sends a checked tool call: tool-input-available, or
// tool-input-error when its arguments were rejected. Ollama delivers each
// call whole, so no tool-input-start/-delta is needed.
func (s *uiMessageStream) tool(c ai.ToolCall) {
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

// closeParts closes the open part and the step, before the end.
func (s *uiMessageStream) closeParts() {
	s.endText()
	s.endReasoning()
	if s.stepOpen {
		s.send(chunkBare{Type: "finish-step"})
		s.stepOpen = false
	}
}
