package hub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist/persisttest"
	"corkboard/rooms"
)

// TestWaitCaps: the per-person cap and the server's, at their edges, and
// a stopped wait gives its slot back.
func TestWaitCaps(t *testing.T) {
	db, c, _ := persisttest.Open(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), "b1", "b2")
	h := hub.New(db, hub.Options{Now: c.Now, SweepEvery: -1, MaxWaitsPerUser: 2, MaxWaits: 3})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	ctx := context.Background()
	var held []*rooms.Waiter
	for i, s := range []struct {
		email, board string
		code         string // "" held
	}{
		{"a@example.com", "b1", ""},
		{"a@example.com", "b2", ""},
		{"a@example.com", "b1", board.ERATELIMIT},
		{"b@example.com", "b1", ""},
		{"c@example.com", "b1", board.EUNAVAILABLE},
	} {
		w, err := h.Wait(ctx, s.board, s.email, 0)
		if s.code == "" {
			if err != nil {
				t.Fatalf("step %d: %v", i+1, err)
			}
			held = append(held, w)
			continue
		}
		if got := board.ErrorCode(err); got != s.code {
			t.Fatalf("step %d (%s): err=%v, want code %q", i+1, s.email, err, s.code)
		}
		var e *board.Error
		if !errors.As(err, &e) || e.Field != "wait" || e.RetryAfter <= 0 {
			t.Fatalf("step %d: %#v, want field wait and a Retry-After", i+1, err)
		}
	}
	if got := h.Waits(); got != 3 {
		t.Fatalf("Waits=%d, want 3", got)
	}
	held[0].Stop()
	held[0].Stop() // twice is safe
	if got := h.Waits(); got != 2 {
		t.Fatalf("Waits after a Stop=%d, want 2", got)
	}
	w, err := h.Wait(ctx, "b1", "a@example.com", 0)
	if err != nil {
		t.Fatalf("after a Stop: %v", err)
	}
	w.Stop()
	for _, w := range held[1:] {
		w.Stop()
	}
	if got := h.Waits(); got != 0 {
		t.Fatalf("Waits at the end=%d, want 0", got)
	}
}


// TestWaitKeepsTheRoom: the janitor does not stop a room holding a wait,
// a push answers it, and Kick and Close end the others.
func TestWaitKeepsTheRoom(t *testing.T) {
	h, _, c := newHub(t, "b1")
	ctx := context.Background()
	w, err := h.Wait(ctx, "b1", "a@example.com", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c.Advance(2 * time.Hour)
	if n := h.StopIdle(c.Now()); n != 0 {
		t.Fatalf("StopIdle stopped %d rooms, want none: one holds a wait", n)
	}
	if _, _, err := h.Push(ctx, "b1", onePush("n1"), ""); err != nil {
		t.Fatal(err)
	}
	if got, want := <-w.Ended(), (rooms.WaitEnd{Version: 1, Reason: rooms.WaitPassed}); got != want {
		t.Fatalf("answer=%+v, want %+v", got, want)
	}

	kicked, err := h.Wait(ctx, "b1", "a@example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer kicked.Stop()
	closed, err := h.Wait(ctx, "b1", "b@example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Stop()
	h.Kick("b1", "a@example.com")
	if got := (<-kicked.Ended()).Reason; got != rooms.WaitKicked {
		t.Fatalf("kicked wait ended with %v, want WaitKicked", got)
	}
	ctx2, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	if err := h.Close(ctx2); err != nil {
		t.Fatal(err)
	}
	if got, want := <-closed.Ended(), (rooms.WaitEnd{Version: 1, Reason: rooms.WaitClosed}); got != want {
		t.Fatalf("answer at Close=%+v, want %+v", got, want)
	}
	if _, err := h.Wait(ctx, "b1", "a@example.com", 1); board.ErrorCode(err) != board.EUNAVAILABLE {
		t.Fatalf("Wait after Close: %v, want EUNAVAILABLE", err)
	}
}
