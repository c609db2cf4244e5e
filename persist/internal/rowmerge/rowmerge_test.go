package rowmerge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"corkboard/board"
)

// TestDecodeMatchesUnmarshalJSON: the shortcut reads every stored row as
// the rows' own UnmarshalJSON does, extra fields (read the full way)
// included.
func TestDecodeMatchesUnmarshalJSON(t *testing.T) {
	deleted := "2026-11-22T10:00:00Z"
	var withExtra board.Note
	if err := json.Unmarshal([]byte(`{"id":"n","title":"T","votes":3,"tags":["a"],"x":1}`), &withExtra); err != nil {
		t.Fatal(err)
	}
	notes := []board.Note{
		{ID: "n", Title: "T", Content: "a\nb", X: 1.5, Y: -2, Color: "yellow", Type: "sticky", UpdatedAt: "u", Version: 7},
		{ID: "n", DeletedAt: &deleted},
		withExtra,
	}
	for i, n := range notes {
		js, err := json.Marshal(&n)
		if err != nil {
			t.Fatal(err)
		}
		var want, got board.Note
		if err := json.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		got.Extra = []board.Field{{Name: "stale", Value: []byte("1")}} // must not survive
		if err := decode(js, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("note %d (%s): decode differs from UnmarshalJSON (-want +got):\n%s", i, js, diff)
		}
	}
	it := board.TrackerItem{ID: "i", Key: "K", Type: "story", Summary: "s", Description: strings.Repeat("d\n", 3), Status: "todo", ParentID: "p", Version: 2,
		Extra: []board.Field{{Name: "priority", Value: []byte(`"high"`)}}}
	for _, x := range []board.TrackerItem{it, {ID: "j"}} {
		js, err := json.Marshal(&x)
		if err != nil {
			t.Fatal(err)
		}
		var want, got board.TrackerItem
		if err := json.Unmarshal(js, &want); err != nil {
			t.Fatal(err)
		}
		if err := decode(js, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("item (%s): decode differs from UnmarshalJSON (-want +got):\n%s", js, diff)
		}
	}
}

func BenchmarkDecodeNote(b *testing.B) {
	n := board.Note{ID: "a", Title: "T a", Content: strings.Repeat("0123456789 lorem ipsum dolor sit amet consectetur\n", 20), X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z", Version: 9}
	js, _ := json.Marshal(&n)
	b.Run("shortcut", func(b *testing.B) {
		for b.Loop() {
			var got board.Note
			if err := decode(js, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("UnmarshalJSON", func(b *testing.B) {
		for b.Loop() {
			var got board.Note
			if err := json.Unmarshal(js, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
}
