package rooms_test

import (
	"cmp"
	"context"
	"corkboard/transport/livewire"
	"testing"

	"corkboard/board"
	"corkboard/rooms"
)

// TestTimerReachesEveryone: a timer action is a push like any other: the
// room fans its changes out with the board header carrying the timer, a
// no-op action (resume of a running timer) tells nobody, and a pull from
// before it (a late joiner's catch-up) gets the timer in its header.
func TestTimerReachesEveryone(t *testing.T) {
	db := openStore(t)
	clock := newClock()
	db.Now = clock.Now
	r := startRoom(t, db, rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	timer := func(action string, ms int64) *board.Push {
		return &board.Push{Timer: &board.TimerAction{Action: action, DurationMs: ms, By: "owner@example.com"}}
	}

	if v, _, err := r.Push(context.Background(), timer("start", 300_000), ""); err != nil || v != 1 {
		t.Fatalf("start: v=%d err=%v, want version 1", v, err)
	}
	m := next(t, a)
	if m.Type != livewire.TypeChanges || m.ServerVersion != 1 || m.Board.Timer == nil {
		t.Fatalf("A got %+v, want changes at 1 with the timer", m)
	}
	if got, want := m.Board.Timer.EndsAt, clock.Now().UnixMilli()+300_000; got != want || m.Board.Timer.State != "running" {
		t.Fatalf("timer=%+v, want running to %d", *m.Board.Timer, want)
	}

	if v, _, err := r.Push(context.Background(), timer("resume", 0), ""); err != nil || v != 1 {
		t.Fatalf("resume of a running timer: v=%d err=%v, want version 1", v, err)
	}
	if _, _, err := r.Push(context.Background(), timer("add", -400_000), ""); err != nil {
		t.Fatal(err)
	}
	if m := next(t, a); m.ServerVersion != 2 || m.Board.Timer == nil || m.Board.Timer.EndsAt != clock.Now().UnixMilli() {
		t.Fatalf("A got %+v, want changes at 2 with the timer at zero", m)
	}
	noMessage(t, a)
}

// TestTimerStoppedAndLateJoiners: a stop fans out a header without timer,
// a refused action is its caller's error and tells nobody, and a pull from
// before a start (a late joiner's catch-up) has the timer in its header.
func TestTimerStoppedAndLateJoiners(t *testing.T) {
	r := startRoom(t, openStore(t), rooms.Options{})
	a, _ := subscribe(t, r, "A", "a@example.com")
	push := func(action string, ms int64) error {
		_, _, err := r.Push(context.Background(), &board.Push{Timer: &board.TimerAction{Action: action, DurationMs: ms, By: "owner@example.com"}}, "")
		return err
	}
	if err := cmp.Or(push("start", 300_000), push("stop", 0)); err != nil {
		t.Fatal(err)
	}
	if m := next(t, a); m.ServerVersion != 1 || m.Board.Timer == nil {
		t.Fatalf("A got %+v, want changes at 1 with the timer", m)
	}
	if m := next(t, a); m.ServerVersion != 2 || m.Board.Timer != nil {
		t.Fatalf("A got %+v, want changes at 2 without timer", m)
	}
	if err := push("pause", 0); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("pause of no timer: err=%v, want ECONFLICT", err)
	}
	noMessage(t, a)

	if err := push("start", 60_000); err != nil {
		t.Fatal(err)
	}
	for _, since := range []int64{0, 1, 2} {
		res, err := r.Pull(context.Background(), since)
		if err != nil || res.Changes == nil || res.Changes.Board.Timer == nil || res.Changes.Board.Timer.DurationMs != 60_000 {
			t.Fatalf("Pull(%d)=%+v err=%v, want the 60 s timer in the header", since, res, err)
		}
	}
}
