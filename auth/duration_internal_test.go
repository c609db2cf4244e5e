package auth

import (
	"testing"
	"time"
)

func TestDurationForPeople(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{10 * time.Minute, "10 minutes"},
		{time.Minute, "1 minute"},
		{time.Hour, "1 hour"},
		{90 * time.Minute, "1 hour and 30 minutes"},
		{26*time.Hour + 5*time.Second, "1 day, 2 hours and 5 seconds"},
		{15 * 24 * time.Hour, "15 days"},
		{45 * time.Second, "45 seconds"},
		{1500 * time.Millisecond, "2 seconds"},
		{400 * time.Millisecond, "0 seconds"},
		{0, "0 seconds"},
		{-time.Minute, "0 seconds"},
	} {
		if got := durationForPeople(tc.in); got != tc.want {
			t.Errorf("durationForPeople(%v)=%q, want %q", tc.in, got, tc.want)
		}
	}
}
