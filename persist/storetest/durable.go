package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/board"
	"corkboard/persist"
)

// ClosableStore is a store its opener hands over to be closed by the test.
type ClosableStore interface {
	persist.Store
	Close() error
}

// Durable prepares a place for data that outlives a store (a folder, a
// database) and returns how to open a store on it: every call opens the
// same data again, after the caller closed the store before. The place is
// removed when the test ends.
type Durable func(t *testing.T) (open func(now func() time.Time) (ClosableStore, error))

// RunDurable checks that a store keeps nothing in memory only: what one
// store wrote, a store opened again on the same data reads. It is not in
// Run because Run's stores are opened once.
func RunDurable(t *testing.T, durable Durable) {
	t.Run("AuthSurvivesReopen", func(t *testing.T) { testAuthSurvivesReopen(t, durable) })
	t.Run("SyncSurvivesReopen", func(t *testing.T) { testSyncSurvivesReopen(t, durable) })
	t.Run("RevisionsSurviveReopen", func(t *testing.T) { testRevisionsSurviveReopen(t, durable) })
	t.Run("ChangelogSurvivesReopen", func(t *testing.T) { testChangelogSurvivesReopen(t, durable) })
	t.Run("BoardsSurviveReopen", func(t *testing.T) { testBoardsSurviveReopen(t, durable) })
	t.Run("TimerSurvivesReopen", func(t *testing.T) { testTimerSurvivesReopen(t, durable) })
	t.Run("VoteSurvivesReopen", func(t *testing.T) { testVoteSurvivesReopen(t, durable) })
}

// reopen closes s and opens the data again; the new store is closed when
// the test ends.
func reopen(t *testing.T, s ClosableStore, open func(now func() time.Time) (ClosableStore, error), now func() time.Time) ClosableStore {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := open(now)
	if err != nil {
		t.Fatalf("open again: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

// first opens the data for the first time.
func first(t *testing.T, durable Durable, now func() time.Time) (ClosableStore, func(now func() time.Time) (ClosableStore, error)) {
	t.Helper()
	open := durable(t)
	s, err := open(now)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s, open
}

// testAuthSurvivesReopen: codes and sessions are stored, not in memory.
func testAuthSurvivesReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	now := NewClock(T0).Now
	db, open := first(t, durable, now)
	if err := db.PutOTP(ctx, "a@example.com", persist.OTP{Hash: []byte("h"), ExpiresAt: T0, Attempts: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(ctx, authSessionID("t"), persist.Session{Email: "a@example.com", CreatedAt: T0, LastSeen: T0}); err != nil {
		t.Fatal(err)
	}
	db2 := reopen(t, db, open, now)
	o, err := db2.FindOTP(ctx, "a@example.com")
	if err != nil || o.Attempts != 2 {
		t.Fatalf("FindOTP after reopen=%+v, %v; want 2 attempts", o, err)
	}
	if s, err := db2.FindSession(ctx, authSessionID("t")); err != nil || s.Email != "a@example.com" {
		t.Fatalf("FindSession after reopen=%+v, %v", s, err)
	}
}

// testSyncSurvivesReopen: rows, tombstones, idempotency keys and the
// version are stored; the version goes on upward after a restart.
func testSyncSurvivesReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	now := NewClock(T0).Now
	db, open := first(t, durable, now)
	if _, err := db.ClaimBoard(ctx, "b1", Owner); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("n%d", i), "x")}}}, fmt.Sprintf("k%d", i))
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"n0"}}}, "")
	before := changes(t, db, "b1", 0)
	db2 := reopen(t, db, open, now)
	if diff := cmp.Diff(before, changes(t, db2, "b1", 0)); diff != "" {
		t.Fatalf("state changed across restart (-before +after):\n%s", diff)
	}
	if ch := changes(t, db2, "b1", 5); !slices.Equal(ch.DeletedNoteIDs, []string{"n0"}) {
		t.Fatalf("tombstone lost across restart: %v", ch.DeletedNoteIDs)
	}
	if v, replayed, _ := applyPush(ctx, db2, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("z", "x")}}}, "k2"); v != 3 || !replayed {
		t.Fatalf("idempotency key after restart: v=%d replayed=%v, want 3 true", v, replayed)
	}
	if v := mustPush(t, db2, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("z", "x")}}}, ""); v != 7 {
		t.Fatalf("version after restart=%d, want 7 (continues upward)", v)
	}
}

// testRevisionsSurviveReopen: the revisions a merge needs are stored: an
// edit of an older version merges after a restart, and a sweep after the
// restart still finds what was due before it. The stores must be wired
// with changelog.RenderNote, as for Run.
func testRevisionsSurviveReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	clock := NewClock(T0)
	db, open := first(t, durable, clock.Now)
	if _, err := db.ClaimBoard(ctx, "b1", Owner); err != nil {
		t.Fatal(err)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mergeNote()}}}, "")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("ONE\ntwo\nthree", 1)}}}, "")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("ONE\nTWO\nthree", 2)}}}, "")
	db2 := reopen(t, db, open, clock.Now)
	res, err := db2.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\ntwo\nTHREE", 1)}}}}})
	if err != nil || res[0].Err != nil || res[0].Merged != 1 || res[0].Changes.Notes[0].Content != "ONE\nTWO\nTHREE" {
		t.Fatalf("merge after a restart = %+v, %v; want the three edits", res, err)
	}
	clock.Advance(time.Hour)
	if n, err := db2.PruneRevisions(ctx, clock.Now(), 0); err != nil || n != 3 {
		t.Fatalf("PruneRevisions after a restart = %d, %v; want 3", n, err)
	}
}

// testChangelogSurvivesReopen: entries and snapshots are stored, and an
// entry after a restart sorts after the stored ones even when the clock
// went back.
func testChangelogSurvivesReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)
	now := NewClock(t0).Now
	db, open := first(t, durable, now)
	if _, err := db.ClaimBoard(ctx, "b1", Owner); err != nil {
		t.Fatal(err)
	}
	in := appendN(t, db, "b1", 3, func(int) string { return "n1" }, func(int) string { return "update_note" })
	snap, _, err := db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte("snap")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	db2 := reopen(t, db, open, now) // the clock stands still: it went back
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

// testBoardsSurviveReopen: boards, their collaborators and the member
// index are stored, not in memory.
func testBoardsSurviveReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := NewClock(t0).Now
	db, open := first(t, durable, now)
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddInvite(ctx, "b1", "friend@example.com"); err != nil {
		t.Fatal(err)
	}
	db2 := reopen(t, db, open, now)
	b, err := db2.FindBoard(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if b.OwnerEmail != "owner@example.com" || len(b.InvitedEmails) != 1 || !b.CreatedAt.Equal(t0) {
		t.Fatalf("board after reopen = %+v", b)
	}
	for _, email := range []string{"owner@example.com", "friend@example.com"} {
		if list, err := db2.ListBoardsFor(ctx, email); err != nil || len(list) != 1 || list[0].ID != "b1" {
			t.Fatalf("ListBoardsFor(%s) after reopen = %v, %v; want [b1]", email, list, err)
		}
	}
}
