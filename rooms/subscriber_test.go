package rooms_test

import (
	"context"
	"sync/atomic"
	"testing"

	"corkboard/rooms"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

// closingSink is a queue told when its subscriber is closed, as the live
// transport's socket writer is.
type closingSink struct {
	*roomstest.Queue
	sub    atomic.Pointer[rooms.Subscriber]
	calls  atomic.Int32
	doneAt atomic.Bool // Done was closed when SubscriberClosed ran
}

func (c *closingSink) SubscriberClosed() {
	c.calls.Add(1)
	if s := c.sub.Load(); s != nil {
		select {
		case <-s.Done():
			c.doneAt.Store(true)
		default:
		}
	}
}

// TestClosingSinkToldOnce: a sink that wants to know is told once when its
// subscriber is dropped, after Done is closed; leaving later tells it
// nothing more.
func TestClosingSinkToldOnce(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	sink := &closingSink{Queue: roomstest.NewQueue(16)}
	s, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: "G", Email: "gone@example.com", Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	sink.sub.Store(s)
	r.Kick("gone@example.com", "removed")
	if code, _ := s.CloseStatus(); code != livewire.CloseForbidden {
		t.Fatalf("closed with %d, want %d", code, livewire.CloseForbidden)
	}
	s.Leave()
	if got := sink.calls.Load(); got != 1 {
		t.Fatalf("SubscriberClosed called %d times, want 1", got)
	}
	if !sink.doneAt.Load() {
		t.Fatal("SubscriberClosed ran before Done was closed")
	}
}

// TestClosingSinkToldOnLeave: a subscriber that leaves is closed too, and
// its sink is told.
func TestClosingSinkToldOnLeave(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	sink := &closingSink{Queue: roomstest.NewQueue(16)}
	s, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: "L", Email: "l@example.com", Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	sink.sub.Store(s)
	s.Leave()
	s.Leave()
	if got := sink.calls.Load(); got != 1 {
		t.Fatalf("SubscriberClosed called %d times, want 1", got)
	}
}
