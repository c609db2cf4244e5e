package auth

import (
	"fmt"
	"testing"
	"time"
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
		if got := retrySeconds(tt.d); got != tt.want {
			t.Errorf("retrySeconds(%s)=%d, want %d", tt.d, got, tt.want)
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
