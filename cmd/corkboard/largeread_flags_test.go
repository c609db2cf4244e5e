package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"corkboard/hub"
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

// TestNodeLeaseFlag: -node-lease's default is the hub's, 0 turns the lease
// off (every no-change pull on several nodes asks the store), and its
// edges are 1ms and 1s.
func TestNodeLeaseFlag(t *testing.T) {
	noEnv := func(string) string { return "" }
	cfg, err := parseConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeLease != hub.DefaultLease || hubLease(cfg.NodeLease) != hub.DefaultLease {
		t.Fatalf("default %s, want hub.DefaultLease %s", cfg.NodeLease, hub.DefaultLease)
	}
	if hubLease(0) >= 0 {
		t.Fatalf("-node-lease 0 gives the hub %s, want a negative lease (off)", hubLease(0))
	}
	for _, tc := range []struct {
		arg     string
		wantErr bool
	}{
		{"0", false}, {"1ms", false}, {"999us", true}, {"1s", false}, {"1001ms", true}, {"-1ms", true},
	} {
		_, err := parseConfig([]string{"-node-lease", tc.arg}, noEnv, io.Discard)
		if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), "-node-lease")) {
			t.Errorf("-node-lease %s: err=%v, want error %v naming the flag", tc.arg, err, tc.wantErr)
		}
	}
}
