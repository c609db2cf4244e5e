package changelog_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

// wideState is a board that reaches every branch of the board renderer:
// empty phase list, names that need double quotes, extra fields, deleted
// stamps, long headings, texts with backtick runs, notes and items given
// out of id order.
func wideState() board.State {
	deleted := "2026-03-02T00:00:00Z"
	return board.State{
		Board:  board.Header{ID: "wide_board-1", Name: "Tabs\tand 'quotes' \u2028 ✓", Version: 9001, UpdatedAt: "2026-03-02T10:00:00.123Z"},
		Phases: &board.Phases{Phases: []json.RawMessage{}, CurrentPhaseID: ""},
		Notes: []board.Note{
			{ID: "z-last", Title: strings.Repeat("long # heading *with* [marks] ", 5), Content: "``` three\n```` four\n", X: 1e-300, Y: -0.5,
				Color: "green", Type: "sticky", UpdatedAt: "2026-03-01T00:00:00Z", Version: 9001,
				Extra: []board.Field{{Name: "zIndex", Value: json.RawMessage(`3`)}, {Name: "tags", Value: json.RawMessage(`["a","b"]`)}}},
			{ID: "a-first", Title: "line\nbreak", Content: "", X: 0, Y: 0, Color: "", Type: "", UpdatedAt: "2026-03-01T00:00:00Z", Version: 1, DeletedAt: &deleted},
			{ID: "m-ü-unicode", Title: "ünïcödé", Content: "plain", X: 123456789012345678901234, Y: 2, Color: "yellow", Type: "note", UpdatedAt: "2026-03-01T00:00:00Z", Version: 5},
		},
		TrackerItems: []board.TrackerItem{
			{ID: "it-b", Key: "", Summary: "only a summary", Type: "bug", Status: "done", UpdatedAt: "2026-03-01T00:00:00Z", Version: 7, DeletedAt: &deleted,
				Extra: []board.Field{{Name: "points", Value: json.RawMessage(`5`)}}},
			{ID: "it-a", Key: "K-1", Summary: "", Type: "task", Status: "", UpdatedAt: "2026-03-01T00:00:00Z", Version: 8, Description: "````\nx\n````"},
			{ID: "it-c", Key: "", Summary: "", Type: "task", UpdatedAt: "2026-03-01T00:00:00Z", Version: 9},
		},
	}
}

// generatedState is a generated board of n notes and n/2 items whose rendering
// is far larger than any write buffer.
func generatedState(n int) board.State {
	s := board.State{Board: board.Header{ID: "big", Name: "Big", Version: int64(n), UpdatedAt: "2026-03-01T00:00:00Z"},
		Notes: []board.Note{}, TrackerItems: []board.TrackerItem{}}
	for i := range n {
		s.Notes = append(s.Notes, board.Note{ID: fmt.Sprintf("n%06d", (i*7919)%n), Title: fmt.Sprintf("Note %d", i),
			Content: strings.Repeat(fmt.Sprintf("line %d of note %d with `code`\n", i%13, i), 1+i%40),
			X:       float64(i) * 1.5, Y: float64(-i), Color: "yellow", Type: "sticky", UpdatedAt: "2026-03-01T00:00:00Z", Version: int64(i + 1)})
	}
	for i := range n / 2 {
		s.TrackerItems = append(s.TrackerItems, board.TrackerItem{ID: fmt.Sprintf("i%06d", i), Key: fmt.Sprintf("K-%d", i),
			Summary: "Summary " + fmt.Sprint(i), Type: "task", Status: "todo", UpdatedAt: "2026-03-01T00:00:00Z", Version: int64(i + 1),
			Description: strings.Repeat("desc ", i%50)})
	}
	return s
}

// bigBoardSHA256 is the SHA-256 of RenderBoard(generatedState(3000)) as the
// renderer wrote it before it streamed (recorded from the buffered
// renderer): the streamed output must keep every byte.
const bigBoardSHA256 = "c99c9edb74e96bc60fb5c6a34ed31c71a8c1acf2e7da7718ab79a27fdd991921"

func TestRenderBoard_GoldenWide(t *testing.T) {
	golden(t, "board-wide.md", changelog.RenderBoard(wideState()))
}

func TestRenderBoard_GoldenBig(t *testing.T) {
	sum := sha256.Sum256(changelog.RenderBoard(generatedState(3000)))
	if got := hex.EncodeToString(sum[:]); got != bigBoardSHA256 {
		t.Fatalf("SHA-256 of the big board's rendering = %s, want %s", got, bigBoardSHA256)
	}
}
