package bolt_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
)

// openSyncDB opens a store in a temp folder with a settable clock and claims
// the given boards for owner@example.com.
func openSyncDB(tb testing.TB, boards ...string) (*bolt.DB, *persisttest.Clock, string) {
	tb.Helper()
	return persisttest.Open(tb, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), boards...)
}

func note(id, content string) board.Note {
	return board.Note{ID: id, Title: "T " + id, Content: content, X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z"}
}

func item(id, summary string) board.TrackerItem {
	return board.TrackerItem{ID: id, Key: "K-" + id, Type: "story", Summary: summary, UpdatedAt: "2026-11-22T09:00:00Z"}
}

func mustPush(tb testing.TB, db *bolt.DB, boardID string, p *board.Push, key string) int64 {
	tb.Helper()
	v, _, err := db.ApplyPush(context.Background(), boardID, p, key)
	if err != nil {
		tb.Fatalf("ApplyPush: %v", err)
	}
	return v
}

func changes(tb testing.TB, db *bolt.DB, boardID string, since int64) *board.Changes {
	tb.Helper()
	ch, err := db.ChangesSince(context.Background(), boardID, since)
	if err != nil {
		tb.Fatalf("ChangesSince(%d): %v", since, err)
	}
	return ch
}

func noteIDs(ns []board.Note) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func TestApplyPushAndChangesSince(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

	t.Run("Full", func(t *testing.T) {
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
	})
	t.Run("Since1", func(t *testing.T) {
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
	})
	t.Run("SinceCurrent", func(t *testing.T) {
		ch := changes(t, db, "b1", 2)
		if len(ch.Notes)+len(ch.DeletedNoteIDs)+len(ch.TrackerItems)+len(ch.DeletedTrackerItemIDs) != 0 || ch.ServerVersion != 2 {
			t.Fatalf("since=current gave %+v, want nothing at version 2", ch)
		}
		if ch.Notes == nil || ch.DeletedNoteIDs == nil || ch.TrackerItems == nil || ch.DeletedTrackerItemIDs == nil {
			t.Fatal("empty lists must be [] not null")
		}
	})
	t.Run("ErrNegativeSince", func(t *testing.T) {
		if _, err := db.ChangesSince(context.Background(), "b1", -1); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("err=%v, want EINVALID", err)
		}
	})
}

func TestApplyPushChangesMatchPull(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

func TestUpsertAndDeleteInOnePushEndsDeleted(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

func TestUpsertBringsDeletedNoteBack(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

// TestPushOfUnknownDeletionsChangesNothing: a push whose deletions name
// only IDs that are not live (never known, or already deleted) is a no-op:
// the version and updatedAt stay, there is nothing to fan out, and an
// already deleted note is not announced again.
func TestPushOfUnknownDeletionsChangesNothing(t *testing.T) {
	ctx := context.Background()
	db, clock, _ := openSyncDB(t, "b1")
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

// TestDeletingDeletedNoteAlongsideChanges: in a push that changes
// something else, deleting an already deleted note neither reports it nor
// moves its tombstone to the new version.
func TestDeletingDeletedNoteAlongsideChanges(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

// TestNoOpPushKeepsItsIdempotencyKey: a push that changes nothing records
// its key with the current version, so that a retry is a replay and stays a
// no-op even once the ID it deletes exists.
func TestNoOpPushKeepsItsIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	db, _, _ := openSyncDB(t, "b1")
	del := &board.Push{Notes: board.NoteChanges{Deleted: []string{"later"}}}
	if v, replayed, err := db.ApplyPush(ctx, "b1", del, "k-del"); err != nil || v != 0 || replayed {
		t.Fatalf("no-op push: v=%d replayed=%v err=%v, want 0, not replayed", v, replayed, err)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("later", "x")}}}, "")
	if v, replayed, err := db.ApplyPush(ctx, "b1", del, "k-del"); err != nil || v != 0 || !replayed {
		t.Fatalf("retry: v=%d replayed=%v err=%v, want the original 0, replayed", v, replayed, err)
	}
	if ch := changes(t, db, "b1", 0); !slices.Equal(noteIDs(ch.Notes), []string{"later"}) || ch.ServerVersion != 1 {
		t.Fatalf("after the retry: %+v, want later live at 1", ch)
	}
	empty := &board.Push{ClientVersion: 1}
	if v, _, err := db.ApplyPush(ctx, "b1", empty, "k-empty"); err != nil || v != 1 {
		t.Fatalf("empty push: v=%d err=%v, want 1", v, err)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("more", "y")}}}, "")
	if v, replayed, _ := db.ApplyPush(ctx, "b1", empty, "k-empty"); v != 1 || !replayed {
		t.Fatalf("empty retry: v=%d replayed=%v, want the original 1, replayed", v, replayed)
	}
}

func TestIdempotencyKey(t *testing.T) {
	db, clock, _ := openSyncDB(t, "b1")
	ctx := context.Background()
	first := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "first")}}}
	v, replayed, err := db.ApplyPush(ctx, "b1", first, "key-1")
	if err != nil || v != 1 || replayed {
		t.Fatalf("first: v=%d replayed=%v err=%v, want 1 false nil", v, replayed, err)
	}
	// A retry (even with another body) answers the original version and
	// applies nothing.
	retry := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "changed")}}}
	v, replayed, err = db.ApplyPush(ctx, "b1", retry, "key-1")
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
	if v, replayed, _ := db.ApplyPush(ctx, "b2", retry, "key-1"); v != 1 || replayed {
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
	if v, replayed, _ := db.ApplyPush(ctx, "b1", retry, "key-1"); v != 2 || replayed {
		t.Fatalf("after sweep: v=%d replayed=%v, want 2 applied", v, replayed)
	}
	t.Run("ErrTooLong", func(t *testing.T) {
		_, _, err := db.ApplyPush(ctx, "b1", retry, strings.Repeat("k", persist.MaxIdempotencyKeyLen+1))
		if board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("err=%v, want EINVALID", err)
		}
	})
}

func TestEmptyPushKeepsVersion(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	res, err := db.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: &board.Push{ClientVersion: 1}}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if res[0].Version != 1 || res[0].Changes != nil || res[0].Replayed {
		t.Fatalf("empty push: %+v, want version 1, no changes", res[0])
	}
}

func TestPushRenamesBoard(t *testing.T) {
	db, clock, _ := openSyncDB(t, "b1")
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

func TestInvalidPushAppliesNothing(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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
			_, _, err := db.ApplyPush(ctx, "b1", &tc.push, "")
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

func TestUnclaimedBoardIsNotFound(t *testing.T) {
	db, _, _ := openSyncDB(t)
	ctx := context.Background()
	_, _, errPush := db.ApplyPush(ctx, "ghost", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "")
	_, errPull := db.ChangesSince(ctx, "ghost", 0)
	_, errVer := db.CurrentVersion(ctx, "ghost")
	_, errState := db.BoardState(ctx, "ghost")
	for i, err := range []error{errPush, errPull, errVer, errState} {
		if board.ErrorCode(err) != board.ENOTFOUND {
			t.Errorf("call %d: err=%v, want ENOTFOUND", i, err)
		}
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("n%d", i), "x")}}}, fmt.Sprintf("k%d", i))
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"n0"}}}, "")
	before := changes(t, db, "b1", 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if diff := cmp.Diff(before, changes(t, db, "b1", 0)); diff != "" {
		t.Fatalf("state changed across restart (-before +after):\n%s", diff)
	}
	if ch := changes(t, db, "b1", 5); !slices.Equal(ch.DeletedNoteIDs, []string{"n0"}) {
		t.Fatalf("tombstone lost across restart: %v", ch.DeletedNoteIDs)
	}
	if v, replayed, _ := db.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("z", "x")}}}, "k2"); v != 3 || !replayed {
		t.Fatalf("idempotency key after restart: v=%d replayed=%v, want 3 true", v, replayed)
	}
	if v := mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("z", "x")}}}, ""); v != 7 {
		t.Fatalf("version after restart=%d, want 7 (continues upward)", v)
	}
}

func TestTombstonePruningResets(t *testing.T) {
	db, clock, _ := openSyncDB(t, "b1")
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

// TestAheadOfEmptyBoardResets: a client whose copy is newer than a board
// that has never had a push (its data was lost or the board re-created) is
// told to drop its copy, as for any board it is ahead of.
func TestAheadOfEmptyBoardResets(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

func TestPushesToManyBoardsAtOnce(t *testing.T) {
	const boards, each = 50, 4
	ids := make([]string, boards)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
	}
	db, _, _ := openSyncDB(t, ids...)
	var wg sync.WaitGroup
	errs := make(chan error, boards*each)
	for _, id := range ids {
		for j := range each {
			wg.Go(func() {
				_, _, err := db.ApplyPush(context.Background(), id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(fmt.Sprintf("n%d", j), id)}}}, "")
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

func TestApplyPushesInOrder(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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

// seedBoard gives b1 n notes of about 200 bytes, one push of 500 at a time.
func seedBoard(tb testing.TB, db *bolt.DB, n int) {
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

// crashChildEnv names the data folder when the test binary runs as the
// child of TestKillNineKeepsAcknowledgedPushes.
const crashChildEnv = "CORKBOARD_SYNC_CRASH_CHILD"

// TestKillNineKeepsAcknowledgedPushes runs a child process that pushes as
// fast as it can and prints each acknowledged version, kills it with
// SIGKILL mid-stream, then checks that every acknowledged push is stored
// and that versions continue upward.
func TestKillNineKeepsAcknowledgedPushes(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ClaimBoard(context.Background(), "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineKeepsAcknowledgedPushes$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]int64{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(acked) < 30 {
		var id string
		var v int64
		if _, err := fmt.Sscanf(sc.Text(), "ack %s %d", &id, &v); err == nil {
			acked[id] = v
		}
	}
	// Killed while it is in the middle of more pushes.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() { // acks printed before the kill landed count too
		var id string
		var v int64
		if _, err := fmt.Sscanf(sc.Text(), "ack %s %d", &id, &v); err == nil {
			acked[id] = v
		}
	}
	_ = cmd.Wait()
	if len(acked) < 30 {
		t.Fatalf("child acknowledged only %d pushes", len(acked))
	}

	db, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ch := changes(t, db, "b1", 0)
	stored := map[string]int64{}
	for _, n := range ch.Notes {
		stored[n.ID] = n.Version
	}
	for id, v := range acked {
		if stored[id] != v {
			t.Fatalf("acknowledged push %s (version %d) lost: stored at %d", id, v, stored[id])
		}
	}
	if v := mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("after", "x")}}}, ""); v != ch.ServerVersion+1 || v <= int64(len(acked)) {
		t.Fatalf("version after the crash=%d, want %d (above every acknowledged one)", v, ch.ServerVersion+1)
	}
}

func crashChild(dir string) {
	db, err := bolt.Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	// Bounded, so that an orphaned child cannot run forever.
	for i := range 100_000 {
		id := fmt.Sprintf("n%d", i)
		v, _, err := db.ApplyPush(context.Background(), "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(id, "x")}}}, "")
		if err != nil {
			fmt.Println("push:", err)
			os.Exit(1)
		}
		fmt.Printf("ack %s %d\n", id, v) // stdout is unbuffered: printed means acknowledged
	}
	os.Exit(0)
}

// TestSecondDeleteInOneBatchIsANoOp: when two pushes committed together
// delete the same note, only the first moves the version; the second sees
// the note already gone.
func TestSecondDeleteInOneBatchIsANoOp(t *testing.T) {
	db, _, _ := openSyncDB(t, "b1")
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
