package auth

import (
	"fmt"
	"testing"
	"time"

	"corkboard/board"
)

var limT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// TestLimiterSlidingWindow: at most Count events in any Window, and the
// wait answered is until the oldest counted event leaves the window.
func TestLimiterSlidingWindow(t *testing.T) {
	l := newLimiter(Rate{Count: 3, Window: time.Minute}, 10)
	steps := []struct {
		at       time.Duration // after limT0
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
		wait, ok := l.allow("k", limT0.Add(s.at))
		if ok != s.wantOK || wait != s.wantWait {
			t.Fatalf("at %s: allow=(%s, %v), want (%s, %v)", s.at, wait, ok, s.wantWait, s.wantOK)
		}
	}
	if wait, ok := l.allow("other", limT0.Add(61*time.Second)); !ok || wait != 0 {
		t.Fatalf("another key shares the budget: (%s, %v)", wait, ok)
	}
}

// TestLimiterBounded: memory stays bounded however many keys arrive, and
// idle keys are forgotten by a purge.
func TestLimiterBounded(t *testing.T) {
	l := newLimiter(Rate{Count: 2, Window: time.Minute}, 100)
	for i := range 1000 {
		l.allow(fmt.Sprintf("10.0.%d.%d", i/256, i%256), limT0.Add(time.Duration(i)*time.Millisecond))
	}
	if got := l.len(); got > 100 {
		t.Fatalf("limiter holds %d keys, cap 100", got)
	}
	// The most recently used key survived eviction with its count.
	last := fmt.Sprintf("10.0.%d.%d", 999/256, 999%256)
	l.allow(last, limT0.Add(time.Second))
	if _, ok := l.allow(last, limT0.Add(time.Second)); ok {
		t.Fatal("the most recent key lost its count to eviction")
	}
	l.purge(limT0.Add(2 * time.Minute))
	if got := l.len(); got != 0 {
		t.Fatalf("after purge %d keys remain, want 0", got)
	}
}

// TestLimiterEvictsEmptyFirst: at capacity a new key pushes out a key whose
// window is empty before any live one, so cycling through fresh keys does
// not reset a limited key; only when every remembered key is live does the
// key idle longest go (the documented bound).
func TestLimiterEvictsEmptyFirst(t *testing.T) {
	l := newLimiter(Rate{Count: 2, Window: time.Minute}, 4)
	for _, k := range []string{"a", "b", "c"} {
		l.allow(k, limT0)
	}
	l.allow("victim", limT0.Add(10*time.Second))
	l.allow("victim", limT0.Add(10*time.Second))
	at := limT0.Add(61 * time.Second) // a, b, c are empty now; victim is not
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
		if _, ok := l.allow(s.newKey, at); !ok {
			t.Fatalf("new key %s refused", s.newKey)
		}
		if got := l.len(); got > 4 {
			t.Fatalf("after %s the limiter holds %d keys, cap 4", s.newKey, got)
		}
		if s.wantVictim {
			// Asking for the victim again must not refresh it either: only
			// counted events order the keys.
			if wait, ok := l.allow("victim", at); ok || wait != 9*time.Second {
				t.Fatalf("after %s victim=(%s, %v), want refused for 9s", s.newKey, wait, ok)
			}
		}
	}
	if _, ok := l.allow("victim", at); !ok {
		t.Fatal("victim was not the key evicted when every key was live")
	}
}

// TestLimiterEvictionCost: a new key at capacity looks at one entry, not
// at all of them, and a purge at what it removes plus one.
func TestLimiterEvictionCost(t *testing.T) {
	const maxKeys, extra = 1000, 10_000
	l := newLimiter(Rate{Count: 5, Window: time.Hour}, maxKeys)
	for i := range maxKeys + extra { // all live: the worst case
		l.allow(fmt.Sprint("k", i), limT0.Add(time.Duration(i)*time.Millisecond))
	}
	if got := l.len(); got != maxKeys {
		t.Fatalf("limiter holds %d keys, want %d", got, maxKeys)
	}
	if got, want := l.scanned, extra; got != want {
		t.Fatalf("eviction looked at %d entries for %d new keys, want %d", got, extra, want)
	}

	l.scanned = 0
	l.purge(limT0.Add(30 * time.Minute)) // nothing to forget yet
	if got := l.len(); got != maxKeys || l.scanned != 1 {
		t.Fatalf("purge with every key live: %d keys left, %d looked at; want %d and 1", got, l.scanned, maxKeys)
	}
	l.scanned = 0
	l.allow("fresh", limT0.Add(2*time.Hour))
	l.purge(limT0.Add(2 * time.Hour))
	// "fresh" evicted one key (1); the purge removes the other maxKeys-1
	// and looks at "fresh" to keep it (1).
	if got, want := l.scanned, 1+(maxKeys-1)+1; l.len() != 1 || got != want {
		t.Fatalf("purge: %d keys left, %d looked at; want 1 and %d", l.len(), got, want)
	}
}

// TestLimiterClockBackwards: a wall clock stepping back does not let a key
// past its limit.
func TestLimiterClockBackwards(t *testing.T) {
	l := newLimiter(Rate{Count: 2, Window: time.Minute}, 10)
	if _, ok := l.allow("k", limT0.Add(10*time.Second)); !ok {
		t.Fatal("first event refused")
	}
	if _, ok := l.allow("k", limT0); !ok {
		t.Fatal("second event refused")
	}
	// Both count as at +10s, so the window frees at +70s.
	if wait, ok := l.allow("k", limT0); ok || wait != 70*time.Second {
		t.Fatalf("third event=(%s, %v), want refused for 70s", wait, ok)
	}
}

// BenchmarkLimiterNewKeyAtCapacity is the cost of a request with a new key
// when the limiter is full of live keys (an attacker cycling addresses).
func BenchmarkLimiterNewKeyAtCapacity(b *testing.B) {
	l := newLimiter(Rate{Count: 5, Window: time.Hour}, defaultMaxKeys)
	for i := range defaultMaxKeys {
		l.allow(fmt.Sprint("k", i), limT0)
	}
	i := 0
	for b.Loop() {
		l.allow(fmt.Sprint("n", i), limT0.Add(time.Second))
		i++
	}
}

func TestRetrySeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{0, 1},
		{time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{15 * time.Minute, 900},
	}
	for _, tt := range tests {
		if got := board.RetryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("RetryAfterSeconds(%s)=%d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestIPKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"not-an-ip", "not-an-ip"},
	}
	for _, tt := range tests {
		if got := ipKey(tt.in); got != tt.want {
			t.Errorf("ipKey(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}
