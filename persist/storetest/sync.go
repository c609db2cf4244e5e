package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/board"
	"corkboard/persist"
)

// runSync: pushes, versions, pulls, idempotency keys and tombstones
// (persist.SyncStore).
func runSync(t *testing.T, open Opener) {
	t.Run("ApplyPushAndChangesSince", func(t *testing.T) { testApplyPushAndChangesSince(t, open) })
	t.Run("ApplyPushChangesMatchPull", func(t *testing.T) { testApplyPushChangesMatchPull(t, open) })
	t.Run("UpsertAndDeleteInOnePushEndsDeleted", func(t *testing.T) { testUpsertAndDeleteInOnePushEndsDeleted(t, open) })
	t.Run("UpsertBringsDeletedNoteBack", func(t *testing.T) { testUpsertBringsDeletedNoteBack(t, open) })
	t.Run("PushOfUnknownDeletionsChangesNothing", func(t *testing.T) { testPushOfUnknownDeletionsChangesNothing(t, open) })
	t.Run("DeletingDeletedNoteAlongsideChanges", func(t *testing.T) { testDeletingDeletedNoteAlongsideChanges(t, open) })
	t.Run("NoOpPushKeepsItsIdempotencyKey", func(t *testing.T) { testNoOpPushKeepsItsIdempotencyKey(t, open) })
	t.Run("IdempotencyKey", func(t *testing.T) { testIdempotencyKey(t, open) })
	t.Run("EmptyPushKeepsVersion", func(t *testing.T) { testEmptyPushKeepsVersion(t, open) })
	t.Run("PushRenamesBoard", func(t *testing.T) { testPushRenamesBoard(t, open) })
	t.Run("InvalidPushAppliesNothing", func(t *testing.T) { testInvalidPushAppliesNothing(t, open) })
	t.Run("UnclaimedBoardIsNotFound", func(t *testing.T) { testUnclaimedBoardIsNotFound(t, open) })
	t.Run("TombstonePruningResets", func(t *testing.T) { testTombstonePruningResets(t, open) })
	t.Run("AheadOfEmptyBoardResets", func(t *testing.T) { testAheadOfEmptyBoardResets(t, open) })
	t.Run("PushesToManyBoardsAtOnce", func(t *testing.T) { testPushesToManyBoardsAtOnce(t, open) })
	t.Run("ApplyPushesInOrder", func(t *testing.T) { testApplyPushesInOrder(t, open) })
	t.Run("SecondDeleteInOneBatchIsANoOp", func(t *testing.T) { testSecondDeleteInOneBatchIsANoOp(t, open) })
	t.Run("ConcurrentPushesOneBoard", func(t *testing.T) { testConcurrentPushesOneBoard(t, open) })
	t.Run("ConcurrentBatches", func(t *testing.T) { testConcurrentBatches(t, open) })
	t.Run("BatchFailuresStayInTheirPush", func(t *testing.T) { testBatchFailuresStayInTheirPush(t, open) })
	t.Run("UnclaimedBatchWritesNothing", func(t *testing.T) { testUnclaimedBatchWritesNothing(t, open) })
	t.Run("ConcurrentReplays", func(t *testing.T) { testConcurrentReplays(t, open) })
	t.Run("HorizonEdges", func(t *testing.T) { testHorizonEdges(t, open) })
	t.Run("Scan", func(t *testing.T) { runScan(t, open) })
}

func testApplyPushAndChangesSince(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	v1 := mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("a", "alpha"), note("b", "beta")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("x", "do x")}},
	}, "")
	if v1 != 1 {
		t.Fatalf("first push version=%d, want 1", v1)
	}
	a2 := note("a", "alpha 2")
	v2 := mustPush(t, db, "b1", &board.Push{ClientVersion: 1, Notes: board.NoteChanges{Upserted: []board.Note{a2}, Deleted: []string{"b"}}}, "")
	if v2 != 2 {
		t.Fatalf("second push version=%d, want 2", v2)
	}

	t.Run("Full", func(t *testing.T) { checkFullPull(t, db) })
	t.Run("Since1", func(t *testing.T) { checkPullSince1(t, db) })
	t.Run("SinceCurrent", func(t *testing.T) { checkPullSinceCurrent(t, db) })
	t.Run("ErrNegativeSince", func(t *testing.T) {
		if _, err := db.ChangesSince(context.Background(), "b1", -1); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("err=%v, want EINVALID", err)
		}
	})
}

// checkFullPull: a pull since 0 is the board as the two pushes left it.
func checkFullPull(t *testing.T, db persist.Store) {
	t.Helper()
	ch := changes(t, db, "b1", 0)
	if got, want := noteIDs(ch.Notes), []string{"a"}; !slices.Equal(got, want) {
		t.Fatalf("notes=%v, want %v", got, want)
	}
	if ch.Notes[0].Content != "alpha 2" || ch.Notes[0].Version != 2 || ch.Notes[0].DeletedAt != nil {
		t.Fatalf("note a = %+v, want content alpha 2 at version 2, live", ch.Notes[0])
	}
	if len(ch.TrackerItems) != 1 || ch.TrackerItems[0].Version != 1 {
		t.Fatalf("items=%+v, want x at version 1", ch.TrackerItems)
	}
	if len(ch.DeletedNoteIDs) != 0 || ch.Reset {
		t.Fatalf("full sync reports deletions %v / reset %v; want neither", ch.DeletedNoteIDs, ch.Reset)
	}
	if ch.ServerVersion != 2 || ch.Board.Version != 2 || ch.Board.ID != "b1" {
		t.Fatalf("serverVersion=%d board=%+v, want 2", ch.ServerVersion, ch.Board)
	}
}

// checkPullSince1: a pull since 1 is what the second push changed.
func checkPullSince1(t *testing.T, db persist.Store) {
	t.Helper()
	ch := changes(t, db, "b1", 1)
	if got := noteIDs(ch.Notes); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("notes=%v, want [a]", got)
	}
	if !slices.Equal(ch.DeletedNoteIDs, []string{"b"}) {
		t.Fatalf("deletedNoteIds=%v, want [b]", ch.DeletedNoteIDs)
	}
	if len(ch.TrackerItems) != 0 {
		t.Fatalf("items=%v, want none (x unchanged since 1)", ch.TrackerItems)
	}
}

// checkPullSinceCurrent: a pull since the current version is empty lists, not nulls.
func checkPullSinceCurrent(t *testing.T, db persist.Store) {
	t.Helper()
	ch := changes(t, db, "b1", 2)
	if len(ch.Notes)+len(ch.DeletedNoteIDs)+len(ch.TrackerItems)+len(ch.DeletedTrackerItemIDs) != 0 || ch.ServerVersion != 2 {
		t.Fatalf("since=current gave %+v, want nothing at version 2", ch)
	}
	if ch.Notes == nil || ch.DeletedNoteIDs == nil || ch.TrackerItems == nil || ch.DeletedTrackerItemIDs == nil {
		t.Fatal("empty lists must be [] not null")
	}
}

func testApplyPushChangesMatchPull(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "1"), note("b", "1")}}}, "")
	res, err := db.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: &board.Push{
		Board: &board.BoardPatch{Name: "Renamed", UpdatedAt: "2026-11-22T11:00:00Z"},
		Notes: board.NoteChanges{Upserted: []board.Note{note("a", "2"), note("c", "x"), note("a", "3")}, Deleted: []string{"b", "c", "nope"}},
	}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("ApplyPushes: %v / %v", err, res[0].Err)
	}
	pulled := changes(t, db, "b1", 1)
	if diff := cmp.Diff(pulled, res[0].Changes); diff != "" {
		t.Fatalf("the applied change differs from a pull since version-1 (-pull +applied):\n%s", diff)
	}
	if got := noteIDs(pulled.Notes); !slices.Equal(got, []string{"a"}) || pulled.Notes[0].Content != "3" {
		t.Fatalf("notes=%+v, want only a with the last copy's content 3", pulled.Notes)
	}
	if got := sorted(pulled.DeletedNoteIDs); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("deleted=%v, want [b c] (unknown IDs are not reported)", got)
	}
	if pulled.Board.Name != "Renamed" || pulled.Board.UpdatedAt != "2026-11-22T11:00:00Z" {
		t.Fatalf("board header %+v, want the push's name and updatedAt", pulled.Board)
	}
}

func testUpsertAndDeleteInOnePushEndsDeleted(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("keep", "k")}}}, "")
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("n", "new")}, Deleted: []string{"n"}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("i", "s")}, Deleted: []string{"i"}},
	}, "")
	st, err := db.BoardState(context.Background(), "b1")
	if err != nil {
		t.Fatal(err)
	}
	if got := noteIDs(st.Notes); !slices.Equal(got, []string{"keep"}) || len(st.TrackerItems) != 0 {
		t.Fatalf("state notes=%v items=%d, want only keep", got, len(st.TrackerItems))
	}
	ch := changes(t, db, "b1", 1)
	if len(ch.Notes) != 0 || !slices.Equal(ch.DeletedNoteIDs, []string{"n"}) || !slices.Equal(ch.DeletedTrackerItemIDs, []string{"i"}) {
		t.Fatalf("since 1: notes=%v deleted=%v/%v, want only deletions of n and i", noteIDs(ch.Notes), ch.DeletedNoteIDs, ch.DeletedTrackerItemIDs)
	}
}

func testUpsertBringsDeletedNoteBack(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "first")}}}, "")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "")
	if ch := changes(t, db, "b1", 1); !slices.Equal(ch.DeletedNoteIDs, []string{"a"}) {
		t.Fatalf("after delete: deleted=%v, want [a]", ch.DeletedNoteIDs)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "again")}}}, "")
	ch := changes(t, db, "b1", 1)
	if len(ch.DeletedNoteIDs) != 0 || len(ch.Notes) != 1 || ch.Notes[0].Content != "again" || ch.Notes[0].Version != 3 {
		t.Fatalf("after resurrection since 1: notes=%+v deleted=%v, want a live at version 3", ch.Notes, ch.DeletedNoteIDs)
	}
	// Deleting it twice records one deletion; the second is a no-op.
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a", "a"}}}, "")
	if ch := changes(t, db, "b1", 3); !slices.Equal(ch.DeletedNoteIDs, []string{"a"}) {
		t.Fatalf("deleted=%v, want [a] once", ch.DeletedNoteIDs)
	}
}

// testPushOfUnknownDeletionsChangesNothing: a push whose deletions name
// only IDs that are not live (never known, or already deleted) is a no-op:
// the version and updatedAt stay, there is nothing to fan out, and an
// already deleted note is not announced again.
func testPushOfUnknownDeletionsChangesNothing(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("a", "x"), note("gone", "y")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("i", "s")}},
	}, "")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"gone"}}}, "")
	before, err := db.FindBoard(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)

	for _, tc := range []struct {
		name string
		push board.Push
	}{
		{"UnknownNote", board.Push{Notes: board.NoteChanges{Deleted: []string{"never"}}}},
		{"UnknownItem", board.Push{TrackerItems: board.ItemChanges{Deleted: []string{"never"}}}},
		{"AlreadyDeletedNote", board.Push{Notes: board.NoteChanges{Deleted: []string{"gone", "gone"}}}},
		{"ANoteIDAsItem", board.Push{TrackerItems: board.ItemChanges{Deleted: []string{"a"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := db.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &tc.push}})
			if err != nil || res[0].Err != nil {
				t.Fatal(err, res[0].Err)
			}
			if got, want := res[0].Version, int64(2); got != want || res[0].Changes != nil || res[0].Replayed {
				t.Fatalf("applied %+v, want version %d, no changes", res[0], want)
			}
			b, err := db.FindBoard(ctx, "b1")
			if err != nil {
				t.Fatal(err)
			}
			if b.Version != 2 || b.UpdatedAt != before.UpdatedAt {
				t.Fatalf("board version=%d updatedAt=%s, want 2 and %s", b.Version, b.UpdatedAt, before.UpdatedAt)
			}
			if ch := changes(t, db, "b1", 1); !slices.Equal(ch.DeletedNoteIDs, []string{"gone"}) || len(ch.Notes) != 0 || ch.ServerVersion != 2 {
				t.Fatalf("since 1: %+v, want only gone's deletion at 2", ch)
			}
		})
	}
}

// testDeletingDeletedNoteAlongsideChanges: in a push that changes
// something else, deleting an already deleted note neither reports it nor
// moves its tombstone to the new version.
func testDeletingDeletedNoteAlongsideChanges(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "")
	res, err := db.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: &board.Push{
		Notes: board.NoteChanges{Upserted: []board.Note{note("b", "y")}, Deleted: []string{"a"}},
	}}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if got, want := res[0].Version, int64(3); got != want {
		t.Fatalf("Version=%d, want %d", got, want)
	}
	if ch := res[0].Changes; ch == nil || len(ch.DeletedNoteIDs) != 0 || !slices.Equal(noteIDs(ch.Notes), []string{"b"}) {
		t.Fatalf("changes %+v, want b upserted and no deletion", ch)
	}
	if ch := changes(t, db, "b1", 2); len(ch.DeletedNoteIDs) != 0 {
		t.Fatalf("since 2: deleted=%v, want none (a was deleted at 2)", ch.DeletedNoteIDs)
	}
}

// testNoOpPushKeepsItsIdempotencyKey: a push that changes nothing records
// its key with the current version, so that a retry is a replay and stays a
// no-op even once the ID it deletes exists.
func testNoOpPushKeepsItsIdempotencyKey(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b1")
	del := &board.Push{Notes: board.NoteChanges{Deleted: []string{"later"}}}
	if v, replayed, err := applyPush(ctx, db, "b1", del, "k-del"); err != nil || v != 0 || replayed {
		t.Fatalf("no-op push: v=%d replayed=%v err=%v, want 0, not replayed", v, replayed, err)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("later", "x")}}}, "")
	if v, replayed, err := applyPush(ctx, db, "b1", del, "k-del"); err != nil || v != 0 || !replayed {
		t.Fatalf("retry: v=%d replayed=%v err=%v, want the original 0, replayed", v, replayed, err)
	}
	if ch := changes(t, db, "b1", 0); !slices.Equal(noteIDs(ch.Notes), []string{"later"}) || ch.ServerVersion != 1 {
		t.Fatalf("after the retry: %+v, want later live at 1", ch)
	}
	empty := &board.Push{ClientVersion: 1}
	if v, _, err := applyPush(ctx, db, "b1", empty, "k-empty"); err != nil || v != 1 {
		t.Fatalf("empty push: v=%d err=%v, want 1", v, err)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("more", "y")}}}, "")
	if v, replayed, _ := applyPush(ctx, db, "b1", empty, "k-empty"); v != 1 || !replayed {
		t.Fatalf("empty retry: v=%d replayed=%v, want the original 1, replayed", v, replayed)
	}
}

func testIdempotencyKey(t *testing.T, open Opener) {
	db, clock := openWith(t, open, T0, "b1")
	ctx := context.Background()
	first := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "first")}}}
	v, replayed, err := applyPush(ctx, db, "b1", first, "key-1")
	if err != nil || v != 1 || replayed {
		t.Fatalf("first: v=%d replayed=%v err=%v, want 1 false nil", v, replayed, err)
	}
	// A retry (even with another body) answers the original version and
	// applies nothing.
	retry := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "changed")}}}
	v, replayed, err = applyPush(ctx, db, "b1", retry, "key-1")
	if err != nil || v != 1 || !replayed {
		t.Fatalf("retry: v=%d replayed=%v err=%v, want 1 true nil", v, replayed, err)
	}
	if ch := changes(t, db, "b1", 0); ch.ServerVersion != 1 || ch.Notes[0].Content != "first" {
		t.Fatalf("after retry: version=%d content=%q, want 1 first", ch.ServerVersion, ch.Notes[0].Content)
	}
	// Keys are per board.
	if _, err := db.ClaimBoard(ctx, "b2", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	if v, replayed, _ := applyPush(ctx, db, "b2", retry, "key-1"); v != 1 || replayed {
		t.Fatalf("same key on another board: v=%d replayed=%v, want applied", v, replayed)
	}
	// Swept keys are forgotten: kept 24 hours, then the same key applies again.
	clock.Advance(23 * time.Hour)
	if n, err := db.SweepIdempotencyKeys(ctx, clock.Now().Add(-24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweep at 23h: n=%d err=%v, want nothing swept", n, err)
	}
	clock.Advance(2 * time.Hour)
	if n, err := db.SweepIdempotencyKeys(ctx, clock.Now().Add(-24*time.Hour)); err != nil || n != 2 {
		t.Fatalf("sweep at 25h: n=%d err=%v, want 2 keys swept", n, err)
	}
	if v, replayed, _ := applyPush(ctx, db, "b1", retry, "key-1"); v != 2 || replayed {
		t.Fatalf("after sweep: v=%d replayed=%v, want 2 applied", v, replayed)
	}
	t.Run("ErrTooLong", func(t *testing.T) {
		_, _, err := applyPush(ctx, db, "b1", retry, strings.Repeat("k", persist.MaxIdempotencyKeyLen+1))
		if board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("err=%v, want EINVALID", err)
		}
	})
}

func testEmptyPushKeepsVersion(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	res, err := db.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: &board.Push{ClientVersion: 1}}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if res[0].Version != 1 || res[0].Changes != nil || res[0].Replayed {
		t.Fatalf("empty push: %+v, want version 1, no changes", res[0])
	}
}

func testPushRenamesBoard(t *testing.T, open Opener) {
	db, clock := openWith(t, open, T0, "b1")
	ctx := context.Background()
	mustPush(t, db, "b1", &board.Push{Board: &board.BoardPatch{Name: "Roadmap"}}, "")
	b, err := db.FindBoard(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "Roadmap" || b.Version != 1 || b.UpdatedAt != clock.Now().Format(time.RFC3339Nano) {
		t.Fatalf("board=%+v, want name Roadmap, version 1, updatedAt the server's time", b)
	}
	list, err := db.ListBoardsFor(ctx, "owner@example.com")
	if err != nil || len(list) != 1 || list[0].Name != "Roadmap" {
		t.Fatalf("ListBoardsFor=%+v err=%v, want the new name", list, err)
	}
	// A push without board keeps the name but moves updatedAt.
	clock.Advance(time.Minute)
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	if b, _ := db.FindBoard(ctx, "b1"); b.Name != "Roadmap" || b.UpdatedAt != clock.Now().Format(time.RFC3339Nano) {
		t.Fatalf("board=%+v, want name kept and updatedAt moved", b)
	}
}

func testInvalidPushAppliesNothing(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	ctx := context.Background()
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	many := make([]board.Note, board.MaxUpsertedNotes+1)
	for i := range many {
		many[i] = note(fmt.Sprintf("n%d", i), "")
	}
	for _, tc := range []struct {
		name  string
		push  board.Push
		field string
	}{
		{"TooManyNotes", board.Push{Notes: board.NoteChanges{Upserted: many}}, "notes.upserted"},
		{"ContentTooLong", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "ok"), note("b", strings.Repeat("é", board.MaxNoteContent+1))}}}, "notes.upserted[1].content"},
		{"EmptyID", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("", "x")}}}, "notes.upserted[0].id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := applyPush(ctx, db, "b1", &tc.push, "")
			var e *board.Error
			if board.ErrorCode(err) != board.EINVALID || !errors.As(err, &e) || e.Field != tc.field {
				t.Fatalf("err=%v, want EINVALID on %s", err, tc.field)
			}
			if v, _ := db.CurrentVersion(ctx, "b1"); v != 1 {
				t.Fatalf("version=%d after a rejected push, want 1", v)
			}
		})
	}
}

func testUnclaimedBoardIsNotFound(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0)
	ctx := context.Background()
	_, _, errPush := applyPush(ctx, db, "ghost", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	_, errPull := db.ChangesSince(ctx, "ghost", 0)
	_, errVer := db.CurrentVersion(ctx, "ghost")
	_, errState := db.BoardState(ctx, "ghost")
	for i, err := range []error{errPush, errPull, errVer, errState} {
		if board.ErrorCode(err) != board.ENOTFOUND {
			t.Errorf("call %d: err=%v, want ENOTFOUND", i, err)
		}
	}
}

func testTombstonePruningResets(t *testing.T, open Opener) {
	db, clock := openWith(t, open, T0, "b1")
	ctx := context.Background()
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("a", "x"), note("b", "x"), note("c", "x")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("i", "x")}},
	}, "") // v1
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}, TrackerItems: board.ItemChanges{Deleted: []string{"i"}}}, "") // v2
	clock.Advance(20 * 24 * time.Hour)
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"b"}}}, "") // v3
	clock.Advance(15 * 24 * time.Hour)

	// 35 days after the first deletion, 15 after the second: a 30-day
	// retention forgets the first only.
	n, err := db.PruneTombstones(ctx, clock.Now().Add(-30*24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneTombstones: n=%d err=%v, want the note and the item deleted at v2", n, err)
	}
	t.Run("BelowHorizonResets", func(t *testing.T) {
		ch := changes(t, db, "b1", 1)
		if !ch.Reset {
			t.Fatal("since 1 < horizon 2: want reset")
		}
		if got := noteIDs(ch.Notes); !slices.Equal(got, []string{"c"}) || len(ch.DeletedNoteIDs) != 0 || len(ch.TrackerItems) != 0 {
			t.Fatalf("reset answer notes=%v deleted=%v items=%v, want the full live state [c]", got, ch.DeletedNoteIDs, ch.TrackerItems)
		}
	})
	t.Run("AtHorizonIncremental", func(t *testing.T) {
		ch := changes(t, db, "b1", 2)
		if ch.Reset || !slices.Equal(ch.DeletedNoteIDs, []string{"b"}) || len(ch.Notes) != 0 {
			t.Fatalf("since 2: reset=%v deleted=%v notes=%v, want only b deleted", ch.Reset, ch.DeletedNoteIDs, noteIDs(ch.Notes))
		}
	})
	t.Run("FullSyncNoReset", func(t *testing.T) {
		if ch := changes(t, db, "b1", 0); ch.Reset {
			t.Fatal("since 0 is a full sync, not a reset")
		}
	})
	t.Run("AheadOfBoardResets", func(t *testing.T) {
		if ch := changes(t, db, "b1", 99); !ch.Reset || ch.ServerVersion != 3 || len(ch.Notes) != 1 {
			t.Fatalf("since 99 > version 3: reset=%v version=%d notes=%d, want reset with the full state", ch.Reset, ch.ServerVersion, len(ch.Notes))
		}
	})
	t.Run("PrunedNoteCanComeBack", func(t *testing.T) {
		v := mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "back")}}}, "")
		if ch := changes(t, db, "b1", v-1); len(ch.Notes) != 1 || ch.Notes[0].ID != "a" {
			t.Fatalf("notes=%v, want a back", noteIDs(ch.Notes))
		}
	})
}

// testAheadOfEmptyBoardResets: a client whose copy is newer than a board
// that has never had a push (its data was lost or the board re-created) is
// told to drop its copy, as for any board it is ahead of.
func testAheadOfEmptyBoardResets(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	ch := changes(t, db, "b1", 5)
	if !ch.Reset || ch.ServerVersion != 0 {
		t.Fatalf("since 5 > version 0: reset=%v serverVersion=%d, want reset at 0", ch.Reset, ch.ServerVersion)
	}
	if len(ch.Notes) != 0 || len(ch.TrackerItems) != 0 || len(ch.DeletedNoteIDs) != 0 {
		t.Fatalf("answer %+v, want the empty full state", ch)
	}
	if ch := changes(t, db, "b1", 0); ch.Reset {
		t.Fatal("since 0 on an empty board is a full sync, not a reset")
	}
}

func testPushesToManyBoardsAtOnce(t *testing.T, open Opener) {
	const boards, each = 50, 4
	ids := make([]string, boards)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
	}
	db, _ := openWith(t, open, T0, ids...)
	var wg sync.WaitGroup
	errs := make(chan error, boards*each)
	for _, id := range ids {
		for j := range each {
			wg.Go(func() {
				_, _, err := applyPush(context.Background(), db, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("n%d", j), id)}}}, "")
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		ch := changes(t, db, id, 0)
		if ch.ServerVersion != each || len(ch.Notes) != each {
			t.Fatalf("%s: version=%d notes=%d, want %d and %d", id, ch.ServerVersion, len(ch.Notes), each, each)
		}
		seen := map[int64]bool{}
		for _, n := range ch.Notes {
			if seen[n.Version] || n.Version < 1 || n.Version > each {
				t.Fatalf("%s: note versions %+v are not 1..%d once each", id, ch.Notes, each)
			}
			seen[n.Version] = true
		}
	}
}

func testApplyPushesInOrder(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	in := []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "1")}}}, IdempotencyKey: "k"},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("", "bad")}}}},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "2")}}}, IdempotencyKey: "k"},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "3")}}}},
	}
	res, err := db.ApplyPushes(context.Background(), "b1", in)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Version != 1 || res[1].Err == nil || res[2].Version != 1 || !res[2].Replayed || res[3].Version != 2 {
		t.Fatalf("results %+v, want v1, invalid, replay of v1, v2", res)
	}
	if ch := changes(t, db, "b1", 0); ch.Notes[0].Content != "3" || ch.ServerVersion != 2 {
		t.Fatalf("final note %q at %d, want 3 at 2", ch.Notes[0].Content, ch.ServerVersion)
	}
}

// testSecondDeleteInOneBatchIsANoOp: when two pushes committed together
// delete the same note, only the first moves the version; the second sees
// the note already gone.
func testSecondDeleteInOneBatchIsANoOp(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	del := &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}
	res, err := db.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: del}, {Push: del}})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatal(err, res[0].Err, res[1].Err)
	}
	if res[0].Version != 2 || res[0].Changes == nil {
		t.Fatalf("first delete: %+v, want version 2 with changes", res[0])
	}
	if res[1].Version != 2 || res[1].Changes != nil {
		t.Fatalf("second delete: %+v, want version 2 and no changes", res[1])
	}
	if ch := changes(t, db, "b1", 1); !slices.Equal(ch.DeletedNoteIDs, []string{"a"}) || ch.ServerVersion != 2 {
		t.Fatalf("since 1: %+v, want a deleted at 2", ch)
	}
}

// testConcurrentPushesOneBoard: pushes racing on one board get the
// versions 1..N, each exactly once; a pull during them never sees a version
// without its rows; and a pull since any version returns exactly the rows
// of the later pushes.
func testConcurrentPushesOneBoard(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b1")
	const n = 32
	got := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v, _, err := applyPush(ctx, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("n%02d", i), "x")}}}, "")
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	// Pulls while the pushes run: each push adds one note, so whatever
	// version a pull sees, it must see exactly that many notes.
	done := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			ch, err := db.ChangesSince(ctx, "b1", 0)
			if err != nil {
				t.Error(err)
				return
			}
			if int64(len(ch.Notes)) != ch.ServerVersion {
				t.Errorf("a pull saw version %d with %d notes", ch.ServerVersion, len(ch.Notes))
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
	wg.Wait()
	close(done)
	reader.Wait()
	if t.Failed() {
		return
	}
	byVersion := map[int64]string{}
	for i, v := range got {
		if v < 1 || v > n || byVersion[v] != "" {
			t.Fatalf("push %d got version %d; versions %v are not 1..%d once each", i, v, got, n)
		}
		byVersion[v] = fmt.Sprintf("n%02d", i)
	}
	if v, err := db.CurrentVersion(ctx, "b1"); err != nil || v != n {
		t.Fatalf("CurrentVersion = %d, %v; want %d", v, err, n)
	}
	for since := int64(0); since <= n; since++ {
		ch := changes(t, db, "b1", since)
		if ch.ServerVersion != n || len(ch.Notes) != int(n-since) {
			t.Fatalf("since %d: %d notes at %d, want %d at %d", since, len(ch.Notes), ch.ServerVersion, n-since, n)
		}
		for _, nt := range ch.Notes {
			if nt.Version <= since || byVersion[nt.Version] != nt.ID {
				t.Fatalf("since %d: note %s at version %d, but its push answered %v", since, nt.ID, nt.Version, got)
			}
		}
	}
}

// testConcurrentBatches: batches racing on one board each take a run of
// consecutive versions, in the batch's order, and no two batches overlap.
func testConcurrentBatches(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b1")
	const batches, each = 8, 3
	res := make([][]persist.Applied, batches)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Go(func() {
			in := make([]persist.PushInput, each)
			for j := range in {
				in[j] = persist.PushInput{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("b%d-%d", b, j), "x")}}}}
			}
			r, err := db.ApplyPushes(ctx, "b1", in)
			if err != nil {
				t.Error(err)
			}
			res[b] = r
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[int64]bool{}
	for b, r := range res {
		if len(r) != each {
			t.Fatalf("batch %d: %d results, want %d", b, len(r), each)
		}
		for j, a := range r {
			if a.Err != nil || a.Changes == nil || a.Version != r[0].Version+int64(j) || seen[a.Version] {
				t.Fatalf("batch %d: results %+v, want %d consecutive fresh versions", b, r, each)
			}
			seen[a.Version] = true
		}
	}
	if len(seen) != batches*each {
		t.Fatalf("%d distinct versions, want %d", len(seen), batches*each)
	}
	if v, _ := db.CurrentVersion(ctx, "b1"); v != batches*each {
		t.Fatalf("CurrentVersion = %d, want %d", v, batches*each)
	}
}

// testBatchFailuresStayInTheirPush: in one ApplyPushes call, a push that
// fails validation (a bad note, a key too long, no body) writes nothing of
// itself, not even its valid rows, and the pushes around it apply fully.
func testBatchFailuresStayInTheirPush(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	in := []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("b", "x")}}}, IdempotencyKey: "kb"},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("c", "x"), note("", "bad")}, Deleted: []string{"a"}}}, IdempotencyKey: "kc"},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("e", "x")}}}, IdempotencyKey: strings.Repeat("k", persist.MaxIdempotencyKeyLen+1)},
		{Push: nil},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("f", "x")}}}},
	}
	res, err := db.ApplyPushes(ctx, "b1", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(in) {
		t.Fatalf("%d results for %d pushes", len(res), len(in))
	}
	for i, want := range []struct {
		version int64
		field   string // of the EINVALID error; "-" for no error
	}{{2, "-"}, {0, "notes.upserted[1].id"}, {0, "Idempotency-Key"}, {0, ""}, {3, "-"}} {
		r := res[i]
		if want.field == "-" {
			if r.Err != nil || r.Version != want.version || r.Changes == nil {
				t.Fatalf("push %d: %+v, want applied at %d", i, r, want.version)
			}
			continue
		}
		if board.ErrorCode(r.Err) != board.EINVALID || errField(r.Err) != want.field || r.Changes != nil {
			t.Fatalf("push %d: %+v, want EINVALID naming %q and no changes", i, r, want.field)
		}
	}
	st, err := db.BoardState(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if got := noteIDs(st.Notes); !slices.Equal(got, []string{"a", "b", "f"}) || st.Board.Version != 3 {
		t.Fatalf("state notes=%v at %d, want [a b f] at 3 (nothing of the failed pushes)", got, st.Board.Version)
	}
	// The failed push's key was not recorded: a corrected retry applies.
	if v, replayed, err := applyPush(ctx, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("c", "x")}}}, "kc"); err != nil || replayed || v != 4 {
		t.Fatalf("corrected retry: v=%d replayed=%v err=%v, want 4, applied", v, replayed, err)
	}
}

// testUnclaimedBatchWritesNothing: a batch for a board nobody claimed fails
// as a whole with ENOTFOUND and leaves nothing behind for a later claim.
func testUnclaimedBatchWritesNothing(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0)
	res, err := db.ApplyPushes(ctx, "ghost", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, IdempotencyKey: "k"}})
	if board.ErrorCode(err) != board.ENOTFOUND || res != nil {
		t.Fatalf("ApplyPushes on an unclaimed board = %v, %v; want ENOTFOUND and no results", res, err)
	}
	if _, err := db.ClaimBoard(ctx, "ghost", Owner); err != nil {
		t.Fatal(err)
	}
	if ch := changes(t, db, "ghost", 0); ch.ServerVersion != 0 || len(ch.Notes) != 0 {
		t.Fatalf("claimed board after a refused push: %+v, want empty at 0", ch)
	}
	if v, replayed, err := applyPush(ctx, db, "ghost", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "k"); err != nil || replayed || v != 1 {
		t.Fatalf("push after the claim: v=%d replayed=%v err=%v, want 1, applied (the refused key was not kept)", v, replayed, err)
	}
}

// testConcurrentReplays: the same idempotency key sent by racing clients is
// applied once; every other answer is a replay of the first, even after
// later pushes moved the board on.
func testConcurrentReplays(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b1")
	const n = 16
	type answer struct {
		v        int64
		replayed bool
	}
	got := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v, replayed, err := applyPush(ctx, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", fmt.Sprint(i))}}}, "same-key")
			if err != nil {
				t.Error(err)
			}
			got[i] = answer{v, replayed}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	winner := -1
	for i, a := range got {
		if a.v != 1 {
			t.Fatalf("answers %+v, want version 1 for all", got)
		}
		if !a.replayed {
			if winner >= 0 {
				t.Fatalf("pushes %d and %d were both applied", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("every push was a replay; one must apply")
	}
	ch := changes(t, db, "b1", 0)
	if ch.ServerVersion != 1 || len(ch.Notes) != 1 || ch.Notes[0].Content != fmt.Sprint(winner) {
		t.Fatalf("state %+v, want the applied push's note at 1", ch)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("b", "x")}}}, "")
	if v, replayed, err := applyPush(ctx, db, "b1", &board.Push{}, "same-key"); err != nil || v != 1 || !replayed {
		t.Fatalf("replay after a later push: v=%d replayed=%v err=%v, want the first answer 1", v, replayed, err)
	}
}

// testHorizonEdges: a tombstone recorded exactly at the cutoff is kept, a
// second prune forgets nothing more, and keys are swept by the same rule.
func testHorizonEdges(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := openWith(t, open, T0, "b1", "b2")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x"), note("b", "x")}}}, "k1") // v1 at T0
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "")                                   // v2 at T0
	clock.Advance(time.Minute)
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"b"}}}, "k3") // v3 at T0+1m
	mustPush(t, db, "b2", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	mustPush(t, db, "b2", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "") // b2 v2 at T0+1m
	clock.Advance(time.Hour)

	cutoff := T0.Add(time.Minute)
	if n, err := db.PruneTombstones(ctx, cutoff); err != nil || n != 1 {
		t.Fatalf("PruneTombstones(T0+1m) = %d, %v; want 1 (a, deleted before; b and b2's a at the cutoff stay)", n, err)
	}
	if n, err := db.PruneTombstones(ctx, cutoff); err != nil || n != 0 {
		t.Fatalf("second PruneTombstones = %d, %v; want 0", n, err)
	}
	if ch := changes(t, db, "b1", 1); !ch.Reset || len(ch.DeletedNoteIDs) != 0 || len(ch.Notes) != 0 || ch.ServerVersion != 3 {
		t.Fatalf("b1 since 1 (below the horizon 2): %+v, want a reset to the empty state at 3", ch)
	}
	if ch := changes(t, db, "b1", 2); ch.Reset || !slices.Equal(ch.DeletedNoteIDs, []string{"b"}) {
		t.Fatalf("b1 since 2: %+v, want b's deletion, no reset", ch)
	}
	if ch := changes(t, db, "b2", 1); ch.Reset || !slices.Equal(ch.DeletedNoteIDs, []string{"a"}) {
		t.Fatalf("b2 since 1: %+v, want a's deletion kept, no reset", ch)
	}

	if n, err := db.SweepIdempotencyKeys(ctx, cutoff); err != nil || n != 1 {
		t.Fatalf("SweepIdempotencyKeys(T0+1m) = %d, %v; want 1 (k1; k3 at the cutoff stays)", n, err)
	}
	if _, replayed, _ := applyPush(ctx, db, "b1", &board.Push{}, "k3"); !replayed {
		t.Fatal("k3, recorded at the cutoff, was forgotten")
	}
	if _, replayed, _ := applyPush(ctx, db, "b1", &board.Push{}, "k1"); replayed {
		t.Fatal("k1, recorded before the cutoff, is still known")
	}
}
