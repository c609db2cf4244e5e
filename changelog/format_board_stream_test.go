package changelog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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

// writeRecorder keeps what is written and the largest single write.
type writeRecorder struct {
	bytes.Buffer
	writes, largest int
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes++
	w.largest = max(w.largest, len(p))
	return w.Buffer.Write(p)
}

func TestWriteBoard_SameBytesThroughASmallBuffer(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    board.State
	}{
		{"Wide", wideState()},
		{"Generated", generatedState(3000)},
		{"Empty", board.State{Board: board.Header{ID: "fresh-board"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w writeRecorder
			if err := changelog.WriteBoard(&w, tc.s); err != nil {
				t.Fatal(err)
			}
			want := changelog.RenderBoard(tc.s)
			if !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("WriteBoard wrote %d bytes that differ from RenderBoard's %d", w.Len(), len(want))
			}
			if w.largest > 32<<10 {
				t.Fatalf("largest write %d bytes, want at most 32 KiB", w.largest)
			}
		})
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriteBoard_WriterError(t *testing.T) {
	boom := errors.New("client went away")
	if err := changelog.WriteBoard(failingWriter{boom}, generatedState(100)); !errors.Is(err, boom) {
		t.Fatalf("WriteBoard = %v, want %v", err, boom)
	}
}

// TestBoardWriter_RowByRow: rows fed one at a time, as a store would read
// them off its index, give RenderBoard's bytes; rows out of order fail.
func TestBoardWriter_RowByRow(t *testing.T) {
	s := wideState()
	var b bytes.Buffer
	bw := changelog.NewBoardWriter(&b, s.Board, s.Phases)
	notes, items := slices.Clone(s.Notes), slices.Clone(s.TrackerItems)
	slices.SortFunc(notes, func(a, b board.Note) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(items, func(a, b board.TrackerItem) int { return strings.Compare(a.ID, b.ID) })
	for _, n := range notes {
		bw.Note(n)
	}
	for _, it := range items {
		bw.Item(it)
	}
	if err := bw.End(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), changelog.RenderBoard(s)) {
		t.Fatal("row by row differs from RenderBoard")
	}

	t.Run("OutOfOrder", func(t *testing.T) {
		bw := changelog.NewBoardWriter(io.Discard, s.Board, nil)
		bw.Note(board.Note{ID: "b"})
		bw.Note(board.Note{ID: "a"})
		if err := bw.End(); err == nil {
			t.Fatal("End = nil for notes out of order")
		}
	})
	t.Run("NoteAfterItems", func(t *testing.T) {
		bw := changelog.NewBoardWriter(io.Discard, s.Board, nil)
		bw.Item(board.TrackerItem{ID: "i"})
		bw.Note(board.Note{ID: "n"})
		if err := bw.End(); err == nil {
			t.Fatal("End = nil for a note after the items")
		}
	})
}
