//go:build !race

package board_test

import (
	"fmt"
	"strings"
	"testing"

	"corkboard/board"
)

// The race detector allocates on its own, so the counts below hold only
// without it.

// TestMergeTextAllocs: a merge of two edits of neighbouring lines of a
// 20-line note (what a merged push of BenchEditNote does, docs/benchmarks.md)
// allocates what it returns and little else: every allocation of the
// merge is paid again by each merged push, on the path the 10 %
// target measures. Counted, not timed, so it holds on a loaded machine.
func TestMergeTextAllocs(t *testing.T) {
	lines := make([]string, 20)
	for i := range lines {
		lines[i] = fmt.Sprintf("%02d %s", i, strings.Repeat("lorem ipsum ", 4)[:46])
	}
	edit := func(at int, text string) string {
		ls := append([]string(nil), lines...)
		ls[at] = text
		return strings.Join(ls, "\n")
	}
	base := strings.Join(lines, "\n")
	theirs, mine := edit(5, "05 edit by them"), edit(6, "06 edit by me")
	want := strings.Replace(theirs, lines[6], "06 edit by me", 1)
	if got, overlap := board.MergeText(base, theirs, mine); got != want || overlap {
		t.Fatalf("MergeText = %q, %v; want %q, false", got, overlap, want)
	}
	// The lines of the three texts, two line matches, the merged lines and
	// text, and the idempotence check's line match and merge.
	const most = 7
	if got := testing.AllocsPerRun(100, func() { board.MergeText(base, theirs, mine) }); got > most {
		t.Errorf("MergeText allocates %v times, want at most %d", got, most)
	}
}
