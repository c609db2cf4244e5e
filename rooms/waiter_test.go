package rooms_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/rooms"
)

// wait registers a waiter on r for since as email; it is stopped when the
// test ends.
func wait(tb testing.TB, r *rooms.Room, since int64, email string) *rooms.Waiter {
	tb.Helper()
	w, err := r.Wait(context.Background(), rooms.WaitFor{Since: since, Email: email})
	if err != nil {
		tb.Fatalf("Wait: %v", err)
	}
	tb.Cleanup(w.Stop)
	return w
}

// ended is the room's answer to w.
func ended(tb testing.TB, w *rooms.Waiter) rooms.WaitEnd {
	tb.Helper()
	select {
	case e := <-w.Ended():
		return e
	case <-time.After(waitFor):
		tb.Fatal("the waiter was not answered")
		return rooms.WaitEnd{}
	}
}

// notEnded fails if w has been answered.
func notEnded(tb testing.TB, w *rooms.Waiter) {
	tb.Helper()
	select {
	case e := <-w.Ended():
		tb.Fatalf("the waiter was answered %+v, want it still waiting", e)
	default:
	}
}

func TestWaitAnsweredByPush(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a, b := wait(t, r, 0, "a@example.com"), wait(t, r, 0, "b@example.com")
	if got, want := r.Waiters(), 2; got != want {
		t.Fatalf("Waiters=%d, want %d", got, want)
	}
	notEnded(t, a)
	if _, _, err := r.Push(context.Background(), onePush("n1", "x"), ""); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*rooms.Waiter{a, b} {
		if got, want := ended(t, w), (rooms.WaitEnd{Version: 1, Reason: rooms.WaitPassed}); got != want {
			t.Fatalf("answer=%+v, want %+v", got, want)
		}
	}
	if got := r.Waiters(); got != 0 {
		t.Fatalf("Waiters=%d after the push, want 0", got)
	}
}

func TestWaitAnsweredByLivePush(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	s, _ := subscribe(t, r, "A", "a@example.com")
	w := wait(t, r, 0, "b@example.com")
	if _, _, err := s.Push(context.Background(), "m1", onePush("n1", "x"), ""); err != nil {
		t.Fatal(err)
	}
	if got, want := ended(t, w), (rooms.WaitEnd{Version: 1, Reason: rooms.WaitPassed}); got != want {
		t.Fatalf("answer=%+v, want %+v", got, want)
	}
}

// TestWaitNotHeldWhenTheVersionDiffers: a board already past since, and a
// client ahead of the board, are answered at once and never held.
func TestWaitNotHeldWhenTheVersionDiffers(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	if _, _, err := r.Push(context.Background(), onePush("n1", "x"), ""); err != nil {
		t.Fatal(err)
	}
	for _, since := range []int64{0, 2} {
		t.Run(fmt.Sprint(since), func(t *testing.T) {
			w := wait(t, r, since, "a@example.com")
			if got, want := ended(t, w), (rooms.WaitEnd{Version: 1, Reason: rooms.WaitPassed}); got != want {
				t.Fatalf("answer=%+v, want %+v", got, want)
			}
			if got := r.Waiters(); got != 0 {
				t.Fatalf("Waiters=%d, want 0", got)
			}
		})
	}
	if _, err := r.Wait(context.Background(), rooms.WaitFor{Since: -1}); err == nil {
		t.Fatal("Wait since -1: no error")
	}
}

func TestWaitStopRemovesTheWaiter(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	stops := 0
	w, err := r.Wait(context.Background(), rooms.WaitFor{Since: 0, Email: "a@example.com", OnStop: func() { stops++ }})
	if err != nil {
		t.Fatal(err)
	}
	keep := wait(t, r, 0, "b@example.com")
	w.Stop()
	w.Stop()
	if got, want := r.Waiters(), 1; got != want {
		t.Fatalf("Waiters=%d after Stop, want %d", got, want)
	}
	if stops != 1 {
		t.Fatalf("OnStop ran %d times, want 1", stops)
	}
	if _, _, err := r.Push(context.Background(), onePush("n1", "x"), ""); err != nil {
		t.Fatal(err)
	}
	ended(t, keep)
	notEnded(t, w) // a stopped waiter is never answered
}

func TestWaitKick(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a1, a2, b := wait(t, r, 0, "a@example.com"), wait(t, r, 0, "a@example.com"), wait(t, r, 0, "b@example.com")
	r.Kick("a@example.com", "access withdrawn")
	for _, w := range []*rooms.Waiter{a1, a2} {
		if got, want := ended(t, w), (rooms.WaitEnd{Version: 0, Reason: rooms.WaitKicked}); got != want {
			t.Fatalf("answer=%+v, want %+v", got, want)
		}
	}
	notEnded(t, b)
	if got, want := r.Waiters(), 1; got != want {
		t.Fatalf("Waiters=%d, want %d", got, want)
	}
}

func TestWaitCloseAnswersWaiters(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	w := wait(t, r, 0, "a@example.com")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := ended(t, w), (rooms.WaitEnd{Version: 0, Reason: rooms.WaitClosed}); got != want {
		t.Fatalf("answer=%+v, want %+v", got, want)
	}
	w.Stop() // after Close: returns at once
	if _, err := r.Wait(context.Background(), rooms.WaitFor{}); !errors.Is(err, rooms.ErrClosed) {
		t.Fatalf("Wait after Close: err=%v, want ErrClosed", err)
	}
}

func TestStopIfIdleKeepsARoomWithWaiters(t *testing.T) {
	c := newClock()
	r := startRoom(t, openStore(t), rooms.Options{Now: c.Now})
	w := wait(t, r, 0, "a@example.com")
	c.Advance(time.Hour)
	if r.StopIfIdle(c.Now().Add(-time.Minute)) {
		t.Fatal("a room with a waiter was stopped")
	}
	w.Stop()
	c.Advance(2 * time.Minute)
	if !r.StopIfIdle(c.Now().Add(-time.Minute)) {
		t.Fatal("an idle room was not stopped")
	}
}

// TestWaitConcurrent: waiters that come, go and are answered while pushes
// are applied; each is answered with a version above its own or stopped,
// and the room holds none at the end.
func TestWaitConcurrent(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	const waiters, pushes = 40, 10
	var wg sync.WaitGroup
	var answered atomic.Int32
	// The pushes start once every waiter has made its first wait, so each
	// odd waiter is answered at least once.
	var started sync.WaitGroup
	started.Add(waiters)
	for i := range waiters {
		wg.Go(func() {
			first := true
			for {
				since := r.Version()
				if since == pushes {
					// Every push is in: a wait now would never be
					// answered (this waiter's last answer came before the
					// last push, or it arrived late).
					return
				}
				w, err := r.Wait(context.Background(), rooms.WaitFor{Since: since, Email: "a@example.com"})
				if first {
					started.Done()
					first = false
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 {
					w.Stop() // gives up at once
					return
				}
				e := <-w.Ended()
				w.Stop()
				if e.Reason != rooms.WaitPassed || e.Version == since {
					t.Errorf("answer %+v to a waiter at %d", e, since)
				}
				answered.Add(1)
				if e.Version == pushes {
					return
				}
			}
		})
	}
	started.Wait()
	for i := range pushes {
		if _, _, err := r.Push(context.Background(), onePush("n", fmt.Sprint(i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if got := r.Waiters(); got != 0 {
		t.Fatalf("Waiters=%d at the end, want 0", got)
	}
	if answered.Load() < waiters/2 {
		t.Fatalf("%d answers, want at least one per waiter that waited", answered.Load())
	}
}
