//go:build !race

package rowmerge

import (
	"testing"

	"corkboard/board"
)

// The race detector allocates on its own, so the counts below hold only
// without it.

// TestResolveAllocs: a merged push of BenchEditNote (docs/benchmarks.md)
// decodes two stored notes and merges them; each decode takes one
// allocation for all the note's strings, and the merge its own
// (board.TestMergeTextAllocs). Counted, not timed, so it holds on a
// loaded machine.
func TestResolveAllocs(t *testing.T) {
	base, theirs, mine := editedNotes(t)
	cur, bs := &State{Version: 8, Data: theirs}, &State{Version: 7, Data: base}
	var n board.Note
	if got := testing.AllocsPerRun(100, func() { _ = decode(theirs, &n) }); got > 1 {
		t.Errorf("decode of a stored note allocates %v times, want 1", got)
	}
	// Two decodes, the two states they fill (which escape through the
	// generic decode), and MergeText's 7: 19 before the shared buffer.
	const most = 11
	if got := testing.AllocsPerRun(100, func() {
		if res, err := Resolve(mine, mine.BaseVersion, cur, bs, nil, board.MergeNote); err != nil || res.Outcome != Merged {
			t.Fatal(res, err)
		}
	}); got > most {
		t.Errorf("Resolve of a merged note edit allocates %v times, want at most %d", got, most)
	}
}
