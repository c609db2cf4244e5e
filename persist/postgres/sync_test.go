package postgres_test

import (
	"context"
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

func BenchmarkApplyPush100Boards(b *testing.B) {
	ids := storetest.BoardIDs(100)
	db, _, _ := openSyncDB(b, ids...)
	storetest.BenchApplyPushBoards(b, db, ids)
}

func BenchmarkChangesSince5000Notes(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	storetest.BenchChangesSince5000Notes(b, db)
}
