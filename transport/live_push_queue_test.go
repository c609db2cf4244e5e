package transport_test

import (
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// heldCommits is a rooms.Observer that holds the first commit of a room in
// flight (the commit's goroutine waits in Committed, after the store's
// write, as it would in a slow fsync) until release is closed, and counts
// the pushes of every commit.
type heldCommits struct {
	held    chan struct{} // closed when the first commit is held
	release chan struct{}
	once    sync.Once

	mu      sync.Mutex
	batches []int
}

func (h *heldCommits) Committed(pushes int, _ time.Duration, _ error) {
	h.mu.Lock()
	h.batches = append(h.batches, pushes)
	h.mu.Unlock()
	h.once.Do(func() {
		close(h.held)
		<-h.release
	})
}
func (h *heldCommits) Pulled(time.Duration, bool, error) {}
func (h *heldCommits) SubscriberDropped()                {}
func (h *heldCommits) Merged(int, int, int, int)         {}

// TestLivePushDoesNotHoldItsConnection: while a live push commits (held
// here, as a slow fsync would hold it), the connection's next messages are
// read and handled: a ping is answered at once, and the pushes sent
// meanwhile are taken by the room and share the next commit instead of
// waiting, one commit each, for the one before (issue 26: one slow fsync
// became several slow pushes in a row). Every push is still applied in the
// order sent and acked in version order.
func TestLivePushDoesNotHoldItsConnection(t *testing.T) {
	h := &heldCommits{held: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, withHub(hub.Options{Room: rooms.Options{Observer: h}}))
	alice := e.claim("alice@example.com", "b1")
	c, _ := e.connect(alice, "b1", "")
	released := false
	defer func() {
		if !released {
			close(h.release)
		}
	}()

	send(t, c, pushMsg{Type: livewire.TypePush, ID: "m1", Push: notePush(board.Note{ID: "n1", Content: "one"})})
	awaitClosed(t, h.held, "the first push's commit")
	send(t, c, pushMsg{Type: livewire.TypePush, ID: "m2", Push: notePush(board.Note{ID: "n2", Content: "two"})})
	send(t, c, pushMsg{Type: livewire.TypePush, ID: "m3", Push: notePush(board.Note{ID: "n3", Content: "three"})})
	send(t, c, map[string]any{"type": "ping", "id": "during"})
	// Read holds the test for at most liveWait: before, the reader waited
	// in the first push's commit and the pong never came while it was held.
	if m := readType(t, c, "pong"); m.ID != "during" {
		t.Fatalf("got pong %q, want \"during\"", m.ID)
	}

	close(h.release)
	released = true
	for i, id := range []string{"m1", "m2", "m3"} {
		m := readType(t, c, livewire.TypeAck)
		if m.ID != id || m.ServerVersion != int64(i+1) {
			t.Fatalf("ack %q at version %d, want %q at %d", m.ID, m.ServerVersion, id, i+1)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if got, want := len(h.batches), 2; got != want || h.batches[1] != 2 {
		t.Fatalf("commits of %v pushes, want [1 2]: the pushes sent during the first commit share the next", h.batches)
	}
}

func awaitClosed(tb testing.TB, c <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-c:
	case <-time.After(liveWait):
		tb.Fatalf("%s: not within %v", what, liveWait)
	}
}
