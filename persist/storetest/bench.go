package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

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
func BoardIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
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
