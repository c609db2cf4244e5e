package board_test

import (
	"encoding/json"
	"strings"
	"testing"

	"corkboard/board"
)

// TestNoteSizeJSON checks what the spec's clients see: a note that never
// had a size is written without w and h, and one that has them gives them
// back; a stored row whose w or h is not a number (an extra field of a
// client from before they were the note's own) still reads.
func TestNoteSizeJSON(t *testing.T) {
	t.Run("OK no size is left out", func(t *testing.T) {
		b, err := json.Marshal(board.Note{ID: "n1", X: 1, Y: 2})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"w"`) || strings.Contains(string(b), `"h"`) {
			t.Fatalf("Marshal=%s, want no w or h", b)
		}
	})
	t.Run("OK round trip", func(t *testing.T) {
		in := board.Note{ID: "n1", X: 1, Y: 2, W: 300.5, H: 120, Extra: []board.Field{{Name: "z", Value: json.RawMessage("3")}}}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"w":300.5,"h":120`) {
			t.Fatalf("Marshal=%s, want w and h", b)
		}
		var out board.Note
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if out.W != 300.5 || out.H != 120 || len(out.Extra) != 1 {
			t.Fatalf("Unmarshal=%+v, want w 300.5, h 120 and one extra field", out)
		}
	})
	for _, legacy := range []string{`"w":"wide","h":null`, `"w":300`, `"w":50,"h":50`, `"w":300,"h":[1]`} {
		t.Run("OK legacy "+legacy, func(t *testing.T) {
			var out board.Note
			if err := json.Unmarshal([]byte(`{"id":"n1",`+legacy+`}`), &out); err != nil {
				t.Fatalf("Unmarshal=%v, want nil", err)
			}
			if out.W != 0 || out.H != 0 || len(out.Extra) != 0 {
				t.Fatalf("Unmarshal=%+v, want no size and no extra field", out)
			}
		})
	}
}
