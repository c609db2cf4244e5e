package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestLargeReadFlags: the large-read gate's flags, their defaults and
// their edges (docs/sync.md, "Large reads").
func TestLargeReadFlags(t *testing.T) {
	noEnv := func(string) string { return "" }
	t.Run("Defaults", func(t *testing.T) {
		cfg, err := parseConfig(nil, noEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.LargeReadsPerUser != 4 || cfg.LargeReads != 16 || cfg.LargeReadWait != 5*time.Second {
			t.Fatalf("defaults %d/%d/%s, want 4/16/5s", cfg.LargeReadsPerUser, cfg.LargeReads, cfg.LargeReadWait)
		}
	})
	for _, tc := range []struct {
		args    []string
		wantErr string // "" for accepted
	}{
		{[]string{"-large-reads-per-user", "1"}, ""},
		{[]string{"-large-reads-per-user", "0"}, "-large-reads-per-user"},
		{[]string{"-large-reads", "1"}, ""},
		{[]string{"-large-reads", "0"}, "-large-reads"},
		{[]string{"-large-read-wait", "1ms"}, ""},
		{[]string{"-large-read-wait", "999us"}, "-large-read-wait"},
		{[]string{"-large-read-wait", "1m"}, ""},
		{[]string{"-large-read-wait", "1m1s"}, "-large-read-wait"},
	} {
		t.Run(strings.Join(tc.args, "="), func(t *testing.T) {
			_, err := parseConfig(tc.args, noEnv, io.Discard)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err=%v, want accepted", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err=%v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}
