package auth

import (
	"testing"
	"time"

	"corkboard/board"
)

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
