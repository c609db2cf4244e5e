package main

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestLiveMessageRateFlags: the message budgets take 1 to 1,000,000 a
// second; outside, the flag is named in the error.
func TestLiveMessageRateFlags(t *testing.T) {
	for _, tc := range []struct {
		flag, value string
		ok          bool
	}{
		{"-live-message-rate", "1", true},
		{"-live-message-rate", "0.99", false},
		{"-live-message-rate", "1000000", true},
		{"-live-message-rate", "1000001", false},
		{"-live-user-message-rate", "1", true},
		{"-live-user-message-rate", "0", false},
		{"-live-user-message-rate", "1000000", true},
		{"-live-user-message-rate", "1000001", false},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			cfg, err := parseConfig([]string{tc.flag, tc.value}, func(string) string { return "" }, io.Discard)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := map[string]float64{"-live-message-rate": cfg.LiveMsgRate, "-live-user-message-rate": cfg.LiveUserMsgRate}[tc.flag]; got != mustFloat(t, tc.value) {
					t.Fatalf("%s=%g, want %s", tc.flag, got, tc.value)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.flag) {
				t.Fatalf("err=%v, want one naming %s", err, tc.flag)
			}
		})
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
