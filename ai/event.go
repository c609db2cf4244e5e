package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"corkboard/board"
)

// EventKind says what an Event carries.
type EventKind int

// The kinds of Event, in the order a streamed answer delivers them: one
// EventStart, then any number of EventReasoning, EventText, EventTextEnd
// and EventToolCall, then exactly one EventFinish or EventError (unless
// the caller went away or the Sink failed, when the answer just stops).
const (
	// EventStart opens the answer; MessageID names it. Nothing reaches the
	// Sink before it, and a method that fails before it returns its error
	// without having delivered anything.
	EventStart EventKind = iota + 1
	// EventReasoning is a piece of the model's thinking, in Delta.
	EventReasoning
	// EventText is a piece of the answer's text, in Delta.
	EventText
	// EventTextEnd ends the text so far: text after it is a new block
	// (the subagent's suggestion block is one).
	EventTextEnd
	// EventToolCall is a tool call of the model, checked, in ToolCall.
	EventToolCall
	// EventFinish ends a complete answer; Usage is what it cost.
	EventFinish
	// EventError ends an answer that failed after EventStart; Err is the
	// *board.Error a client is told (board.ErrorMessage(Err)).
	EventError
)

var eventKindNames = [...]string{
	EventStart:     "start",
	EventReasoning: "reasoning",
	EventText:      "text",
	EventTextEnd:   "text-end",
	EventToolCall:  "tool-call",
	EventFinish:    "finish",
	EventError:     "error",
}

// String returns the kind's name, e.g. "text".
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one step of a streamed answer (Chat, Subagent, NoteAI,
// NoteCommand). Only the fields of its Kind are set.
type Event struct {
	Kind EventKind
	// MessageID is EventStart's id of the answer: "msg-" and a fresh id
	// from Config.NewID.
	MessageID string
	// Delta is the text of EventText and EventReasoning; never empty.
	Delta string
	// ToolCall is EventToolCall's call.
	ToolCall ToolCall
	// Usage is EventFinish's cost of the answer so far (Config.OnUsage
	// still gets the final report when the method returns).
	Usage Usage
	// Err is EventError's error.
	Err error
}

// ToolCall is a tool call of the model after validation against the
// tool's schema. The server does not run it: the client does (chat,
// subagent).
type ToolCall struct {
	// ID is the model's call id, or one made up when it sent none.
	ID   string
	Name string
	// Input is the JSON object of the arguments: repaired when they are
	// valid (unknown keys and out-of-enum optional values dropped), as the
	// model sent them when they are not.
	Input json.RawMessage
	// ErrorText says why the arguments were rejected; "" when they are
	// valid.
	ErrorText string
}

// Sink receives the events of one streamed answer, in order, on the
// goroutine that called the method. An error from Event stops the answer:
// the model request is cancelled (the method returns at once), no further
// event is delivered, and the method returns the error wrapped in
// ErrStreamed. A Sink that writes to a client should return the write's
// error, so that a client that went away stops the model.
type Sink interface {
	Event(ctx context.Context, e Event) error
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(ctx context.Context, e Event) error

// Event calls f.
func (f SinkFunc) Event(ctx context.Context, e Event) error { return f(ctx, e) }

// ErrStreamed is wrapped by every error a streaming method returns after
// it delivered EventStart. The error has then already been reported inside
// the stream (an EventError), or the stream just stopped because its
// caller or its Sink went away, so a handler must only log it and must not
// answer anything else. board.ErrorCode still gives the error's code.
var ErrStreamed = errors.New("ai: error after the answer started")

// Streamed reports whether err came after the answer was started (see
// ErrStreamed).
func Streamed(err error) bool { return errors.Is(err, ErrStreamed) }

func streamedError(err error) error {
	return fmt.Errorf("%w: %w", ErrStreamed, err)
}

// emitter delivers one answer's events to its Sink: EventStart once,
// before the first other event, and nothing after the Sink's first error,
// which it keeps.
type emitter struct {
	ctx     context.Context
	sink    Sink
	newID   func() string
	started bool
	ended   bool
	err     error
}

func newEmitter(ctx context.Context, sink Sink, newID func() string) *emitter {
	return &emitter{ctx: ctx, sink: sink, newID: newID}
}

// deliver hands e to the sink unless it failed before.
func (m *emitter) deliver(e Event) {
	if m.err != nil {
		return
	}
	if err := m.sink.Event(m.ctx, e); err != nil {
		m.err = fmt.Errorf("ai: %s event: %w", e.Kind, err)
	}
}

// begin delivers EventStart once and returns the sink's error.
func (m *emitter) begin() error {
	if !m.started {
		m.started = true
		m.deliver(Event{Kind: EventStart, MessageID: "msg-" + m.newID()})
	}
	return m.err
}

// send delivers e after EventStart; an empty delta is not an event.
func (m *emitter) send(e Event) error {
	if (e.Kind == EventText || e.Kind == EventReasoning) && e.Delta == "" {
		return m.err
	}
	if m.begin() == nil {
		m.deliver(e)
	}
	return m.err
}

// text delivers a piece of the answer.
func (m *emitter) text(delta string) error {
	return m.send(Event{Kind: EventText, Delta: delta})
}

// reasoning delivers a piece of the model's thinking.
func (m *emitter) reasoning(delta string) error {
	return m.send(Event{Kind: EventReasoning, Delta: delta})
}

// textEnd ends the text so far.
func (m *emitter) textEnd() error {
	return m.send(Event{Kind: EventTextEnd})
}

// tool delivers a checked tool call.
func (m *emitter) tool(c checkedCall) error {
	return m.send(Event{Kind: EventToolCall, ToolCall: ToolCall{ID: c.ID, Name: c.Name, Input: c.Input, ErrorText: c.ErrorText}})
}

// finish ends a complete answer, and returns the sink's error wrapped in
// ErrStreamed, or nil.
func (m *emitter) finish(u Usage) error {
	if !m.ended {
		m.ended = true
		m.send(Event{Kind: EventFinish, Usage: u})
	}
	if m.err != nil {
		return streamedError(m.err)
	}
	return nil
}

// fail ends the answer with err. Before EventStart it returns err as it
// is, for the caller to answer; after, it delivers EventError, unless the
// caller went away (nobody is left to tell), and returns err wrapped in
// ErrStreamed.
func (m *emitter) fail(err error) error {
	if !m.started {
		return err
	}
	if !m.ended {
		m.ended = true
		if m.ctx.Err() == nil || board.ErrorCode(err) != board.EINTERNAL {
			m.deliver(Event{Kind: EventError, Err: err})
		}
	}
	return streamedError(err)
}
