package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/changelog"
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

func changes(tb testing.TB, db *postgres.Store, boardID string, since int64) *board.Changes {
	tb.Helper()
	ch, err := db.ChangesSince(context.Background(), boardID, since)
	if err != nil {
		tb.Fatalf("ChangesSince(%d): %v", since, err)
	}
	return ch
}

func BenchmarkApplyPush(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	storetest.BenchApplyPush(b, db)
}

// BenchmarkDeleteConnectedNote: a round of two pushes (a note and a
// connector from it; the note's deletion, which takes the connector) on a
// board of 2,000 notes and 50 frames, with and without 2,000 connectors.
func BenchmarkDeleteConnectedNote(b *testing.B) {
	for _, connected := range []bool{false, true} {
		b.Run(fmt.Sprintf("connectors=%v", connected), func(b *testing.B) {
			db, _, _ := openSyncDB(b, "b1")
			storetest.BenchDeleteConnectedNote(b, db, connected)
		})
	}
}

func BenchmarkApplyPush100Boards(b *testing.B) {
	ids := storetest.BoardIDs(100)
	db, _, _ := openSyncDB(b, ids...)
	storetest.BenchApplyPushBoards(b, db, ids)
}

// BenchmarkApplyPushEdit100Boards is BenchmarkApplyPushEdit on 100 boards
// at once (storetest.BenchEditNoteBoards): one round pushes one edit to
// each board's 1 KB note concurrently, over the pool's connections, as
// BenchmarkApplyPush100Boards pushes its notes.
func BenchmarkApplyPushEdit100Boards(b *testing.B) {
	ids := storetest.BoardIDs(100)
	for _, bc := range []struct {
		name  string
		merge bool
	}{{"base=none", false}, {"base=previous", true}} {
		b.Run(bc.name, func(b *testing.B) {
			db, _, _ := openSyncDB(b, ids...)
			storetest.BenchEditNoteBoards(b, db, ids, bc.merge)
		})
	}
}

// BenchmarkApplyPushEdit is one push at a time editing one line of a 1 KB
// note: replacing the row (base=none), or merged against the version
// before the current one (base=previous). See the bbolt store's.
//
// The commit=async variants (synchronous_commit off for the benchmark's
// connections) leave out the wait for the WAL flush: the store's own work
// and its round trips, where merging shows most.
func BenchmarkApplyPushEdit(b *testing.B) {
	for _, bc := range []struct {
		name         string
		merge, async bool
	}{{"base=none", false, false}, {"base=previous", true, false}, {"commit=async/base=none", false, true}, {"commit=async/base=previous", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			db, _, dsn := openSyncDB(b, "b1")
			if bc.async {
				var err error
				if db, err = postgres.Open(context.Background(), dsn+"&synchronous_commit=off"); err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				db.SetNoteRenderer(changelog.RenderNote)
			}
			storetest.BenchEditNote(b, db, bc.merge)
		})
	}
}

// BenchmarkApplyPushEditSideBySide is BenchmarkApplyPushEdit (boards=1)
// and BenchmarkApplyPushEdit100Boards (boards=100) with both variants in
// one run on one database, alternating push by push (round by round for
// 100 boards): storetest.BenchEditNoteSideBySide. Its merged/plain metric
// is the figure docs/benchmarks.md gives; the A-A runs push without
// baseVersion on both sides, for the method's error. Run it with -benchtime 400x for
// one board, 60x for 100.
func BenchmarkApplyPushEditSideBySide(b *testing.B) {
	for _, bc := range []struct {
		name         string
		boards       int
		async, merge bool
	}{{"boards=1", 1, false, true}, {"boards=100", 100, false, true}, {"commit=async/boards=1", 1, true, true},
		{"A-A/boards=1", 1, false, false}, {"A-A/boards=100", 100, false, false}} {
		b.Run(bc.name, func(b *testing.B) {
			plain, merged := storetest.PrefixedIDs("n", bc.boards), storetest.PrefixedIDs("m", bc.boards)
			db, _, dsn := openSyncDB(b, append(plain, merged...)...)
			if bc.async {
				var err error
				if db, err = postgres.Open(context.Background(), dsn+"&synchronous_commit=off"); err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				db.SetNoteRenderer(changelog.RenderNote)
			}
			storetest.BenchEditNoteSideBySide(b, db, db, plain, merged, bc.merge)
		})
	}
}

// BenchmarkRevisions1000Edits measures board_revisions on a fresh database
// after 1,000 merged edits of a 1 KB note (storetest.PushNoteEdits): its
// heap, its indexes, and all of it with TOAST (pg_total_relation_size),
// per edit. Run it once: -benchtime=1x.
func BenchmarkRevisions1000Edits(b *testing.B) {
	const edits = 1000
	var heap, indexes, total, n int64
	for b.Loop() {
		db, _, _ := openSyncDB(b, "b1")
		storetest.PushNoteEdits(b, db, "b1", edits)
		err := db.Pool().QueryRow(context.Background(), `SELECT pg_relation_size('board_revisions'),
			pg_indexes_size('board_revisions'), pg_total_relation_size('board_revisions'),
			(SELECT count(*) FROM board_revisions)`).Scan(&heap, &indexes, &total, &n)
		if err != nil {
			b.Fatal(err)
		}
	}
	if n != edits-1 {
		b.Fatalf("%d revisions, want %d", n, edits-1)
	}
	b.ReportMetric(float64(heap)/edits, "heap-B/edit")
	b.ReportMetric(float64(indexes)/edits, "index-B/edit")
	b.ReportMetric(float64(total)/edits, "total-B/edit")
}

func BenchmarkChangesSince5000Notes(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	storetest.BenchChangesSince5000Notes(b, db)
}
