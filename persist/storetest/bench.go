package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// The benchmarks every backend runs on a store of its own, so that their
// figures compare (docs/benchmarks.md). Each takes a store with the boards
// it names claimed.

// BenchApplyPush commits one single-note push at a time to board b1.
func BenchApplyPush(b *testing.B, s persist.Store) {
	p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", strings.Repeat("x", 200))}}}
	for b.Loop() {
		if _, _, err := applyPush(context.Background(), s, "b1", p, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchApplyPushBoards measures one round of the boards ids pushing at
// once; with group commit a round costs a few commits, not one per board.
func BenchApplyPushBoards(b *testing.B, s persist.Store, ids []string) {
	p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", strings.Repeat("x", 200))}}}
	for b.Loop() {
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				if _, _, err := applyPush(context.Background(), s, id, p, ""); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*len(ids))/b.Elapsed().Seconds(), "pushes/s")
}

// BoardIDs returns b0 … b(n-1), the boards BenchApplyPushBoards pushes to.
func BoardIDs(n int) []string { return PrefixedIDs("b", n) }

// PrefixedIDs returns prefix0 … prefix(n-1).
func PrefixedIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return ids
}

// BenchChangesSince5000Notes pulls from board b1 of 5,000 notes: the last
// 10 versions, and everything.
func BenchChangesSince5000Notes(b *testing.B, s persist.Store) {
	for start := 0; start < 5000; start += board.MaxUpsertedNotes {
		var ns []board.Note
		for i := start; i < min(5000, start+board.MaxUpsertedNotes); i++ {
			ns = append(ns, note(fmt.Sprintf("note-%05d", i), strings.Repeat("lorem ipsum ", 16)))
		}
		mustPush(b, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: ns}}, "")
	}
	// Ten more single-note pushes, so "recent" means 10 versions back.
	for i := range 10 {
		mustPush(b, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("note-%05d", i), "edited")}}}, "")
	}
	v, _ := s.CurrentVersion(context.Background(), "b1")
	for _, bc := range []struct {
		name  string
		since int64
	}{{"Since=v-10", v - 10}, {"Since=0", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.ChangesSince(context.Background(), "b1", bc.since); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// NoteEditor makes the pushes of BenchEditNote to one board: one note of
// EditNoteLines lines of about 50 bytes (about 1 KB of content), each push
// changing one line, the next line each time.
type NoteEditor struct {
	lines, prev []string // the note's content now, and one version before
	version     int64    // the board's version
	edits       int
}

// EditNoteLines is how many lines the edited note has.
const EditNoteLines = 20

// NewNoteEditor returns an editor of a board that has no note yet.
func NewNoteEditor() *NoteEditor {
	e := &NoteEditor{lines: make([]string, EditNoteLines)}
	for i := range e.lines {
		e.lines[i] = fmt.Sprintf("%02d %s", i, strings.Repeat("lorem ipsum ", 4)[:46])
	}
	e.prev = slices.Clone(e.lines)
	return e
}

// next returns the next edit as a push. With merge, the edit is of the
// note one version before the current one (the client had not seen the
// last push yet) and says so with baseVersion, so the store merges it
// into the current note against the revision at that version; without,
// the same edit is of the current note and replaces it.
func (e *NoteEditor) next(merge bool) *board.Push {
	e.edits++
	line := e.edits % EditNoteLines
	text := fmt.Sprintf("%02d edit %-40d", line, e.edits)
	n := note("a", "")
	if merge && e.version >= 2 {
		mine := slices.Clone(e.prev)
		mine[line] = text
		n.Content, n.BaseVersion = strings.Join(mine, "\n"), e.version-1
	} else {
		mine := slices.Clone(e.lines)
		mine[line] = text
		n.Content = strings.Join(mine, "\n")
	}
	// What the store holds after the push, either way.
	e.prev = slices.Clone(e.lines)
	e.lines[line] = text
	e.version++
	return &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{n}}}
}

// BenchEditNote commits one single-note push at a time to board b1, each
// editing one line of a 1 KB note: with merge, each carries the version
// before the current one as its baseVersion, so every push (from the
// third) is a real merge against a revision; without, the same edits
// replace the row. The two compare side by side (docs/benchmarks.md).
func BenchEditNote(b *testing.B, s persist.Store, merge bool) {
	ed := NewNoteEditor()
	for b.Loop() {
		if err := ed.Push(s, "b1", merge); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchEditNoteBoards is BenchEditNote on the boards ids at once: one
// round is one edit pushed to each board concurrently (as in
// BenchApplyPushBoards), each board's note edited as BenchEditNote edits
// b1's, merged or not.
func BenchEditNoteBoards(b *testing.B, s persist.Store, ids []string, merge bool) {
	eds := make([]*NoteEditor, len(ids))
	for i := range eds {
		eds[i] = NewNoteEditor()
	}
	for b.Loop() {
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				if err := eds[i].Push(s, id, merge); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	b.ReportMetric(float64(b.N*len(ids))/b.Elapsed().Seconds(), "pushes/s")
}

// SideBySideRounds is how many rounds BenchEditNoteSideBySide splits its
// pushes into.
const SideBySideRounds = 20

// BenchEditNoteSideBySide measures BenchEditNote's two variants in one
// run, alternating: every iteration pushes one edit to each of the boards
// plain of ps (without baseVersion, as BenchEditNote with merge false) and
// one to each of the boards merged of ms (with baseVersion), in an order
// drawn for the iteration; with several boards in a set, its pushes go at
// once (as BenchEditNoteBoards). On a machine shared with other work,
// whose load moves within seconds, this keeps the load alike for both.
// ps and ms may be one store (PostgreSQL: one database, so that the two
// differ only by the merge) or two of the same kind (bbolt: with both sets
// of boards in one file, one set's pushes came out about 20 % dearer than
// the other's with no merge on either side; each in its own file, the two
// match within a few per cent). With merge false the boards of merged
// push without baseVersion too: an A/A run, whose ratio is the method's
// own error. The iterations are cut into SideBySideRounds rounds;
// the metrics are each variant's median over the rounds of its mean time
// per push (plain-µs/push, merged-µs/push) and their ratio
// (merged/plain). Run it with at least 2×SideBySideRounds iterations
// (-benchtime Nx).
func BenchEditNoteSideBySide(b *testing.B, ps, ms persist.Store, plain, merged []string, merge bool) {
	type set struct {
		s     persist.Store
		ids   []string
		eds   []*NoteEditor
		merge bool
	}
	sets := []*set{{s: ps, ids: plain}, {s: ms, ids: merged, merge: merge}}
	for _, st := range sets {
		for range st.ids {
			st.eds = append(st.eds, NewNoteEditor())
		}
	}
	run := func(st *set) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i, id := range st.ids {
			wg.Go(func() {
				if err := st.eds[i].Push(st.s, id, st.merge); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		return time.Since(start)
	}
	// The first two pushes to each board cannot merge: out of the rounds.
	for range 2 {
		run(sets[0])
		run(sets[1])
	}
	var times [2][]time.Duration
	order := rand.New(rand.NewPCG(1, 2))
	n := 0
	for b.Loop() {
		first := order.IntN(2)
		times[first] = append(times[first], run(sets[first]))
		times[1-first] = append(times[1-first], run(sets[1-first]))
		n++
	}
	if n < 2*SideBySideRounds {
		b.Fatalf("%d iterations: run at least %d (-benchtime %dx)", n, 2*SideBySideRounds, 2*SideBySideRounds)
	}
	var med [2]float64
	for v := range times {
		var means []float64
		for r := range SideBySideRounds {
			var sum time.Duration
			part := times[v][r*n/SideBySideRounds : (r+1)*n/SideBySideRounds]
			for _, d := range part {
				sum += d
			}
			means = append(means, float64(sum)/float64(time.Microsecond)/float64(len(part)*len(sets[v].ids)))
		}
		slices.Sort(means)
		med[v] = (means[(SideBySideRounds-1)/2] + means[SideBySideRounds/2]) / 2
	}
	b.ReportMetric(med[0], "plain-µs/push")
	b.ReportMetric(med[1], "merged-µs/push")
	b.ReportMetric(med[1]/med[0], "merged/plain")
}

// Push applies e's next edit to boardID and checks its outcome: a clean
// merge when it carries a baseVersion (merge, from the third push), the
// row as sent otherwise, and either way the note as the editor expects it.
func (e *NoteEditor) Push(s persist.Store, boardID string, merge bool) error {
	p := e.next(merge)
	res, err := s.ApplyPushes(context.Background(), boardID, []persist.PushInput{{Push: p}})
	if err != nil {
		return err
	}
	if res[0].Err != nil {
		return res[0].Err
	}
	if want := merge && p.Notes.Upserted[0].BaseVersion > 0; (res[0].Merged == 1) != want || len(res[0].Events) != 0 ||
		res[0].Changes.Notes[0].Content != strings.Join(e.lines, "\n") {
		return fmt.Errorf("board %s, push %d: merged=%d events=%v, want a clean merge: %v", boardID, e.edits, res[0].Merged, res[0].Events, want)
	}
	return nil
}

// PushNoteEdits pushes n edits of BenchEditNote's 1 KB note (merged) to
// boardID, which must be new: what a measurement of the revision store's
// size per edit writes.
func PushNoteEdits(tb testing.TB, s persist.Store, boardID string, n int) {
	tb.Helper()
	ed := NewNoteEditor()
	for range n {
		if _, _, err := applyPush(context.Background(), s, boardID, ed.next(true), ""); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchDeleteConnectedNote measures what connectors cost a push that
// deletes a note (docs/sync.md, "Connectors and frames"): board b1 holds
// 2,000 notes, 50 frames and, when connected, 2,000 connectors (note i to
// note i+1); each round is two pushes, one adding a note and a connector
// from it, one deleting the note, which deletes the connector with it.
func BenchDeleteConnectedNote(b *testing.B, s persist.Store, connected bool) {
	const notes, frames = 2000, 50
	ctx := context.Background()
	seed := &board.Push{}
	for i := range notes {
		seed.Notes.Upserted = append(seed.Notes.Upserted, note(fmt.Sprintf("n%d", i), "x"))
		if len(seed.Notes.Upserted) == board.MaxUpsertedNotes {
			if _, _, err := applyPush(ctx, s, "b1", seed, ""); err != nil {
				b.Fatal(err)
			}
			seed = &board.Push{}
		}
	}
	for i := range frames {
		seed.Frames.Upserted = append(seed.Frames.Upserted, frame(fmt.Sprintf("f%d", i), ""))
	}
	for i := 0; connected && i < notes; i++ {
		seed.Connectors.Upserted = append(seed.Connectors.Upserted, connector(fmt.Sprintf("c%d", i), fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", (i+1)%notes)))
		if len(seed.Connectors.Upserted) == board.MaxUpsertedConnectors {
			if _, _, err := applyPush(ctx, s, "b1", seed, ""); err != nil {
				b.Fatal(err)
			}
			seed = &board.Push{}
		}
	}
	if _, _, err := applyPush(ctx, s, "b1", seed, ""); err != nil {
		b.Fatal(err)
	}
	add := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("x", "x")}},
		Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("cx", "x", "n0")}}}
	del := &board.Push{Notes: board.NoteChanges{Deleted: []string{"x"}}}
	for b.Loop() {
		if _, _, err := applyPush(ctx, s, "b1", add, ""); err != nil {
			b.Fatal(err)
		}
		res, err := s.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: del}})
		if err != nil || res[0].Err != nil || len(res[0].Changes.DeletedConnectorIDs) != 1 {
			b.Fatalf("delete: %v %+v", err, res)
		}
	}
}
