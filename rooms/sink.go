package rooms

import "sync/atomic"

// Sink is where a subscriber's messages go: in the server, the connection's
// socket writer. The room calls Send from its own goroutine for every
// message of the subscriber, in order, and Send must never wait for the
// peer: it writes at once if the connection can take the message and queues
// it otherwise. Send reports false when the queue is full; the room then
// drops the subscriber with livewire.CloseResync. The subscriber's connection also
// calls Send (Subscriber.Enqueue), so Send must be safe for concurrent use.
type Sink interface {
	Send(m *Message) bool
}

// Message is one encoded live message (JSON text). The message of one push
// is shared by every subscriber it goes to, and so is its wire form: the
// transport frames it once (Wire), not once per connection.
type Message struct {
	// Data is the JSON text; it must not be modified.
	Data []byte
	// Version is, for a changes message, the version it brings the board
	// to (its serverVersion); 0 for every other message. A sink whose
	// client already has that version (its catch-up went as far) may drop
	// it, so that the versions a client is sent strictly increase.
	Version int64

	wire atomic.Pointer[[]byte]
	// trace is the message's stage timeline (stages.go), nil unless the
	// room records stages.
	trace *msgTrace
}

// NewMessage wraps encoded JSON.
func NewMessage(data []byte) *Message { return &Message{Data: data} }

// NewChangesMessage wraps an encoded changes message that brings the board
// to version.
func NewChangesMessage(data []byte, version int64) *Message {
	return &Message{Data: data, Version: version}
}

// Wire returns frame(m.Data), calling frame only while no result is kept
// (two first callers may both call it; one result is kept). Every caller
// must pass the same framing: there is one transport per process.
func (m *Message) Wire(frame func([]byte) []byte) []byte {
	if p := m.wire.Load(); p != nil {
		return *p
	}
	b := frame(m.Data)
	if m.wire.CompareAndSwap(nil, &b) {
		return b
	}
	return *m.wire.Load()
}
