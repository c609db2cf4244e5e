package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds ParseRate accepts. The count bound also bounds the memory of one
// Window key (one timestamp per counted event).
const (
	MaxRateCount  = 10000
	MinRateWindow = time.Second
	MaxRateWindow = 7 * 24 * time.Hour
)

// Rate is Count events per Window: for a Window, at most Count in any
// Window; for a Budget, at most Count in a window that opens at the first;
// for a Bucket, Count at once, refilled evenly over Window. It implements
// flag.Value, so a command can bind a flag to it directly.
type Rate struct {
	Count  int
	Window time.Duration
}

// ParseRate parses "count/window", e.g. "5/15m" (count 1 to 10000, window a
// Go duration from 1s to 168h).
func ParseRate(s string) (Rate, error) {
	c, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want count/window, e.g. 5/15m", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if err != nil || n < 1 || n > MaxRateCount {
		return Rate{}, fmt.Errorf("rate %q: count must be a whole number from 1 to %d", s, MaxRateCount)
	}
	d, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || d < MinRateWindow || d > MaxRateWindow {
		return Rate{}, fmt.Errorf("rate %q: window must be a duration from %s to %s, e.g. 15m", s, MinRateWindow, MaxRateWindow)
	}
	return Rate{Count: n, Window: d}, nil
}

// String formats r the way ParseRate reads it.
func (r Rate) String() string {
	if r.Count == 0 && r.Window == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%s", r.Count, shortDuration(r.Window))
}

// Set parses s into r (flag.Value).
func (r *Rate) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// shortDuration drops the zero units time.Duration.String prints ("15m0s").
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// normal returns r with a count of at least one and a positive window, so
// that no limiter divides by zero or admits nothing at all.
func (r Rate) normal() Rate {
	r.Count = max(r.Count, 1)
	if r.Window <= 0 {
		r.Window = time.Second
	}
	return r
}
