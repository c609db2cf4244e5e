package rowmerge

import (
	"encoding/json"
	"fmt"
	"slices"
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

// TestDecodeTakesSinglePass: rows as the stores encode them, whatever
// their strings hold, are read in one pass (decodeNote, decodeItem), and
// as UnmarshalJSON reads them.
func TestDecodeTakesSinglePass(t *testing.T) {
	deleted := "2026-11-22T10:00:00Z"
	texts := []string{"", "plain", "a\nb\r\n\tc", `quote " backslash \ slash /`, "<b>&amp;</b>", "\u2028\u2029 line separators",
		"control \x00\x01\x1f\x7f", "é ü 日本語 🎉 \U0001F600", "\ufffd", "invalid \xff UTF-8", strings.Repeat("lorem ipsum\n", 100)}
	floats := []float64{0, -0.5, 1, 2.5e-7, 1e21, -1e300, 123456789.125, 5e-324}
	for i, text := range texts {
		n := board.Note{ID: text, Title: text, Content: text, X: floats[i%len(floats)], Y: -floats[(i+3)%len(floats)],
			Color: text, Type: "sticky", UpdatedAt: text, Version: int64(i) << 40}
		if i%2 == 1 {
			n.DeletedAt = &deleted
		}
		it := board.TrackerItem{ID: text, Key: text, Type: text, Summary: text, Description: text, Status: text, ParentID: text,
			UpdatedAt: text, Version: -int64(i), DeletedAt: n.DeletedAt}
		checkSinglePass(t, &n, decodeNote)
		checkSinglePass(t, &it, decodeItem)
		checkSinglePass(t, &board.TrackerItem{ID: text}, decodeItem) // omitempty fields absent
	}
}

// TestEncodeIsMarshal: Encode writes what json.Marshal writes, with and
// without extra fields.
func TestEncodeIsMarshal(t *testing.T) {
	deleted := "2026-11-22T10:00:00Z"
	for _, text := range []string{"", "plain", "<b>&amp;</b>", "\u2028\u2029", "control \x00\x1f", "invalid \xff UTF-8", "é 🎉", `"quoted" \ /`} {
		quoted, _ := json.Marshal("<b>\u2028" + text)
		var extra board.Note
		if err := json.Unmarshal([]byte(`{"id":"n","votes":`+string(quoted)+`,"tags":[1, 2]}`), &extra); err != nil {
			t.Fatal(err)
		}
		notes := []board.Note{{ID: text, Title: text, Content: text, X: 1e21, Y: -0.5, UpdatedAt: text, Version: 3, DeletedAt: &deleted}, extra}
		for _, n := range notes {
			checkEncode(t, &n)
		}
		items := []board.TrackerItem{{ID: text, Summary: text, Description: text, ParentID: text}, {ID: "i", Extra: extra.Extra}}
		for _, it := range items {
			checkEncode(t, &it)
		}
	}
}

func checkEncode[T any](t *testing.T, row *T) {
	t.Helper()
	want, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(row)
	if err != nil || string(got) != string(want) {
		t.Fatalf("Encode = %s, %v; json.Marshal gives %s", got, err, want)
	}
}

func checkSinglePass[T any](t *testing.T, row *T, fast func([]byte, *T) bool) {
	t.Helper()
	js, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var want, got T
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	if !fast(js, &got) {
		t.Fatalf("%s: not read in one pass", js)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s: the single pass differs from UnmarshalJSON (-want +got):\n%s", js, diff)
	}
}

// FuzzDecode: decode reads anything as UnmarshalJSON does (the same row,
// or an error when it fails), and the single pass never reads what
// UnmarshalJSON would read otherwise.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","title":"T a","content":"x\ny","x":1,"y":2,"color":"yellow","type":"sticky","updatedAt":"u","version":9,"deletedAt":null}`,
		`{"id":"i","key":"K","type":"story","summary":"s","description":"d\u003c","status":"todo","updatedAt":"u","version":2,"deletedAt":"t"}`,
		`{"id":"n","votes":3}`, `{"ID":"x"}`, `{"id":"\ud83d\ude00"}`, `{"id":"\ud83d"}`, `{"x":1e400}`, `{"version":1.5}`,
		`{"version":null}`, `{"title":null}`, `null`, `{}`, ` { "id" : "a" } `, `{"id":"a"} x`, `{"id":"a","id":"b"}`, "{\"id\":\"\xff\"}",
		`{"x":-0}`, `{"x":01}`, `{"deletedAt":"a","deletedAt":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, data, decodeNote)
		fuzzDecode(t, data, decodeItem)
	})
}

func fuzzDecode[T any](t *testing.T, data []byte, fast func([]byte, *T) bool) {
	var want, got, single T
	wantErr := json.Unmarshal(data, &want)
	err := decode(data, &got)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: decode err=%v, UnmarshalJSON err=%v", data, err, wantErr)
	}
	if wantErr == nil {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: decode differs from UnmarshalJSON (-want +got):\n%s", data, diff)
		}
	}
	if fast(data, &single) {
		if wantErr != nil {
			t.Fatalf("%q: read in one pass, but UnmarshalJSON fails: %v", data, wantErr)
		}
		if diff := cmp.Diff(want, single); diff != "" {
			t.Fatalf("%q: the single pass differs from UnmarshalJSON (-want +got):\n%s", data, diff)
		}
	}
}

func BenchmarkDecodeNote(b *testing.B) {
	n := board.Note{ID: "a", Title: "T a", Content: strings.Repeat("0123456789 lorem ipsum dolor sit amet consectetur\n", 20), X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z", Version: 9}
	js, _ := json.Marshal(&n)
	b.Run("single-pass", func(b *testing.B) {
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

// editedNotes returns BenchEditNote's three states of a merged push: the
// base (20 lines of about 50 bytes), theirs (one line changed) and mine
// (the next line changed), as stored JSON where the store reads them.
func editedNotes(tb testing.TB) (base, theirs []byte, mine board.Note) {
	tb.Helper()
	lines := make([]string, 20)
	for i := range lines {
		lines[i] = fmt.Sprintf("%02d %s", i, strings.Repeat("lorem ipsum ", 4)[:46])
	}
	n := board.Note{ID: "a", Title: "T a", X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z"}
	at := func(version int64, edit int, text string) board.Note {
		ls := slices.Clone(lines)
		if edit >= 0 {
			ls[edit] = text
		}
		c := n
		c.Content, c.Version = strings.Join(ls, "\n"), version
		return c
	}
	b, t := at(7, -1, ""), at(8, 5, fmt.Sprintf("%02d edit %-40d", 5, 8))
	mine = at(0, 6, fmt.Sprintf("%02d edit %-40d", 6, 9))
	mine.BaseVersion = 7
	bj, err := json.Marshal(&b)
	if err != nil {
		tb.Fatal(err)
	}
	tj, err := json.Marshal(&t)
	if err != nil {
		tb.Fatal(err)
	}
	return bj, tj, mine
}

// BenchmarkResolveNoteEdit is the client side of one merged push of
// BenchEditNote, without the database: Resolve (two decodes and the
// merge), and the encoding of its result.
func BenchmarkResolveNoteEdit(b *testing.B) {
	base, theirs, mine := editedNotes(b)
	cur, bs := &State{Version: 8, Data: theirs}, &State{Version: 7, Data: base}
	b.Run("Resolve", func(b *testing.B) {
		for b.Loop() {
			res, err := Resolve(mine, mine.BaseVersion, cur, bs, nil, board.MergeNote)
			if err != nil || res.Outcome != Merged || res.Overlap {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var n board.Note
			if err := decode(theirs, &n); err != nil {
				b.Fatal(err)
			}
		}
	})
	var bn, tn board.Note
	decode(base, &bn)
	decode(theirs, &tn)
	b.Run("MergeNote", func(b *testing.B) {
		for b.Loop() {
			board.MergeNote(bn, tn, mine)
		}
	})
	merged, _ := board.MergeNote(bn, tn, mine)
	b.Run("Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(&merged); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Encode(&merged); err != nil {
				b.Fatal(err)
			}
		}
	})
}
