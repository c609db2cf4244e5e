package storetest

import (
	"context"
	"testing"

	"corkboard/board"
	"corkboard/persist"
)

// Locks and roles (board.SettleRights, docs/api.md "Locks and roles"):
// every store checks a push against its rows as stored, in the push's
// transaction, and keeps createdBy and locked as stored.

const (
	editor = "editor@example.com"
	adder  = "adder@example.com"
)

func runRights(t *testing.T, open Opener) {
	t.Run("Roles", func(t *testing.T) { testRoles(t, open) })
	t.Run("CreatedByIsTheStores", func(t *testing.T) { testCreatedBy(t, open) })
	t.Run("LockedRefusedWhole", func(t *testing.T) { testLockedRefused(t, open) })
	t.Run("AddRoleOwnNotesOnly", func(t *testing.T) { testAddRole(t, open) })
	t.Run("LockInBatchBeforeEdit", func(t *testing.T) { testLockInBatch(t, open) })
	t.Run("EditInBatchBeforeLock", func(t *testing.T) { testEditBeforeLock(t, open) })
}

func as(email string, owner bool, role string) *board.Author {
	return &board.Author{Email: email, Owner: owner, Role: role}
}

func pushAs(t *testing.T, s persist.Store, a *board.Author, p board.Push) persist.Applied {
	t.Helper()
	p.Author = a
	res, err := s.ApplyPushes(context.Background(), "b", []persist.PushInput{{Push: &p}})
	if err != nil {
		t.Fatalf("ApplyPushes: %v", err)
	}
	return res[0]
}

func mustApply(t *testing.T, res persist.Applied) {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("push refused: %v", res.Err)
	}
}

func wantRefused(t *testing.T, res persist.Applied, field, id string) {
	t.Helper()
	var e *board.Error
	if res.Err == nil || board.ErrorCode(res.Err) != board.EFORBIDDEN {
		t.Fatalf("push answered %+v, want 403 naming %s", res, field)
	}
	e = res.Err.(*board.Error)
	if e.Field != field || e.ID != id {
		t.Fatalf("refusal names field %q id %q, want %q %q (%s)", e.Field, e.ID, field, id, e.Message)
	}
	if res.Changes != nil || res.Version != 0 {
		t.Fatalf("refused push answered version %d with changes: something was applied", res.Version)
	}
}

func storedNote(t *testing.T, s persist.Store, id string) board.Note {
	t.Helper()
	st, err := s.BoardState(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Notes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("note %s is not on the board", id)
	return board.Note{}
}

func testRoles(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b")
	if _, _, err := s.AddInvite(ctx, "b", adder); err != nil {
		t.Fatal(err)
	}
	setRoleRefusals(t, s)
	for _, step := range []struct {
		role    string
		changed bool
	}{{board.RoleEdit, false}, {board.RoleAdd, true}, {board.RoleAdd, false}, {board.RoleView, true}, {board.RoleEdit, true}, {board.RoleAdd, true}} {
		b, changed, err := s.SetRole(ctx, "b", adder, step.role)
		if err != nil || changed != step.changed || b.RoleOf(adder) != step.role {
			t.Fatalf("SetRole(%s) = role %s changed %v, %v; want changed %v", step.role, b.RoleOf(adder), changed, err, step.changed)
		}
		if b, err = s.FindBoard(ctx, "b"); err != nil || b.RoleOf(adder) != step.role {
			t.Fatalf("FindBoard after SetRole(%s): role %s, %v", step.role, b.RoleOf(adder), err)
		}
	}
	list, err := s.ListBoardsFor(ctx, adder)
	if err != nil || len(list) != 1 || list[0].RoleOf(adder) != board.RoleAdd {
		t.Fatalf("ListBoardsFor = %+v, %v; want the board with role add", list, err)
	}
	// A push keeps the roles (the board is written back with its version).
	mustApply(t, pushAs(t, s, nil, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "a")}}}))
	// Removing the invitee forgets the role: invited again, they edit.
	if _, _, err := s.RemoveInvite(ctx, "b", adder); err != nil {
		t.Fatal(err)
	}
	b, _, err := s.AddInvite(ctx, "b", adder)
	if err != nil || b.RoleOf(adder) != board.RoleEdit {
		t.Fatalf("invited again: role %s, %v; want edit", b.RoleOf(adder), err)
	}
	if b, err = s.FindBoard(ctx, "b"); err != nil || b.RoleOf(adder) != board.RoleEdit || len(b.Roles) != 0 {
		t.Fatalf("FindBoard after re-invite: roles %v, %v; want none", b.Roles, err)
	}
}

// setRoleRefusals: on board "b", with adder invited, SetRole refuses the
// owner, someone not invited, a role that is none, and an unclaimed board.
func setRoleRefusals(t *testing.T, s persist.Store) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := s.SetRole(ctx, "b", Owner, board.RoleView); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("SetRole(owner) = %v, want not_found (the owner has no role)", err)
	}
	if _, _, err := s.SetRole(ctx, "b", "stranger@example.com", board.RoleView); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("SetRole(not invited) = %v, want not_found", err)
	}
	if _, _, err := s.SetRole(ctx, "b", adder, "admin"); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("SetRole(admin) = %v, want invalid", err)
	}
	if _, _, err := s.SetRole(ctx, "nope", adder, board.RoleAdd); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("SetRole(unclaimed) = %v, want not_found", err)
	}
}

func testCreatedBy(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b")
	mine := note("n1", "a")
	mine.CreatedBy = "someone-else@example.com" // a client's value is ignored
	res := pushAs(t, s, as(editor, false, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mine}}})
	mustApply(t, res)
	if got := res.Changes.Notes[0].CreatedBy; got != editor {
		t.Fatalf("changes carry createdBy %q, want %q", got, editor)
	}
	// The owner's edit keeps the creator; so does a merge.
	edit := note("n1", "b")
	edit.CreatedBy = Owner
	mustApply(t, pushAs(t, s, as(Owner, true, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edit}}}))
	edit.BaseVersion, edit.Content = 1, "c"
	mustApply(t, pushAs(t, s, as(Owner, true, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edit}}}))
	if got := storedNote(t, s, "n1"); got.CreatedBy != editor || got.Content != "c" {
		t.Fatalf("stored note = createdBy %q content %q, want %q and c", got.CreatedBy, got.Content, editor)
	}
	// A push without an author (the server's own) keeps it too, and a
	// note it creates has none (the owner's).
	mustApply(t, pushAs(t, s, nil, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "d"), note("n2", "e")}}}))
	if a, b := storedNote(t, s, "n1"), storedNote(t, s, "n2"); a.CreatedBy != editor || b.CreatedBy != "" {
		t.Fatalf("after a server push: createdBy %q and %q, want %q and none", a.CreatedBy, b.CreatedBy, editor)
	}
}

func testLockedRefused(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b")
	owner, ed := as(Owner, true, board.RoleEdit), as(editor, false, board.RoleEdit)
	locked := note("n1", "a")
	locked.Locked, locked.LockedSent = true, true
	f := frame("f1", "Risks")
	f.Locked, f.LockedSent = true, true
	mustApply(t, pushAs(t, s, owner, board.Push{
		Notes:  board.NoteChanges{Upserted: []board.Note{locked, note("n2", "b")}},
		Frames: board.FrameChanges{Upserted: []board.Frame{f}},
	}))
	moved := note("n1", "a")
	moved.X = 500
	lockIt := note("n2", "b")
	lockIt.Locked, lockIt.LockedSent = true, true
	unlockFrame := frame("f1", "Risks")
	unlockFrame.LockedSent = true
	tests := []struct {
		name      string
		push      board.Push
		field, id string
	}{
		// n2 is free, n1 locked: nothing of the push is applied.
		{"EditLocked", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n2", "free"), moved}}}, "notes.upserted[1]", "n1"},
		{"DeleteLocked", board.Push{Notes: board.NoteChanges{Deleted: []string{"n2", "n1"}}}, "notes.deleted[1]", "n1"},
		{"LockAsEditor", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{lockIt}}}, "notes.upserted[0].locked", "n2"},
		{"EditLockedFrame", board.Push{Frames: board.FrameChanges{Upserted: []board.Frame{frame("f1", "Mine")}}}, "frames.upserted[0]", "f1"},
		{"UnlockFrame", board.Push{Frames: board.FrameChanges{Upserted: []board.Frame{unlockFrame}}}, "frames.upserted[0]", "f1"},
		{"DeleteLockedFrame", board.Push{Frames: board.FrameChanges{Deleted: []string{"f1"}}}, "frames.deleted[0]", "f1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRefused(t, pushAs(t, s, ed, tt.push), tt.field, tt.id)
		})
	}
	if n := storedNote(t, s, "n2"); n.Content != "b" || n.Locked {
		t.Fatalf("n2 = %q locked %v after refused pushes, want it untouched", n.Content, n.Locked)
	}
	// A pulled locked note sent back as it is (locked: true, unchanged)
	// is still a change of a locked note; without "locked" the editor's
	// push of a free note keeps it free.
	mustApply(t, pushAs(t, s, ed, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n2", "free")}}}))
	// The owner's push without "locked" keeps the lock; with false it
	// clears it, and the editor may then move it.
	mustApply(t, pushAs(t, s, owner, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "owner's")}}}))
	if n := storedNote(t, s, "n1"); !n.Locked || n.Content != "owner's" {
		t.Fatalf("owner's edit without locked: locked %v content %q, want still locked", n.Locked, n.Content)
	}
	unlock := note("n1", "owner's")
	unlock.LockedSent = true
	mustApply(t, pushAs(t, s, owner, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{unlock}}}))
	mustApply(t, pushAs(t, s, ed, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{moved}}}))
	if n := storedNote(t, s, "n1"); n.Locked || n.X != 500 {
		t.Fatalf("after unlock: locked %v x %v, want the editor's move", n.Locked, n.X)
	}
}

func testAddRole(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b")
	add := as(adder, false, board.RoleAdd)
	mustApply(t, pushAs(t, s, as(Owner, true, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("owners", "o")}}}))
	mustApply(t, pushAs(t, s, nil, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("old", "from before createdBy")}}}))
	mustApply(t, pushAs(t, s, add, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("mine", "m")}}}))
	mustApply(t, pushAs(t, s, add, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("mine", "m2")}}}))
	tests := []struct {
		name      string
		push      board.Push
		field, id string
	}{
		{"EditOwners", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("mine", "m3"), note("owners", "x")}}}, "notes.upserted[1]", "owners"},
		{"EditOldNote", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("old", "x")}}}, "notes.upserted[0]", "old"},
		{"DeleteOwners", board.Push{Notes: board.NoteChanges{Deleted: []string{"owners"}}}, "notes.deleted[0]", "owners"},
		{"Frame", board.Push{Frames: board.FrameChanges{Upserted: []board.Frame{frame("f", "F")}}}, "frames", ""},
		{"Connector", board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c", "mine", "owners")}}}, "connectors", ""},
		{"Item", board.Push{TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("i", "x")}}}, "trackerItems", ""},
		{"Rename", board.Push{Board: &board.BoardPatch{Name: "Mine"}}, "board", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRefused(t, pushAs(t, s, add, tt.push), tt.field, tt.id)
		})
	}
	if n := storedNote(t, s, "mine"); n.Content != "m2" || n.CreatedBy != adder {
		t.Fatalf("mine = %q by %q, want m2 by %s", n.Content, n.CreatedBy, adder)
	}
	mustApply(t, pushAs(t, s, add, board.Push{Notes: board.NoteChanges{Deleted: []string{"mine"}}}))
	// A viewer's push (the guard refuses it first) is refused here too.
	wantRefused(t, pushAs(t, s, as(adder, false, board.RoleView), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("v", "v")}}}), "", "")
}

// testLockInBatch: the owner locks a note while an editor's offline edit
// of it is in flight; whichever the store applies first decides. Here the
// lock comes first in one batch: the edit is refused, the lock applied.
func testLockInBatch(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b")
	mustApply(t, pushAs(t, s, as(editor, false, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "a")}}}))
	lock := note("n1", "a")
	lock.Locked, lock.LockedSent, lock.BaseVersion = true, true, 1
	offline := note("n1", "offline edit")
	offline.BaseVersion = 1
	res, err := s.ApplyPushes(context.Background(), "b", []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{lock}}, Author: as(Owner, true, board.RoleEdit)}},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{offline}}, Author: as(editor, false, board.RoleEdit)}, IdempotencyKey: "k"},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n2", "b")}}, Author: as(editor, false, board.RoleEdit)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, res[0])
	wantRefused(t, res[1], "notes.upserted[0]", "n1")
	mustApply(t, res[2])
	if res[2].Version != res[0].Version+1 {
		t.Fatalf("versions %d then %d: the refused push took a version", res[0].Version, res[2].Version)
	}
	if n := storedNote(t, s, "n1"); !n.Locked || n.Content != "a" {
		t.Fatalf("n1 = %q locked %v, want the owner's lock and no offline edit", n.Content, n.Locked)
	}
	// The refused push's key was not recorded: once unlocked, its retry
	// applies (the client drops it instead; docs/sync.md).
	unlock := note("n1", "a")
	unlock.LockedSent = true
	mustApply(t, pushAs(t, s, as(Owner, true, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{unlock}}}))
	res, err = s.ApplyPushes(context.Background(), "b", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{offline}}, Author: as(editor, false, board.RoleEdit)}, IdempotencyKey: "k"}})
	if err != nil || res[0].Err != nil || res[0].Replayed {
		t.Fatalf("retry after unlock = %+v, %v; want applied", res[0], err)
	}
}

// testEditBeforeLock: the editor's offline edit lands first, then the
// owner's lock (pushed with the base the owner saw): both apply, the lock
// merges onto the edited note and changes nothing else.
func testEditBeforeLock(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b")
	mustApply(t, pushAs(t, s, as(editor, false, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "one\ntwo")}}}))
	offline := note("n1", "one\nTWO (offline)")
	offline.BaseVersion = 1
	lock := note("n1", "one\ntwo")
	lock.Locked, lock.LockedSent, lock.BaseVersion = true, true, 1
	res, err := s.ApplyPushes(context.Background(), "b", []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{offline}}, Author: as(editor, false, board.RoleEdit)}},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{lock}}, Author: as(Owner, true, board.RoleEdit)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, res[0])
	mustApply(t, res[1])
	if n := storedNote(t, s, "n1"); !n.Locked || n.Content != "one\nTWO (offline)" || n.CreatedBy != editor {
		t.Fatalf("n1 = %q locked %v by %q, want the offline edit kept, locked, created by the editor", n.Content, n.Locked, n.CreatedBy)
	}
	// From now on the editor's next edit is refused.
	next := note("n1", "three")
	next.BaseVersion = 3
	wantRefused(t, pushAs(t, s, as(editor, false, board.RoleEdit), board.Push{Notes: board.NoteChanges{Upserted: []board.Note{next}}}), "notes.upserted[0]", "n1")
}
