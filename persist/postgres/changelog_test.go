package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
)

var clT0 = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)

// openChangelogDB opens a store in a temp folder whose clock stands still at
// clT0 until the test moves it, with the given boards claimed.
func openChangelogDB(tb testing.TB, boards ...string) (*postgres.Store, *storetest.Clock, string) {
	tb.Helper()
	return pgtest.Open(tb, clT0, boards...)
}

// sameEntry compares entries as listed (without content).
func sameEntry(a, b persist.LogEntry) bool {
	return a.Key == b.Key && a.NoteID == b.NoteID && a.Action == b.Action && a.Timestamp == b.Timestamp
}

func appendN(tb testing.TB, db *postgres.Store, boardID string, n int, noteID func(i int) string, action func(i int) string) []persist.LogEntry {
	tb.Helper()
	in := make([]persist.NewLogEntry, n)
	for i := range in {
		in[i] = persist.NewLogEntry{NoteID: noteID(i), Action: action(i), Content: []byte(fmt.Sprintf("content %d", i))}
	}
	out, err := db.AppendLog(context.Background(), boardID, in, nil)
	if err != nil {
		tb.Fatalf("AppendLog: %v", err)
	}
	return out
}

func TestChangelogSurvivesReopen(t *testing.T) {
	db, _, dsn := openChangelogDB(t, "b1")
	ctx := context.Background()
	in := appendN(t, db, "b1", 3, func(int) string { return "n1" }, func(int) string { return "update_note" })
	snap, _, err := db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte("snap")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	db2.Now = func() time.Time { return clT0 } // the clock went back too
	got, err := db2.ListLog(ctx, "b1", persist.LogQuery{Limit: 10})
	if err != nil || len(got) != 3 || !sameEntry(got[0], in[2]) {
		t.Fatalf("after reopen: %v, %v; want the 3 entries", got, err)
	}
	if list, _ := db2.ListSnapshots(ctx, "b1"); !slices.Equal(list, []persist.SnapshotInfo{snap}) {
		t.Fatalf("snapshots after reopen %v, want [%v]", list, snap)
	}
	more, err := db2.AppendLog(ctx, "b1", []persist.NewLogEntry{{NoteID: "n1", Action: "update_note"}}, nil)
	if err != nil || more[0].Timestamp <= snap.Timestamp {
		t.Fatalf("entry after reopen %v (%v), want a timestamp after the stored ones", more, err)
	}
}
