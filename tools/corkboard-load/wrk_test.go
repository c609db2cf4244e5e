package main

import (
	"os"
	"testing"
	"time"
)

// testdata/wrk.txt is wrk 4.1.0's real report (-t1 -c4 -d1s --latency).
func TestParseWrk(t *testing.T) {
	out, err := os.ReadFile("testdata/wrk.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 23290 || r.RequestsPerS != 23246.18 || r.Non2xx != 23290 || r.SocketErrors != 0 {
		t.Fatalf("parsed %+v", r)
	}
	want := map[string]float64{"50": 0.122, "75": 0.243, "90": 0.835, "99": 5.71}
	for p, v := range want {
		if r.LatencyMs[p] != v {
			t.Errorf("p%s=%v ms, want %v", p, r.LatencyMs[p], v)
		}
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n"); err == nil {
		t.Fatal("a failed wrk run parsed")
	}
	errs, err := parseWrk("  Socket errors: connect 1, read 2, write 3, timeout 4\nRequests/sec: 10.00\n")
	if err != nil || errs.SocketErrors != 10 {
		t.Fatalf("socket errors %d, %v; want 10", errs.SocketErrors, err)
	}
}

func TestParseWrkDuration(t *testing.T) {
	tests := map[string]time.Duration{
		"812.00us": 812 * time.Microsecond,
		"1.50ms":   1500 * time.Microsecond,
		"2.00s":    2 * time.Second,
		"1.00m":    time.Minute,
	}
	for in, want := range tests {
		if got, err := parseWrkDuration(in); err != nil || got != want {
			t.Errorf("parseWrkDuration(%q)=%v,%v, want %v", in, got, err, want)
		}
	}
	if _, err := parseWrkDuration("3h"); err == nil {
		t.Error("3h accepted")
	}
}
