package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
)

// openSyncDB opens a store in a temp folder with a settable clock and claims
// the given boards for owner@example.com.
func openSyncDB(tb testing.TB, boards ...string) (*postgres.Store, *storetest.Clock, string) {
	tb.Helper()
	return pgtest.Open(tb, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), boards...)
}

func note(id, content string) board.Note {
	return board.Note{ID: id, Title: "T " + id, Content: content, X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z"}
}

func mustPush(tb testing.TB, db *postgres.Store, boardID string, p *board.Push, key string) int64 {
	tb.Helper()
	v, _, err := db.ApplyPush(context.Background(), boardID, p, key)
	if err != nil {
		tb.Fatalf("ApplyPush: %v", err)
	}
	return v
}

func changes(tb testing.TB, db *postgres.Store, boardID string, since int64) *board.Changes {
	tb.Helper()
	ch, err := db.ChangesSince(context.Background(), boardID, since)
	if err != nil {
		tb.Fatalf("ChangesSince(%d): %v", since, err)
	}
	return ch
}

// seedBoard gives b1 n notes of about 200 bytes, one push of 500 at a time.
func seedBoard(tb testing.TB, db *postgres.Store, n int) {
	tb.Helper()
	for start := 0; start < n; start += board.MaxUpsertedNotes {
		var ns []board.Note
		for i := start; i < min(n, start+board.MaxUpsertedNotes); i++ {
			ns = append(ns, note(fmt.Sprintf("note-%05d", i), strings.Repeat("lorem ipsum ", 16)))
		}
		mustPush(tb, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: ns}}, "")
	}
}

func BenchmarkApplyPush(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", strings.Repeat("x", 200))}}}
	for b.Loop() {
		if _, _, err := db.ApplyPush(context.Background(), "b1", p, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyPush100Boards measures one round of 100 boards pushing at
// once; with group commit a round costs a few fsyncs, not 100.
func BenchmarkApplyPush100Boards(b *testing.B) {
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
	}
	db, _, _ := openSyncDB(b, ids...)
	p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", strings.Repeat("x", 200))}}}
	for b.Loop() {
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				if _, _, err := db.ApplyPush(context.Background(), id, p, ""); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*len(ids))/b.Elapsed().Seconds(), "pushes/s")
}

func BenchmarkChangesSince5000Notes(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	seedBoard(b, db, 5000)
	// Ten more single-note pushes, so "recent" means 10 versions back.
	for i := range 10 {
		mustPush(b, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("note-%05d", i), "edited")}}}, "")
	}
	v, _ := db.CurrentVersion(context.Background(), "b1")
	for _, bc := range []struct {
		name  string
		since int64
	}{{"Since=v-10", v - 10}, {"Since=0", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := db.ChangesSince(context.Background(), "b1", bc.since); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
