package persist_test

import (
	"testing"

	"corkboard/persist"
)

// TestBoardCountsOf checks that every kind counted per board lands in its
// own field and that the kinds of no board have none: the migration's
// source-side count and PostgreSQL's DumpCounts both go through Of.
func TestBoardCountsOf(t *testing.T) {
	want := map[string]func(persist.BoardCounts) int64{
		persist.CountNotes:      func(b persist.BoardCounts) int64 { return b.Notes },
		persist.CountItems:      func(b persist.BoardCounts) int64 { return b.Items },
		persist.CountFrames:     func(b persist.BoardCounts) int64 { return b.Frames },
		persist.CountConnectors: func(b persist.BoardCounts) int64 { return b.Connectors },
		persist.CountTombstones: func(b persist.BoardCounts) int64 { return b.Tombstones },
		persist.CountRevisions:  func(b persist.BoardCounts) int64 { return b.Revisions },
		persist.CountVoteDots:   func(b persist.BoardCounts) int64 { return b.VoteDots },
		persist.CountKeys:       func(b persist.BoardCounts) int64 { return b.Keys },
		persist.CountLogEntries: func(b persist.BoardCounts) int64 { return b.LogEntries },
		persist.CountSnapshots:  func(b persist.BoardCounts) int64 { return b.Snapshots },
		persist.CountLinks:      func(b persist.BoardCounts) int64 { return b.Links },
	}
	for _, kind := range persist.CountKinds {
		var b persist.BoardCounts
		n := b.Of(kind)
		field, counted := want[kind]
		if !counted {
			if n != nil {
				t.Errorf("Of(%q) is a field; want nil for a kind of no board", kind)
			}
			continue
		}
		if n == nil {
			t.Fatalf("Of(%q) = nil, want its field", kind)
		}
		*n = 7
		if got := field(b); got != 7 {
			t.Errorf("Of(%q) set another field: its own is %d, want 7 (%+v)", kind, got, b)
		}
		if sum(b) != 7 {
			t.Errorf("Of(%q) set more than its field: %+v", kind, b)
		}
	}
}

// sum is the total of b's per-kind counts.
func sum(b persist.BoardCounts) int64 {
	return b.Notes + b.Items + b.Frames + b.Connectors + b.Tombstones + b.Revisions + b.VoteDots + b.Keys + b.LogEntries + b.Snapshots + b.Links
}
