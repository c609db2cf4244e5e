package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"corkboard/ratelimit"
)

// t0 is the fake clock's start: every test passes its times explicitly.
var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// TestWindowSliding: at most Count events in any Window, and the wait
// answered is until the oldest counted event leaves the window.
func TestWindowSliding(t *testing.T) {
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 3, Window: time.Minute}, 10)
	steps := []struct {
		at       time.Duration // after t0
		wantOK   bool
		wantWait time.Duration
	}{
		{0, true, 0},
		{10 * time.Second, true, 0},
		{20 * time.Second, true, 0},
		{30 * time.Second, false, 30 * time.Second}, // oldest (0s) leaves at 60s
		{59 * time.Second, false, time.Second},
		{60 * time.Second, true, 0},                // the 0s event is out
		{61 * time.Second, false, 9 * time.Second}, // 10s, 20s, 60s counted
		{80 * time.Second, true, 0},
	}
	for _, s := range steps {
		wait, ok := w.Allow("k", t0.Add(s.at))
		if ok != s.wantOK || wait != s.wantWait {
			t.Fatalf("at %s: Allow=(%s, %v), want (%s, %v)", s.at, wait, ok, s.wantWait, s.wantOK)
		}
	}
	if wait, ok := w.Allow("other", t0.Add(61*time.Second)); !ok || wait != 0 {
		t.Fatalf("another key shares the budget: (%s, %v)", wait, ok)
	}
}

// TestWindowRetryAfterIsTrue: a refused client that comes back exactly
// when told is let through, and a moment earlier is not. A token bucket
// could not promise both with a burst after idle.
func TestWindowRetryAfterIsTrue(t *testing.T) {
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 5, Window: 15 * time.Minute}, 10)
	now := t0
	for i := range 5 {
		if _, ok := w.Allow("a", now.Add(time.Duration(i)*time.Second)); !ok {
			t.Fatalf("event %d refused", i+1)
		}
	}
	now = now.Add(4 * time.Second)
	wait, ok := w.Allow("a", now)
	if ok || wait != 15*time.Minute-4*time.Second {
		t.Fatalf("6th=(%s, %v), want refused for 14m56s", wait, ok)
	}
	if _, ok := w.Allow("a", now.Add(wait-time.Nanosecond)); ok {
		t.Fatal("let through before the wait it answered")
	}
	if _, ok := w.Allow("a", now.Add(wait)); !ok {
		t.Fatal("refused at the wait it answered")
	}
}

// TestWindowBounded: however many keys a hostile client makes up, the
// window holds at most maxKeys, and idle keys are forgotten by a purge.
func TestWindowBounded(t *testing.T) {
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 2, Window: time.Minute}, 100)
	for i := range 100_000 {
		w.Allow(fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), t0.Add(time.Duration(i)*time.Microsecond))
		if got := w.Len(); got > 100 {
			t.Fatalf("after %d keys the window holds %d, cap 100", i+1, got)
		}
	}
	// The most recently used key survived eviction with its count.
	last := fmt.Sprintf("10.%d.%d.%d", 99_999>>16, (99_999>>8)&255, 99_999&255)
	w.Allow(last, t0.Add(time.Second))
	if _, ok := w.Allow(last, t0.Add(time.Second)); ok {
		t.Fatal("the most recent key lost its count to eviction")
	}
	w.Purge(t0.Add(2 * time.Minute))
	if got := w.Len(); got != 0 {
		t.Fatalf("after purge %d keys remain, want 0", got)
	}
}

// TestWindowEvictsEmptyFirst: at capacity a new key pushes out a key whose
// window is empty before any live one, so cycling through fresh keys does
// not reset a limited key; only when every remembered key is live does the
// key idle longest go (the documented bound).
func TestWindowEvictsEmptyFirst(t *testing.T) {
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 2, Window: time.Minute}, 4)
	for _, k := range []string{"a", "b", "c"} {
		w.Allow(k, t0)
	}
	w.Allow("victim", t0.Add(10*time.Second))
	w.Allow("victim", t0.Add(10*time.Second))
	at := t0.Add(61 * time.Second) // a, b, c are empty now; victim is not
	steps := []struct {
		newKey     string
		wantVictim bool // victim still refused afterwards
	}{
		{"n1", true},
		{"n2", true},
		{"n3", true},
		// Four live keys: the one idle longest, victim, goes.
		{"n4", false},
	}
	for _, s := range steps {
		if _, ok := w.Allow(s.newKey, at); !ok {
			t.Fatalf("new key %s refused", s.newKey)
		}
		if got := w.Len(); got > 4 {
			t.Fatalf("after %s the window holds %d keys, cap 4", s.newKey, got)
		}
		if s.wantVictim {
			// Asking for the victim again must not refresh it either: only
			// counted events order the keys.
			if wait, ok := w.Allow("victim", at); ok || wait != 9*time.Second {
				t.Fatalf("after %s victim=(%s, %v), want refused for 9s", s.newKey, wait, ok)
			}
		}
	}
	if _, ok := w.Allow("victim", at); !ok {
		t.Fatal("victim was not the key evicted when every key was live")
	}
}

// TestWindowEvictionCost: a new key at capacity looks at one entry, not
// at all of them, and a purge at what it removes plus one.
func TestWindowEvictionCost(t *testing.T) {
	const maxKeys, extra = 1000, 10_000
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 5, Window: time.Hour}, maxKeys)
	for i := range maxKeys + extra { // all live: the worst case
		w.Allow(fmt.Sprint("k", i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	if got := w.Len(); got != maxKeys {
		t.Fatalf("window holds %d keys, want %d", got, maxKeys)
	}
	if got, want := w.Scanned(), extra; got != want {
		t.Fatalf("eviction looked at %d entries for %d new keys, want %d", got, extra, want)
	}

	w.Purge(t0.Add(30 * time.Minute)) // nothing to forget yet
	if got, scanned := w.Len(), w.Scanned(); got != maxKeys || scanned != 1 {
		t.Fatalf("purge with every key live: %d keys left, %d looked at; want %d and 1", got, scanned, maxKeys)
	}
	w.Allow("fresh", t0.Add(2*time.Hour))
	w.Purge(t0.Add(2 * time.Hour))
	// "fresh" evicted one key (1); the purge removes the other maxKeys-1
	// and looks at "fresh" to keep it (1).
	if got, want := w.Scanned(), 1+(maxKeys-1)+1; w.Len() != 1 || got != want {
		t.Fatalf("purge: %d keys left, %d looked at; want 1 and %d", w.Len(), got, want)
	}
}

// TestWindowClockBackwards: a wall clock stepping back does not let a key
// past its limit.
func TestWindowClockBackwards(t *testing.T) {
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 2, Window: time.Minute}, 10)
	if _, ok := w.Allow("k", t0.Add(10*time.Second)); !ok {
		t.Fatal("first event refused")
	}
	if _, ok := w.Allow("k", t0); !ok {
		t.Fatal("second event refused")
	}
	// Both count as at +10s, so the window frees at +70s.
	if wait, ok := w.Allow("k", t0); ok || wait != 70*time.Second {
		t.Fatalf("third event=(%s, %v), want refused for 70s", wait, ok)
	}
}

// BenchmarkWindowNewKeyAtCapacity is the cost of a request with a new key
// when the window is full of live keys (an attacker cycling addresses).
func BenchmarkWindowNewKeyAtCapacity(b *testing.B) {
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 5, Window: time.Hour}, ratelimit.DefaultMaxKeys)
	for i := range ratelimit.DefaultMaxKeys {
		w.Allow(fmt.Sprint("k", i), t0)
	}
	i := 0
	for b.Loop() {
		w.Allow(fmt.Sprint("n", i), t0.Add(time.Second))
		i++
	}
}
