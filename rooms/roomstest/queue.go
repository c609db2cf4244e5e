// Package roomstest has a rooms.Sink for tests that read a subscriber's
// messages from a channel instead of a socket.
package roomstest

import "corkboard/rooms"

// Queue is a rooms.Sink holding at most its capacity of messages; Send
// reports false (the room drops the subscriber) when it is full, as the live
// transport's socket writer does when its queue is.
type Queue struct {
	c chan []byte
}

// NewQueue returns a Queue of the given capacity.
func NewQueue(capacity int) *Queue { return &Queue{c: make(chan []byte, capacity)} }

// Send implements rooms.Sink.
func (q *Queue) Send(m *rooms.Message) bool {
	select {
	case q.c <- m.Data:
		return true
	default:
		return false
	}
}

// Messages returns the queued messages' JSON texts, in order.
func (q *Queue) Messages() <-chan []byte { return q.c }
