package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"corkboard/ratelimit"
)

// TestBudgetFixedWindow: Count events in a window that opens at the first
// counted one; a refusal answers the time until that window ends, and the
// key starts afresh after it.
func TestBudgetFixedWindow(t *testing.T) {
	b := ratelimit.NewBudget(ratelimit.Rate{Count: 2, Window: time.Hour}, 10)
	steps := []struct {
		at       time.Duration
		wantOK   bool
		wantWait time.Duration
	}{
		{10 * time.Minute, true, 0}, // the window opens: 10m to 70m
		{50 * time.Minute, true, 0},
		{60 * time.Minute, false, 10 * time.Minute},
		{70*time.Minute - time.Nanosecond, false, time.Nanosecond},
		{70 * time.Minute, true, 0}, // a new window: 70m to 130m
		{71 * time.Minute, true, 0},
		{72 * time.Minute, false, 58 * time.Minute},
	}
	for _, s := range steps {
		wait, ok := b.Take("k", t0.Add(s.at))
		if ok != s.wantOK || wait != s.wantWait {
			t.Fatalf("at %s: Take=(%s, %v), want (%s, %v)", s.at, wait, ok, s.wantWait, s.wantOK)
		}
	}
}

// TestBudgetUndoForget: a reservation given back is not counted, but does
// not move the window; Forget starts the key afresh.
func TestBudgetUndoForget(t *testing.T) {
	b := ratelimit.NewBudget(ratelimit.Rate{Count: 1, Window: time.Hour}, 10)
	if _, ok := b.Take("k", t0); !ok {
		t.Fatal("first take refused")
	}
	b.Undo("k")
	if _, ok := b.Take("k", t0.Add(30*time.Minute)); !ok {
		t.Fatal("take after undo refused")
	}
	// The window still opened at t0: refused until t0+1h, not +1h30m.
	if wait, ok := b.Take("k", t0.Add(40*time.Minute)); ok || wait != 20*time.Minute {
		t.Fatalf("Take=(%s, %v), want refused for 20m", wait, ok)
	}
	b.Forget("k")
	if _, ok := b.Take("k", t0.Add(40*time.Minute)); !ok {
		t.Fatal("take after forget refused")
	}
	b.Undo("never-seen") // a no-op, not a panic
}

// TestBudgetBounded: a flood of made-up keys keeps at most maxKeys; the
// one evicted is the one whose window opened first, and a purge forgets
// ended windows only.
func TestBudgetBounded(t *testing.T) {
	b := ratelimit.NewBudget(ratelimit.Rate{Count: 1, Window: time.Hour}, 100)
	b.Take("old", t0)
	b.Take("new", t0.Add(time.Minute))
	for i := range 10_000 {
		b.Take(fmt.Sprint("flood", i), t0.Add(2*time.Minute))
		if got := b.Len(); got > 100 {
			t.Fatalf("after %d keys the budget holds %d, cap 100", i+1, got)
		}
	}
	if _, ok := b.Take(fmt.Sprint("flood", 9_999), t0.Add(2*time.Minute)); ok {
		t.Fatal("the newest key lost its count")
	}
	if got := b.Len(); got != 100 {
		t.Fatalf("the budget holds %d keys, want 100", got)
	}
	b.Purge(t0.Add(62 * time.Minute))
	if got := b.Len(); got != 0 {
		t.Fatalf("after purge %d keys remain, want 0", got)
	}
}

// TestBudgetEvictsOldestWindow: at capacity a new key pushes out the key
// whose window opened first, not the one counted last.
func TestBudgetEvictsOldestWindow(t *testing.T) {
	b := ratelimit.NewBudget(ratelimit.Rate{Count: 1, Window: time.Hour}, 2)
	b.Take("first", t0)
	b.Take("second", t0.Add(time.Minute))
	b.Take("first", t0.Add(2*time.Minute)) // refused: does not move it
	b.Take("third", t0.Add(3*time.Minute))
	if _, ok := b.Take("second", t0.Add(4*time.Minute)); ok {
		t.Fatal("second lost its count: the wrong key was evicted")
	}
	if _, ok := b.Take("first", t0.Add(4*time.Minute)); !ok {
		t.Fatal("first kept its count: it should have been evicted")
	}
}
