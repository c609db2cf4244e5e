package main

import (
	"io"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

// TestLimitFlags: the limits' flags default to the documented values,
// take values at their edges and refuse those past them.
func TestLimitFlags(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.limits(), (board.Limits{NotesPerBoard: 50_000, ItemsPerBoard: 50_000, FramesPerBoard: 1_000, ConnectorsPerBoard: 50_000, BoardsPerUser: 1_000, ChangelogBytesPerBoard: 64 << 20}); got != want {
		t.Fatalf("default limits %+v, want %+v", got, want)
	}
	if cfg.SnapshotKeep != 10 || cfg.SnapshotMaxBytes != 32<<20 || cfg.SnapshotSlots != 2 {
		t.Fatalf("snapshot defaults keep=%d max=%d slots=%d, want 10, 32 MiB, 2", cfg.SnapshotKeep, cfg.SnapshotMaxBytes, cfg.SnapshotSlots)
	}
	for _, tc := range []struct {
		args []string
		bad  string // "" when accepted
	}{
		{[]string{"-snapshot-keep", "1"}, ""},
		{[]string{"-snapshot-keep", "100"}, ""},
		{[]string{"-snapshot-keep", "101"}, "-snapshot-keep"},
		{[]string{"-snapshot-keep", "0"}, "-snapshot-keep"},
		{[]string{"-snapshot-max-bytes", "1"}, ""},
		{[]string{"-snapshot-max-bytes", "0"}, "-snapshot-max-bytes"},
		{[]string{"-snapshot-slots", "0"}, "-snapshot-slots"},
		{[]string{"-max-notes-per-board", "1"}, ""},
		{[]string{"-max-notes-per-board", "0"}, "-max-notes-per-board"},
		{[]string{"-max-items-per-board", "0"}, "-max-items-per-board"},
		{[]string{"-max-boards-per-user", "0"}, "-max-boards-per-user"},
		{[]string{"-max-changelog-bytes-per-board", "1"}, ""},
		{[]string{"-max-changelog-bytes-per-board", "0"}, "-max-changelog-bytes-per-board"},
	} {
		t.Run(strings.Join(tc.args, "="), func(t *testing.T) {
			_, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
			if tc.bad == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
				t.Fatalf("err = %v, want one naming %s", err, tc.bad)
			}
		})
	}
	if changelog.MaxKeep != 100 {
		t.Fatalf("MaxKeep = %d; the table above tests 100", changelog.MaxKeep)
	}
}

// TestOpenStoreSetsLimits: the store the server opens checks the limits
// the flags give.
func TestOpenStoreSetsLimits(t *testing.T) {
	cfg, err := parseConfig([]string{"-data", t.TempDir(), "-max-boards-per-user", "1"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := openStore(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ClaimBoard(t.Context(), "b1", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimBoard(t.Context(), "b2", "ada@example.com"); board.ErrorCode(err) != board.ETOOLARGE {
		t.Fatalf("second claim with -max-boards-per-user 1: %v, want too_large", err)
	}
}
