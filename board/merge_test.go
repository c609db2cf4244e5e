package board_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"corkboard/board"
)

// vector is one golden case of testdata/merge/vectors.json, shared with the
// browser's merge (web/src/sync/merge.test.ts).
type vector struct {
	Name    string          `json:"name"`
	Kind    string          `json:"kind"`
	Base    json.RawMessage `json:"base"`
	Theirs  json.RawMessage `json:"theirs"`
	Mine    json.RawMessage `json:"mine"`
	Want    json.RawMessage `json:"want"`
	Overlap bool            `json:"overlap"`
}

func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	data, err := os.ReadFile("../testdata/merge/vectors.json")
	if err != nil {
		tb.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		tb.Fatalf("vectors.json: %v", err)
	}
	return vs
}

func decode[T any](tb testing.TB, raw json.RawMessage) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func TestMergeVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var got, want any
			var overlap bool
			switch v.Kind {
			case "text":
				want = decode[string](t, v.Want)
				got, overlap = board.MergeText(decode[string](t, v.Base), decode[string](t, v.Theirs), decode[string](t, v.Mine))
			case "note":
				want = decode[board.Note](t, v.Want)
				got, overlap = board.MergeNote(decode[board.Note](t, v.Base), decode[board.Note](t, v.Theirs), decode[board.Note](t, v.Mine))
			case "item":
				want = decode[board.TrackerItem](t, v.Want)
				got, overlap = board.MergeItem(decode[board.TrackerItem](t, v.Base), decode[board.TrackerItem](t, v.Theirs), decode[board.TrackerItem](t, v.Mine))
			case "connector":
				want = decode[board.Connector](t, v.Want)
				got, overlap = board.MergeConnector(decode[board.Connector](t, v.Base), decode[board.Connector](t, v.Theirs), decode[board.Connector](t, v.Mine))
			case "frame":
				want = decode[board.Frame](t, v.Want)
				got, overlap = board.MergeFrame(decode[board.Frame](t, v.Base), decode[board.Frame](t, v.Theirs), decode[board.Frame](t, v.Mine))
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("merged\n %s\nwant\n %s", g, w)
			}
			if overlap != v.Overlap {
				t.Errorf("overlap=%v, want %v", overlap, v.Overlap)
			}
		})
	}
}

// TestMergeTextBoundedWork merges two texts that share no line, each of the
// largest size a note may have: the diff gives up at board.MaxDiffWork and
// the merge takes mine's stretch whole, reporting the overlap.
func TestMergeTextBoundedWork(t *testing.T) {
	var base, theirs, mine strings.Builder
	for i := range 15000 {
		base.WriteString("b\n")
		if i%2 == 0 {
			theirs.WriteString("t\n")
		} else {
			theirs.WriteString("b\n")
		}
		mine.WriteString("m\n")
	}
	got, overlap := board.MergeText(base.String(), theirs.String(), mine.String())
	if got != mine.String() || !overlap {
		t.Fatalf("merge of unrelated texts: overlap=%v, mine kept=%v", overlap, got == mine.String())
	}
}

// checkMerge holds the properties every merge has: it keeps every line
// that only one side added, keeps every line mine added, and merging the
// same edit again gives the same text.
func checkMerge(t *testing.T, base, theirs, mine string) {
	got, overlap := board.MergeText(base, theirs, mine)
	lines := func(s string) map[string]bool {
		set := map[string]bool{}
		for _, l := range strings.SplitAfter(s, "\n") {
			set[strings.TrimSuffix(l, "\n")] = true
		}
		return set
	}
	inBase, inGot := lines(base), lines(got)
	sides := []string{mine}
	if !overlap {
		sides = append(sides, theirs)
	}
	for _, side := range sides {
		for l := range lines(side) {
			if !inBase[l] && !inGot[l] {
				t.Fatalf("merge(%q, %q, %q) = %q (overlap %v) lost the added line %q", base, theirs, mine, got, overlap, l)
			}
		}
	}
	again, _ := board.MergeText(base, got, mine)
	if again != got {
		t.Fatalf("merge(%q, %q, %q) = %q, but merging mine again gives %q", base, theirs, mine, got, again)
	}
}

func TestMergeTextProperties(t *testing.T) {
	words := []string{"a", "b", "c", "", "- [ ] x", "- [x] x"}
	// Every base, theirs and mine of up to three lines from a small
	// alphabet, with and without a final line break.
	var texts []string
	var build func(prefix []string)
	build = func(prefix []string) {
		s := strings.Join(prefix, "\n")
		texts = append(texts, s)
		if len(prefix) > 0 {
			texts = append(texts, s+"\n")
		}
		if len(prefix) == 3 {
			return
		}
		for _, w := range words[:4] {
			build(append(prefix, w))
		}
	}
	build(nil)
	for _, b := range texts[:40] {
		for _, th := range texts {
			for _, m := range texts[:60] {
				checkMerge(t, b, th, m)
			}
		}
	}
}

func FuzzMergeText(f *testing.F) {
	for _, v := range loadVectors(f) {
		if v.Kind == "text" {
			f.Add(decode[string](f, v.Base), decode[string](f, v.Theirs), decode[string](f, v.Mine))
		}
	}
	f.Fuzz(func(t *testing.T, base, theirs, mine string) {
		checkMerge(t, base, theirs, mine)
	})
}

// TestMergeVectorKinds keeps every kind of row that merges in the shared
// vectors, so that a kind dropped from the file fails here and not only in
// the browser's run.
func TestMergeVectorKinds(t *testing.T) {
	kinds := map[string]int{}
	for _, v := range loadVectors(t) {
		kinds[v.Kind]++
	}
	for _, k := range []string{"text", "note", "item", "connector", "frame"} {
		if kinds[k] == 0 {
			t.Errorf("no %s vectors in testdata/merge/vectors.json", k)
		}
	}
}

func TestMergeNoteIdempotent(t *testing.T) {
	for _, v := range loadVectors(t) {
		if v.Kind != "note" {
			continue
		}
		base, mine := decode[board.Note](t, v.Base), decode[board.Note](t, v.Mine)
		once, _ := board.MergeNote(base, decode[board.Note](t, v.Theirs), mine)
		twice, _ := board.MergeNote(base, once, mine)
		if !reflect.DeepEqual(once, twice) {
			t.Errorf("%s: merging mine again changed the note:\n %+v\n %+v", v.Name, once, twice)
		}
	}
}
