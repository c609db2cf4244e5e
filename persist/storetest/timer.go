package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runTimer: the board's timer is part of the header, moved by pushes
// carrying a timer action (board.Push.Timer) at the store's clock.
func runTimer(t *testing.T, open Opener) {
	t.Run("Lifecycle", func(t *testing.T) { testTimerLifecycle(t, open) })
	t.Run("RefusedWritesNothing", func(t *testing.T) { testTimerRefused(t, open) })
	t.Run("Phase", func(t *testing.T) { testTimerPhase(t, open) })
	t.Run("WithRows", func(t *testing.T) { testTimerWithRows(t, open) })
	t.Run("ConcurrentActions", func(t *testing.T) { testTimerConcurrentActions(t, open) })
}

func timerPush(action string, ms int64) *board.Push {
	return &board.Push{Timer: &board.TimerAction{Action: action, DurationMs: ms, By: Owner}}
}

// applyTimer applies a timer push and returns its outcome, failing the
// test on an error of the call itself.
func applyTimer(tb testing.TB, s persist.SyncStore, boardID string, p *board.Push, key string) persist.Applied {
	tb.Helper()
	res, err := s.ApplyPushes(context.Background(), boardID, []persist.PushInput{{Push: p, IdempotencyKey: key}})
	if err != nil {
		tb.Fatalf("ApplyPushes: %v", err)
	}
	return res[0]
}

// headerTimer is the timer a pull since 0, a pull since before version
// and the board itself agree on (failing the test when they do not).
func headerTimer(tb testing.TB, s persist.Store, boardID string, version int64) *board.Timer {
	tb.Helper()
	full := changes(tb, s, boardID, 0)
	since := changes(tb, s, boardID, version-1)
	b, err := s.FindBoard(context.Background(), boardID)
	if err != nil {
		tb.Fatalf("FindBoard: %v", err)
	}
	st, err := s.BoardState(context.Background(), boardID)
	if err != nil {
		tb.Fatalf("BoardState: %v", err)
	}
	for what, got := range map[string]*board.Timer{"pull since version-1": since.Board.Timer, "board": b.Timer, "state": st.Board.Timer} {
		if !sameTimer(got, full.Board.Timer) {
			tb.Fatalf("timer of the %s=%s, full pull=%s", what, timerJSON(got), timerJSON(full.Board.Timer))
		}
	}
	if full.ServerVersion != version {
		tb.Fatalf("ServerVersion=%d, want %d", full.ServerVersion, version)
	}
	return full.Board.Timer
}

func sameTimer(a, b *board.Timer) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func timerJSON(t *board.Timer) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// timerStep applies a timer action to b1 and fails unless it answers
// version want, with changes when changed.
func timerStep(tb testing.TB, s persist.SyncStore, action string, ms, want int64, changed bool) persist.Applied {
	tb.Helper()
	a := applyTimer(tb, s, "b1", timerPush(action, ms), "")
	if a.Err != nil || a.Version != want || (a.Changes != nil) != changed {
		tb.Fatalf("%s: %+v, want version %d, changes %v", action, a, want, changed)
	}
	return a
}

// wantTimer fails unless b1's header at version is want.
func wantTimer(tb testing.TB, s persist.Store, version int64, want *board.Timer) {
	tb.Helper()
	if got := headerTimer(tb, s, "b1", version); !sameTimer(got, want) {
		tb.Fatalf("at version %d, timer=%s, want %s", version, timerJSON(got), timerJSON(want))
	}
}

// testTimerLifecycle: start, pause, resume, add and stop, each read back
// from the header of every read.
func testTimerLifecycle(t *testing.T, open Opener) {
	s, clock := openWith(t, open, T0, "b1")
	mustPush(t, s, "b1", &board.Push{Board: &board.BoardPatch{Name: "Retro"}}, "")
	updatedAt := changes(t, s, "b1", 0).Board.UpdatedAt
	clock.Advance(time.Minute)
	ms := func() int64 { return clock.Now().UnixMilli() }

	// Start: the header has it, at the store's clock, and nothing else
	// changed: no row, not the board's updatedAt.
	a := timerStep(t, s, "start", 300_000, 2, true)
	want := &board.Timer{State: "running", DurationMs: 300_000, EndsAt: ms() + 300_000, StartedBy: Owner, UpdatedAt: ms()}
	if !sameTimer(a.Changes.Board.Timer, want) {
		t.Fatalf("start changes' timer=%s, want %s", timerJSON(a.Changes.Board.Timer), timerJSON(want))
	}
	if n := len(a.Changes.Notes) + len(a.Changes.TrackerItems) + len(a.Changes.DeletedNoteIDs) + len(a.Changes.Frames); n != 0 {
		t.Fatalf("start changed %d rows, want 0", n)
	}
	wantTimer(t, s, 2, want)
	if got := changes(t, s, "b1", 0).Board.UpdatedAt; got != updatedAt {
		t.Fatalf("updatedAt=%q after a timer push, want %q (the content did not change)", got, updatedAt)
	}

	// Pause 10 s later: what is left is kept. Pausing again changes
	// nothing: the version stays, nobody is told.
	clock.Advance(10 * time.Second)
	timerStep(t, s, "pause", 0, 3, true)
	wantTimer(t, s, 3, &board.Timer{State: "paused", DurationMs: 300_000, RemainingMs: 290_000, StartedBy: Owner, UpdatedAt: ms()})
	timerStep(t, s, "pause", 0, 3, false)

	// Resume an hour later: it ends 290 s after the resume; a minute more.
	clock.Advance(time.Hour)
	timerStep(t, s, "resume", 0, 4, true)
	wantTimer(t, s, 4, &board.Timer{State: "running", DurationMs: 300_000, EndsAt: ms() + 290_000, StartedBy: Owner, UpdatedAt: ms()})
	timerStep(t, s, "add", 60_000, 5, true)
	wantTimer(t, s, 5, &board.Timer{State: "running", DurationMs: 360_000, EndsAt: ms() + 350_000, StartedBy: Owner, UpdatedAt: ms()})

	// Stop: gone from the header; a pull since before the stop says so.
	if a := timerStep(t, s, "stop", 0, 6, true); a.Changes.Board.Timer != nil {
		t.Fatalf("stop: %+v, want a header without timer", a)
	}
	wantTimer(t, s, 6, nil)
	timerStep(t, s, "stop", 0, 6, false)

	// A timer writes no changelog entry.
	entries, err := s.ListLog(context.Background(), "b1", persist.LogQuery{Limit: 10})
	if err != nil || len(entries) != 0 {
		t.Fatalf("ListLog=%v, %v; want no entry", entries, err)
	}
}

// testTimerRefused: an action the timer refuses (pause of no timer) is
// the push's own error, and writes nothing, not even its idempotency key.
func testTimerRefused(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	a := applyTimer(t, s, "b1", timerPush("pause", 0), "k1")
	if board.ErrorCode(a.Err) != board.ECONFLICT || a.Version != 0 || a.Changes != nil {
		t.Fatalf("pause without timer: %+v, want ECONFLICT at version 0", a)
	}
	a = applyTimer(t, s, "b1", timerPush("start", 60_000), "k1")
	if a.Err != nil || a.Replayed || a.Version != 1 {
		t.Fatalf("start with the refused push's key: %+v, want version 1, not a replay", a)
	}
	a = applyTimer(t, s, "b1", timerPush("add", 86_400_000), "")
	if board.ErrorCode(a.Err) != board.EINVALID || a.Version != 0 {
		t.Fatalf("add past 24 hours: %+v, want EINVALID", a)
	}
	if got := headerTimer(t, s, "b1", 1); got == nil || got.DurationMs != 60_000 {
		t.Fatalf("timer=%s after refused pushes, want the 60 s one", timerJSON(got))
	}
}

// testTimerPhase: a start names one of the board's phases or none.
func testTimerPhase(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	p := timerPush("start", 60_000)
	p.Timer.PhaseID = "build"
	var e *board.Error
	if a := applyTimer(t, s, "b1", p, ""); !asBoardError(a.Err, &e) || e.Field != "phaseId" {
		t.Fatalf("start for a phase of a board without phases: %+v, want EINVALID on phaseId", a)
	}
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"disc"}`), json.RawMessage(`{"id":"build"}`)}, CurrentPhaseID: "build"}
	if _, err := s.SetPhases(context.Background(), "b1", ph); err != nil {
		t.Fatal(err)
	}
	if a := applyTimer(t, s, "b1", p, ""); a.Err != nil || a.Changes.Board.Timer.PhaseID != "build" {
		t.Fatalf("start for phase build: %+v, want it tied to build", a)
	}
	// The board's other writes keep the timer.
	if _, err := s.SetPhases(context.Background(), "b1", nil); err != nil {
		t.Fatal(err)
	}
	if got := headerTimer(t, s, "b1", 1); got == nil || got.PhaseID != "build" {
		t.Fatalf("timer=%s after the phases changed, want it kept", timerJSON(got))
	}
}

func asBoardError(err error, e **board.Error) bool {
	be, ok := err.(*board.Error)
	*e = be
	return ok
}

// testTimerWithRows: a push with rows and a timer action takes one
// version for both, and moves updatedAt as any push with rows does.
func testTimerWithRows(t *testing.T, open Opener) {
	s, clock := openWith(t, open, T0, "b1")
	clock.Advance(time.Second)
	p := timerPush("start", 60_000)
	p.Notes.Upserted = []board.Note{note("n1", "hello")}
	a := applyTimer(t, s, "b1", p, "")
	if a.Err != nil || a.Version != 1 || len(a.Changes.Notes) != 1 || a.Changes.Board.Timer == nil {
		t.Fatalf("push with a note and a start: %+v, want version 1 with both", a)
	}
	if got, want := changes(t, s, "b1", 0).Board.UpdatedAt, clock.Now().Format(time.RFC3339Nano); got != want {
		t.Fatalf("updatedAt=%q, want %q", got, want)
	}
	// A no-op action beside a row still writes the row.
	p = timerPush("resume", 0)
	p.Notes.Deleted = []string{"n1"}
	if a := applyTimer(t, s, "b1", p, ""); a.Err != nil || a.Version != 2 || a.Changes.Board.Timer == nil {
		t.Fatalf("push deleting a note with a resume of a running timer: %+v, want version 2, timer kept", a)
	}
}

// testTimerConcurrentActions: actions sent at once apply one after the
// other, each on the timer the one before left: every addition counts.
func testTimerConcurrentActions(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	mustPush(t, s, "b1", timerPush("start", 60_000), "")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			if _, _, err := applyPush(context.Background(), s, "b1", timerPush("add", 1000), ""); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("add: %v", err)
	}
	if got := headerTimer(t, s, "b1", 1+n); got == nil || got.DurationMs != 60_000+n*1000 || got.EndsAt != T0.UnixMilli()+60_000+n*1000 {
		t.Fatalf("timer=%s after %d additions of 1 s, want durationMs %d", timerJSON(got), n, 60_000+n*1000)
	}
}

// testTimerSurvivesReopen: the timer is stored with the board.
func testTimerSurvivesReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	clock := NewClock(T0)
	db, open := first(t, durable, clock.Now)
	if _, err := db.ClaimBoard(ctx, "b1", Owner); err != nil {
		t.Fatal(err)
	}
	mustPush(t, db, "b1", timerPush("start", 120_000), "")
	clock.Advance(30 * time.Second)
	mustPush(t, db, "b1", timerPush("pause", 0), "")
	before := headerTimer(t, db, "b1", 2)
	db2 := reopen(t, db, open, clock.Now)
	if got := headerTimer(t, db2, "b1", 2); !sameTimer(got, before) || got.RemainingMs != 90_000 {
		t.Fatalf("timer after reopening=%s, want %s", timerJSON(got), timerJSON(before))
	}
}
