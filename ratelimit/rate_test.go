package ratelimit_test

import (
	"flag"
	"io"
	"testing"
	"time"

	"corkboard/ratelimit"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    ratelimit.Rate
		wantErr bool
	}{
		{"5/15m", ratelimit.Rate{Count: 5, Window: 15 * time.Minute}, false},
		{"30/15m", ratelimit.Rate{Count: 30, Window: 15 * time.Minute}, false},
		{" 10 / 1h30m ", ratelimit.Rate{Count: 10, Window: 90 * time.Minute}, false},
		{"1/1s", ratelimit.Rate{Count: 1, Window: time.Second}, false},
		{"10000/168h", ratelimit.Rate{Count: 10000, Window: 168 * time.Hour}, false},
		{"", ratelimit.Rate{}, true},
		{"5", ratelimit.Rate{}, true},
		{"5/", ratelimit.Rate{}, true},
		{"/15m", ratelimit.Rate{}, true},
		{"0/15m", ratelimit.Rate{}, true},
		{"-1/15m", ratelimit.Rate{}, true},
		{"10001/15m", ratelimit.Rate{}, true},
		{"five/15m", ratelimit.Rate{}, true},
		{"5/15", ratelimit.Rate{}, true},
		{"5/0s", ratelimit.Rate{}, true},
		{"5/500ms", ratelimit.Rate{}, true},
		{"5/169h", ratelimit.Rate{}, true},
		{"5/-15m", ratelimit.Rate{}, true},
		{"5/15m/2", ratelimit.Rate{}, true},
		{"5.5/15m", ratelimit.Rate{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ratelimit.ParseRate(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseRate(%q) err=%v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("ParseRate(%q)=%+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestRateString(t *testing.T) {
	tests := []struct {
		r    ratelimit.Rate
		want string
	}{
		{ratelimit.Rate{Count: 5, Window: 15 * time.Minute}, "5/15m"},
		{ratelimit.Rate{Count: 30, Window: time.Hour}, "30/1h"},
		{ratelimit.Rate{Count: 2, Window: 90 * time.Minute}, "2/1h30m"},
		{ratelimit.Rate{Count: 1, Window: 45 * time.Second}, "1/45s"},
		{ratelimit.Rate{}, ""},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v.String()=%q, want %q", tt.r, got, tt.want)
		}
		if tt.want == "" {
			continue
		}
		back, err := ratelimit.ParseRate(tt.want)
		if err != nil || back != tt.r {
			t.Errorf("ParseRate(%q)=%+v, %v; want %+v", tt.want, back, err, tt.r)
		}
	}
}

// TestRateFlag: a command binds a flag straight to a Rate.
func TestRateFlag(t *testing.T) {
	fs := flag.NewFlagSet("corkboard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r := ratelimit.Rate{Count: 5, Window: 15 * time.Minute}
	fs.Var(&r, "otp-email-limit", "send-otp limit per address")
	if err := fs.Parse([]string{"-otp-email-limit", "3/10m"}); err != nil {
		t.Fatal(err)
	}
	if want := (ratelimit.Rate{Count: 3, Window: 10 * time.Minute}); r != want {
		t.Fatalf("flag set %+v, want %+v", r, want)
	}
	if err := fs.Parse([]string{"-otp-email-limit", "lots"}); err == nil {
		t.Fatal("a malformed rate flag was accepted")
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"5/15m", "30/15m", "1/1s", "0/1m", "5/", "x/y", "10000/168h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ratelimit.ParseRate(s)
		if err != nil {
			return
		}
		if r.Count < 1 || r.Count > ratelimit.MaxRateCount || r.Window < ratelimit.MinRateWindow || r.Window > ratelimit.MaxRateWindow {
			t.Fatalf("ParseRate(%q)=%+v is out of bounds", s, r)
		}
		back, err := ratelimit.ParseRate(r.String())
		if err != nil || back != r {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, r, r.String(), back, err)
		}
	})
}
