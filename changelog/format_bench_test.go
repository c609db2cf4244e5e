package changelog_test

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

// bigState is a board with 500 notes of 2,000 characters and 200 items, the
// size a busy board's current.md reaches.
func bigState() board.State {
	s := board.State{Board: board.Header{ID: "big", Name: "Big board", Version: 9000, UpdatedAt: "2026-03-01T10:00:00Z"}}
	content := strings.Repeat("Some *Markdown* with `code` and a list:\n- item\n", 40)
	for i := range 500 {
		s.Notes = append(s.Notes, board.Note{
			ID: "note-" + strconv.Itoa(i), Title: "Note " + strconv.Itoa(i), Content: content,
			X: float64(i) * 13.7, Y: float64(i) * -2.25, Color: "yellow", Type: "sticky",
			UpdatedAt: "2026-03-01T10:00:00Z", Version: int64(i),
		})
	}
	for i := range 200 {
		s.TrackerItems = append(s.TrackerItems, board.TrackerItem{
			ID: "item-" + strconv.Itoa(i), Key: "CORK-" + strconv.Itoa(i), Type: "task", Summary: "Do thing " + strconv.Itoa(i),
			Description: content, Status: "todo", UpdatedAt: "2026-03-01T10:00:00Z", Version: int64(i),
		})
	}
	return s
}

func BenchmarkRenderBoard(b *testing.B) {
	s := bigState()
	b.ReportAllocs()
	for b.Loop() {
		changelog.RenderBoard(s)
	}
}

func BenchmarkParseBoard(b *testing.B) {
	doc := changelog.RenderBoard(bigState())
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := changelog.ParseBoard(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseNote(b *testing.B) {
	doc := changelog.RenderNote(exampleNote())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := changelog.ParseNote(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBoardAnswer compares, side by side in one run, what answering
// GET current.md from a board's state costs beyond the state: the
// rendering built whole (RenderBoard, as before) against the rendering
// written through WriteBoard's buffer to the connection (io.Discard
// here). B/op is the figure: the first grows with the board, the second
// stays at the buffer plus the sorted copies of the row lists.
func BenchmarkBoardAnswer(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		// As the stores read a board: rows in ID order.
		s := generatedState(n)
		slices.SortFunc(s.Notes, func(a, b board.Note) int { return strings.Compare(a.ID, b.ID) })
		b.Run(fmt.Sprintf("Whole/notes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.Discard.Write(changelog.RenderBoard(s)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Streamed/notes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := changelog.WriteBoard(io.Discard, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
