package rooms

import (
	"testing"
	"time"
)

// TestPresenceTick: 100 ms up to 1,000 connections, one more tick per
// 1,000 begun, at most MaxPresenceTick.
func TestPresenceTick(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, 100 * time.Millisecond}, {1000, 100 * time.Millisecond}, {1001, 200 * time.Millisecond}, {5000, 500 * time.Millisecond}, {10_000, time.Second}, {50_000, time.Second}} {
		if got := presenceTick(c.n); got != c.want {
			t.Errorf("presenceTick(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}
