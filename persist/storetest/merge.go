package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
)

// runMerge: pushes with baseVersion merged into what was committed since,
// the revisions they merge against, what is logged when a merge overwrites
// something, and the revision sweep (docs/sync.md, "How a push is
// merged"). The store must be wired with changelog.RenderNote
// (SetNoteRenderer), as the server wires it.
func runMerge(t *testing.T, open Opener) {
	t.Run("Rules", func(t *testing.T) { testMergeRules(t, open) })
	t.Run("ReplayDoesNotMergeTwice", func(t *testing.T) { testMergeReplay(t, open) })
	t.Run("InvalidPushWritesNoRevision", func(t *testing.T) { testMergeInvalidPushWritesNoRevision(t, open) })
	t.Run("FailedPushWritesNoRevisionNorLog", func(t *testing.T) { testMergeFailedPushWritesNothing(t, open) })
	t.Run("PruneRevisionsKeepsNewest", func(t *testing.T) { testPruneRevisionsKeepsNewest(t, open) })
	t.Run("PruneRevisionsCutoff", func(t *testing.T) { testPruneRevisionsCutoff(t, open) })
}

// noteRendererSetter is how the suite takes the renderer away from a store
// to make a push fail inside its transaction.
type noteRendererSetter interface {
	SetNoteRenderer(render func(board.Note) []byte)
}

// mergeNote is the note every merge case starts from, at version 1.
func mergeNote() board.Note {
	return board.Note{ID: "a", Title: "T", Content: "one\ntwo\nthree", X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z"}
}

// mergeItem is the item every merge case starts from, at version 1.
func mergeItem() board.TrackerItem {
	return board.TrackerItem{ID: "i", Key: "CB-1", Type: "story", Summary: "s", Description: "d1\nd2", Status: "todo", UpdatedAt: "2026-11-22T09:00:00Z"}
}

// edited returns the start note with content and baseVersion changed.
func edited(content string, base int64) board.Note {
	n := mergeNote()
	n.Content, n.BaseVersion = content, base
	return n
}

func editedItem(base int64, f func(it *board.TrackerItem)) board.TrackerItem {
	it := mergeItem()
	it.BaseVersion = base
	f(&it)
	return it
}

// mergeEnv is one merge case's store, with note a and item i at version 1.
type mergeEnv struct {
	t     *testing.T
	s     persist.Store
	clock *Clock
}

// push applies one push and returns its result; it fails the test on any
// error.
func (e *mergeEnv) push(p *board.Push) persist.Applied {
	e.t.Helper()
	return e.batch(persist.PushInput{Push: p})[0]
}

func (e *mergeEnv) batch(in ...persist.PushInput) []persist.Applied {
	e.t.Helper()
	res, err := e.s.ApplyPushes(context.Background(), "b1", in)
	if err != nil {
		e.t.Fatalf("ApplyPushes: %v", err)
	}
	for i, r := range res {
		if r.Err != nil {
			e.t.Fatalf("push %d: %v", i, r.Err)
		}
	}
	return res
}

func (e *mergeEnv) notes(ns ...board.Note) persist.Applied {
	e.t.Helper()
	return e.push(&board.Push{Notes: board.NoteChanges{Upserted: ns}})
}

func (e *mergeEnv) deleteNote(id string) persist.Applied {
	e.t.Helper()
	return e.push(&board.Push{Notes: board.NoteChanges{Deleted: []string{id}}})
}

func (e *mergeEnv) items(its ...board.TrackerItem) persist.Applied {
	e.t.Helper()
	return e.push(&board.Push{TrackerItems: board.ItemChanges{Upserted: its}})
}

// forgetAllRevisions prunes every revision there is and returns how many
// there were: how the suite counts revisions (it can count them no other
// way), at the end of a test.
func forgetAllRevisions(tb testing.TB, s persist.SyncStore) int {
	tb.Helper()
	n, err := s.PruneRevisions(context.Background(), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), 0) // within UnixNano
	if err != nil {
		tb.Fatalf("PruneRevisions: %v", err)
	}
	return n
}

// mergeWant is what a merge case expects of the push under test.
type mergeWant struct {
	// note, when set, checks note a in the push's changes (content, title,
	// position, size, color); item checks item i (summary, description, status).
	note *board.Note
	item *board.TrackerItem
	// updatedAt, when set, is the row's expected updatedAt ("now" for the
	// server's clock).
	updatedAt string
	merged    int
	fallbacks int
	// events are the expected events without LogKey (checked against
	// logged).
	events []persist.MergeEvent
	// logged are the actions of the changelog entries the push appended,
	// in order; lost is a line each of them must hold, and lostVersion the
	// version of the note they render.
	logged []string
	// lostSize, when set, is the w and h of the note the entries render.
	lostSize    *[2]float64
	lost        string
	lostVersion int64
}

func wantNote(content string, x, y float64) *board.Note {
	n := mergeNote()
	n.Content, n.X, n.Y = content, x, y
	return &n
}

func sized(n *board.Note, w, h float64) *board.Note {
	n.W, n.H = w, h
	return n
}

func testMergeRules(t *testing.T, open Opener) {
	moved := mergeNote()
	moved.X, moved.Y, moved.BaseVersion = 50, 60, 1
	noBase := edited("one\nmine\nthree", 0)
	noBase.X = 9
	ticks := func(a, b, c string) string { return "- [" + a + "] a\n- [" + b + "] b\n- [" + c + "] c" }
	checklist := func(e *mergeEnv) {
		e.notes(edited(ticks(" ", " ", " "), 0)) // v2
		e.notes(edited(ticks("x", " ", " "), 2)) // v3
	}
	cases := []struct {
		name   string
		before func(e *mergeEnv)
		push   func(e *mergeEnv) persist.Applied
		want   mergeWant
	}{
		{
			name:   "MoveAndTextEdit",
			before: func(e *mergeEnv) { e.notes(moved) },
			push: func(e *mergeEnv) persist.Applied {
				n := edited("one\nTWO\nthree", 1)
				n.UpdatedAt = ""
				return e.notes(n)
			},
			want: mergeWant{note: wantNote("one\nTWO\nthree", 50, 60), updatedAt: "now", merged: 1},
		},
		{
			name:   "MoveAndResizeBothSurvive",
			before: func(e *mergeEnv) { e.notes(moved) },
			push: func(e *mergeEnv) persist.Applied {
				n := edited(mergeNote().Content, 1)
				n.W, n.H = 300, 200
				return e.notes(n)
			},
			want: mergeWant{note: sized(wantNote(mergeNote().Content, 50, 60), 300, 200), merged: 1},
		},
		{
			name: "ResizeAndMoveBothSurvive",
			before: func(e *mergeEnv) {
				n := edited(mergeNote().Content, 1)
				n.W, n.H = 480, 320
				e.notes(n)
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(moved) },
			want: mergeWant{note: sized(wantNote(mergeNote().Content, 50, 60), 480, 320), merged: 1},
		},
		{
			name: "OverlapLogsTheirsWithItsSize",
			before: func(e *mergeEnv) {
				n := edited("one\ntheirs\nthree", 1)
				n.W, n.H = 400, 300
				e.notes(n)
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("one\nmine\nthree", 1)) },
			want: mergeWant{
				note: sized(wantNote("one\nmine\nthree", 1, 2), 400, 300), merged: 1,
				events: []persist.MergeEvent{{Kind: persist.MergeOverlap, Table: persist.MergeTableNote, ID: "a", Version: 2}},
				logged: []string{persist.ActionUpdateNote}, lost: "theirs", lostVersion: 2, lostSize: &[2]float64{400, 300},
			},
		},
		{
			name:   "NeighbouringChecklistTicks",
			before: checklist,
			push:   func(e *mergeEnv) persist.Applied { return e.notes(edited(ticks(" ", "x", " "), 2)) },
			want:   mergeWant{note: wantNote(ticks("x", "x", " "), 1, 2), merged: 1},
		},
		{
			name:   "OverlapLaterPushWinsAndTheirsIsLogged",
			before: func(e *mergeEnv) { e.notes(edited("one\ntheirs\nthree", 1)) },
			push:   func(e *mergeEnv) persist.Applied { return e.notes(edited("one\nmine\nthree", 1)) },
			want: mergeWant{
				note: wantNote("one\nmine\nthree", 1, 2), merged: 1,
				events: []persist.MergeEvent{{Kind: persist.MergeOverlap, Table: persist.MergeTableNote, ID: "a", Version: 2}},
				logged: []string{persist.ActionUpdateNote}, lost: "theirs", lostVersion: 2,
			},
		},
		{
			name:   "RevivalAfterDelete",
			before: func(e *mergeEnv) { e.deleteNote("a") },
			push:   func(e *mergeEnv) persist.Applied { return e.notes(edited("one\ntwo\nthree!", 1)) },
			want: mergeWant{
				note: wantNote("one\ntwo\nthree!", 1, 2), merged: 1,
				events: []persist.MergeEvent{{Kind: persist.MergeRevived, Table: persist.MergeTableNote, ID: "a", Version: 2}},
				logged: []string{persist.ActionDeleteNote}, lost: "three", lostVersion: 1,
			},
		},
		{
			name: "RevivalKeepsWhatWasCommittedBeforeTheDeletion",
			before: func(e *mergeEnv) {
				e.notes(edited("ONE\ntwo\nthree", 1)) // v2
				e.deleteNote("a")                     // v3
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("one\ntwo\nTHREE", 1)) },
			want: mergeWant{
				note: wantNote("ONE\ntwo\nTHREE", 1, 2), merged: 1,
				events: []persist.MergeEvent{{Kind: persist.MergeRevived, Table: persist.MergeTableNote, ID: "a", Version: 3}},
				logged: []string{persist.ActionDeleteNote}, lost: "ONE", lostVersion: 2,
			},
		},
		{
			name: "RevivalWithOverlapLogsTheNoteOnce",
			before: func(e *mergeEnv) {
				e.notes(edited("one\ntheirs\nthree", 1)) // v2
				e.deleteNote("a")                        // v3
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("one\nmine\nthree", 1)) },
			want: mergeWant{
				note: wantNote("one\nmine\nthree", 1, 2), merged: 1,
				events: []persist.MergeEvent{
					{Kind: persist.MergeRevived, Table: persist.MergeTableNote, ID: "a", Version: 3},
					{Kind: persist.MergeOverlap, Table: persist.MergeTableNote, ID: "a", Version: 2},
				},
				logged: []string{persist.ActionDeleteNote}, lost: "theirs", lostVersion: 2,
			},
		},
		{
			// The base names a board version at which a was current but
			// not written: its state is the newest revision below it.
			name: "BaseBetweenTheRowsWrites",
			before: func(e *mergeEnv) {
				other := mergeNote()
				other.ID = "b"
				e.notes(other)                           // v2: a stays at 1
				e.notes(edited("one\ntheirs\nthree", 1)) // v3
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("one\ntwo\nTHREE", 2)) },
			want: mergeWant{note: wantNote("one\ntheirs\nTHREE", 1, 2), merged: 1},
		},
		{
			name:   "BaseAtCurrentVersionReplaces",
			before: func(e *mergeEnv) { e.notes(edited("one\ntheirs\nthree", 1)) },
			push:   func(e *mergeEnv) persist.Applied { return e.notes(edited("mine only", 2)) },
			want:   mergeWant{note: wantNote("mine only", 1, 2)},
		},
		{
			name:   "BaseAboveCurrentVersionReplaces",
			before: func(e *mergeEnv) { e.notes(edited("one\ntheirs\nthree", 1)) },
			push:   func(e *mergeEnv) persist.Applied { return e.notes(edited("mine only", 99)) },
			want:   mergeWant{note: wantNote("mine only", 1, 2)},
		},
		{
			name:   "NoBaseVersionReplacesTheWholeRow",
			before: func(e *mergeEnv) { e.notes(edited("one\ntheirs\nthree", 1)) },
			push:   func(e *mergeEnv) persist.Applied { return e.notes(noBase) },
			want:   mergeWant{note: wantNote("one\nmine\nthree", 9, 2)},
		},
		{
			name:   "NewRowWithBaseIsWrittenAsSent",
			before: func(e *mergeEnv) { e.notes(edited("x", 1)) },
			push: func(e *mergeEnv) persist.Applied {
				n := edited("new", 2)
				n.ID = "new"
				return e.notes(n)
			},
		},
		{
			name: "ForgottenBaseFallsBackToWholeRow",
			before: func(e *mergeEnv) {
				e.notes(edited("one\ntheirs\nthree", 1)) // v2
				e.clock.Advance(time.Hour)
				if n, err := e.s.PruneRevisions(context.Background(), e.clock.Now(), 0); err != nil || n != 1 {
					e.t.Fatalf("PruneRevisions = %d, %v; want the revision at 1 forgotten", n, err)
				}
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("one\ntwo\nmine", 1)) },
			want: mergeWant{note: wantNote("one\ntwo\nmine", 1, 2), fallbacks: 1},
		},
		{
			name: "TombstoneBaseFallsBackToWholeRow",
			before: func(e *mergeEnv) {
				e.deleteNote("a")                 // v2
				e.notes(edited("fresh", 0))       // v3: back, as sent
				e.notes(edited("fresh\nmore", 3)) // v4
			},
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("mine", 2)) },
			want: mergeWant{note: wantNote("mine", 1, 2), fallbacks: 1},
		},
		{
			name: "PrunedTombstoneTakesTheRowsRevisions",
			before: func(e *mergeEnv) {
				e.notes(edited("one\ntheirs\nthree", 1)) // v2
				e.deleteNote("a")                        // v3
				e.clock.Advance(31 * 24 * time.Hour)
				if n, err := e.s.PruneTombstones(context.Background(), e.clock.Now().Add(-30*24*time.Hour)); err != nil || n != 1 {
					e.t.Fatalf("PruneTombstones = %d, %v; want 1", n, err)
				}
				e.notes(edited("reborn", 0))        // v4: a new row under the old ID
				e.notes(edited("reborn\nagain", 4)) // v5
			},
			// Its base is the old row's state at 2, which must not be
			// found: the row has no past before 4.
			push: func(e *mergeEnv) persist.Applied { return e.notes(edited("one\nmine\nthree", 2)) },
			want: mergeWant{note: wantNote("one\nmine\nthree", 1, 2), fallbacks: 1},
		},
		{
			name:   "SameIDTwiceTheLastCopyIsMerged",
			before: func(e *mergeEnv) { e.notes(edited("ONE\ntwo\nthree", 1)) },
			push: func(e *mergeEnv) persist.Applied {
				return e.notes(edited("one\nlost\nthree", 1), edited("one\ntwo\nTHREE", 1))
			},
			want: mergeWant{note: wantNote("ONE\ntwo\nTHREE", 1, 2), merged: 1},
		},
		{
			name: "AnEarlierPushOfTheBatchIsTheirs",
			push: func(e *mergeEnv) persist.Applied {
				res := e.batch(
					persist.PushInput{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("ONE\ntwo\nthree", 1)}}}},
					persist.PushInput{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\ntwo\nTHREE", 1)}}}},
				)
				if res[0].Merged != 0 || res[0].Version != 2 {
					e.t.Fatalf("first push of the batch: %+v, want written as sent at 2", res[0])
				}
				return res[1]
			},
			want: mergeWant{note: wantNote("ONE\ntwo\nTHREE", 1, 2), merged: 1},
		},
		{
			name:   "ItemFieldsMerge",
			before: func(e *mergeEnv) { e.items(editedItem(1, func(it *board.TrackerItem) { it.Status = "doing" })) },
			push: func(e *mergeEnv) persist.Applied {
				return e.items(editedItem(1, func(it *board.TrackerItem) { it.Description = "d1\nD2"; it.Summary = "S" }))
			},
			want: mergeWant{item: &board.TrackerItem{Summary: "S", Description: "d1\nD2", Status: "doing"}, merged: 1},
		},
		{
			name: "ItemOverlapIsNotLogged",
			before: func(e *mergeEnv) {
				e.items(editedItem(1, func(it *board.TrackerItem) { it.Description = "d1\ntheirs" }))
			},
			push: func(e *mergeEnv) persist.Applied {
				return e.items(editedItem(1, func(it *board.TrackerItem) { it.Description = "d1\nmine" }))
			},
			want: mergeWant{item: &board.TrackerItem{Summary: "s", Description: "d1\nmine", Status: "todo"}, merged: 1,
				events: []persist.MergeEvent{{Kind: persist.MergeOverlap, Table: persist.MergeTableItem, ID: "i", Version: 2}}},
		},
		{
			name:   "ItemRevival",
			before: func(e *mergeEnv) { e.push(&board.Push{TrackerItems: board.ItemChanges{Deleted: []string{"i"}}}) },
			push: func(e *mergeEnv) persist.Applied {
				return e.items(editedItem(1, func(it *board.TrackerItem) { it.Status = "done" }))
			},
			want: mergeWant{item: &board.TrackerItem{Summary: "s", Description: "d1\nd2", Status: "done"}, merged: 1,
				events: []persist.MergeEvent{{Kind: persist.MergeRevived, Table: persist.MergeTableItem, ID: "i", Version: 2}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, clock := openWith(t, open, T0, "b1")
			e := &mergeEnv{t: t, s: s, clock: clock}
			e.push(&board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mergeNote()}}, TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{mergeItem()}}})
			if tc.before != nil {
				tc.before(e)
			}
			res := tc.push(e)
			checkMerge(t, s, clock, res, tc.want)
		})
	}
}

// checkMerge checks the push under test against want, and that its
// changes are exactly what a pull gives.
func checkMerge(t *testing.T, s persist.Store, clock *Clock, res persist.Applied, want mergeWant) {
	t.Helper()
	if res.Changes == nil || res.Replayed || res.Err != nil {
		t.Fatalf("applied %+v, want changes", res)
	}
	pulled := changes(t, s, "b1", res.Version-1)
	if diff := cmp.Diff(pulled, res.Changes); diff != "" {
		t.Fatalf("the applied change differs from a pull since version-1 (-pull +applied):\n%s", diff)
	}
	if want.note != nil {
		checkMergedNote(t, clock, res, want)
	}
	if want.item != nil {
		checkMergedItem(t, res, want)
	}
	if res.Merged != want.merged || res.Fallbacks != want.fallbacks {
		t.Fatalf("Merged=%d Fallbacks=%d, want %d and %d", res.Merged, res.Fallbacks, want.merged, want.fallbacks)
	}
	keys := checkMergeEvents(t, res, want)
	checkMergeLog(t, s, keys, want)
}

// checkMergedNote checks that the push changed note a alone, into
// want.note, at the push's version.
func checkMergedNote(t *testing.T, clock *Clock, res persist.Applied, want mergeWant) {
	t.Helper()
	if len(res.Changes.Notes) != 1 {
		t.Fatalf("changed notes %+v, want a alone", res.Changes.Notes)
	}
	n := res.Changes.Notes[0]
	if n.ID != "a" || n.Content != want.note.Content || n.Title != want.note.Title || n.X != want.note.X || n.Y != want.note.Y ||
		n.W != want.note.W || n.H != want.note.H || n.Color != want.note.Color || n.Version != res.Version || n.DeletedAt != nil || n.BaseVersion != 0 {
		t.Fatalf("note %+v, want content %q at (%v, %v) sized %v×%v, title %q, color %q, version %d, live",
			n, want.note.Content, want.note.X, want.note.Y, want.note.W, want.note.H, want.note.Title, want.note.Color, res.Version)
	}
	if want.updatedAt == "now" && n.UpdatedAt != clock.Now().Format(time.RFC3339Nano) {
		t.Fatalf("updatedAt %q, want the server's time %q (the push sent none)", n.UpdatedAt, clock.Now().Format(time.RFC3339Nano))
	}
	if want.updatedAt == "" && n.UpdatedAt != mergeNote().UpdatedAt {
		t.Fatalf("updatedAt %q, want the push's %q", n.UpdatedAt, mergeNote().UpdatedAt)
	}
}

// checkMergedItem checks that the push changed item i alone, into
// want.item, at the push's version.
func checkMergedItem(t *testing.T, res persist.Applied, want mergeWant) {
	t.Helper()
	if len(res.Changes.TrackerItems) != 1 {
		t.Fatalf("changed items %+v, want i alone", res.Changes.TrackerItems)
	}
	it := res.Changes.TrackerItems[0]
	if it.ID != "i" || it.Summary != want.item.Summary || it.Description != want.item.Description || it.Status != want.item.Status ||
		it.Key != "CB-1" || it.Version != res.Version || it.DeletedAt != nil || it.BaseVersion != 0 {
		t.Fatalf("item %+v, want summary %q, description %q, status %q at version %d, live",
			it, want.item.Summary, want.item.Description, want.item.Status, res.Version)
	}
}

// checkMergeEvents checks the push's merge events against want.events and
// returns the changelog keys they name.
func checkMergeEvents(t *testing.T, res persist.Applied, want mergeWant) map[string]bool {
	t.Helper()
	if len(res.Events) != len(want.events) {
		t.Fatalf("events %+v, want %+v", res.Events, want.events)
	}
	keys := map[string]bool{}
	for i, ev := range res.Events {
		w := want.events[i]
		w.LogKey = ev.LogKey
		if ev != w {
			t.Fatalf("event %d = %+v, want %+v", i, ev, w)
		}
		if (ev.Table == persist.MergeTableNote) != (ev.LogKey != "") {
			t.Fatalf("event %+v: a note's event names its changelog entry, an item's none", ev)
		}
		if ev.LogKey != "" {
			keys[ev.LogKey] = true
		}
	}
	return keys
}

// checkMergeLog checks that the changelog holds want.logged, each entry
// named by an event (keys) and a snapshot of note a holding the lost line.
func checkMergeLog(t *testing.T, s persist.Store, keys map[string]bool, want mergeWant) {
	t.Helper()
	ctx := context.Background()
	// Nothing in the cases logs but the push under test.
	all, err := s.ListLog(ctx, "b1", persist.LogQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want.logged) || len(keys) != len(want.logged) {
		t.Fatalf("changelog %+v (events name %d entries), want %v", all, len(keys), want.logged)
	}
	for i, action := range want.logged {
		le := all[len(all)-1-i] // newest first
		if le.Action != action || le.NoteID != "a" || !keys[le.Key] {
			t.Fatalf("entry %+v, want %s of a named by an event", le, action)
		}
		got, err := s.FindLogEntry(ctx, "b1", le.Key)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got.Content), want.lost) {
			t.Fatalf("entry %s holds %q, want the lost line %q", le.Key, got.Content, want.lost)
		}
		n, err := changelog.ParseNote(got.Content)
		if err != nil || n.ID != "a" || n.Version != want.lostVersion || n.DeletedAt != nil {
			t.Fatalf("entry %s is the note %+v (%v), want a snapshot of a at version %d", le.Key, n, err, want.lostVersion)
		}
		if want.lostSize != nil && (n.W != want.lostSize[0] || n.H != want.lostSize[1]) {
			t.Fatalf("entry %s is the note sized %v×%v, want %v×%v (the history must recover the size)", le.Key, n.W, n.H, want.lostSize[0], want.lostSize[1])
		}
	}
}

// testMergeReplay: a push repeated with its idempotency key is a replay,
// which merges nothing again and logs nothing again.
func testMergeReplay(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b1")
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mergeNote()}}}, "")
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\ntheirs\nthree", 1)}}}, "")
	p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\nmine\nthree", 1)}}}
	first, err := s.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: p, IdempotencyKey: "k"}})
	if err != nil || first[0].Err != nil || first[0].Merged != 1 || len(first[0].Events) != 1 {
		t.Fatalf("first push = %+v, %v; want one merge with an overlap", first, err)
	}
	again, err := s.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: p, IdempotencyKey: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := again[0]; !r.Replayed || r.Version != 3 || r.Changes != nil || r.Merged != 0 || r.Fallbacks != 0 || r.Events != nil {
		t.Fatalf("replay = %+v, want the version 3 replayed, nothing merged", r)
	}
	if v, _ := s.CurrentVersion(ctx, "b1"); v != 3 {
		t.Fatalf("version %d after the replay, want 3", v)
	}
	if es, err := s.ListLog(ctx, "b1", persist.LogQuery{Limit: 10}); err != nil || len(es) != 1 {
		t.Fatalf("changelog after the replay: %+v, %v; want the one update_note", es, err)
	}
	// Versions 1 and 2 were superseded once each.
	if n := forgetAllRevisions(t, s); n != 2 {
		t.Fatalf("%d revisions, want 2", n)
	}
}

// testMergeInvalidPushWritesNoRevision: a push that fails validation in a
// batch writes no revision (nor anything else), and the others of the
// batch keep theirs.
func testMergeInvalidPushWritesNoRevision(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b1")
	b := mergeNote()
	b.ID = "b"
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mergeNote(), b}}}, "")
	bad := edited("x", 1)
	res, err := s.ApplyPushes(ctx, "b1", []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\nmine\nthree", 1), note("", "no id")}, Deleted: []string{"b"}}}},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{bad}}}, IdempotencyKey: strings.Repeat("k", persist.MaxIdempotencyKeyLen+1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if board.ErrorCode(r.Err) != board.EINVALID || r.Changes != nil {
			t.Fatalf("push %d: %+v, want EINVALID", i, r)
		}
	}
	if n := forgetAllRevisions(t, s); n != 0 {
		t.Fatalf("%d revisions after refused pushes, want 0", n)
	}
	res, err = s.ApplyPushes(ctx, "b1", []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Deleted: []string{"b"}}}},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("", "no id")}}}},
	})
	if err != nil || res[0].Err != nil || board.ErrorCode(res[1].Err) != board.EINVALID {
		t.Fatalf("batch = %+v, %v; want the deletion applied and the second refused", res, err)
	}
	if n := forgetAllRevisions(t, s); n != 1 {
		t.Fatalf("%d revisions, want 1 (b as it was before its deletion)", n)
	}
}

// testMergeFailedPushWritesNothing: a push that fails inside its
// transaction (here: its merge must log a note and the store has no
// renderer) fails the whole call as an internal error and leaves no
// revision, no changelog entry and no version behind; a merge that
// overwrites nothing needs no renderer.
func testMergeFailedPushWritesNothing(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b1")
	setter, ok := s.(noteRendererSetter)
	if !ok {
		t.Skip("the store has no SetNoteRenderer: no way to make a push fail inside its transaction")
	}
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mergeNote()}}}, "")
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\ntheirs\nthree", 1)}}}, "")
	setter.SetNoteRenderer(nil)
	res, err := s.ApplyPushes(ctx, "b1", []persist.PushInput{
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("other", "x")}}}},
		{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\nmine\nthree", 1)}, Deleted: []string{"a"}}}, IdempotencyKey: "k"},
	})
	if err == nil || board.ErrorCode(err) != board.EINTERNAL || res != nil {
		t.Fatalf("ApplyPushes without a renderer = %+v, %v; want an internal error", res, err)
	}
	if v, _ := s.CurrentVersion(ctx, "b1"); v != 2 {
		t.Fatalf("version %d after the failed call, want 2", v)
	}
	if es, err := s.ListLog(ctx, "b1", persist.LogQuery{Limit: 10}); err != nil || len(es) != 0 {
		t.Fatalf("changelog after the failed call: %+v, %v; want empty", es, err)
	}
	// A merge that overwrites nothing logs nothing, and needs no renderer.
	r, err := s.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("one\ntheirs\nmine", 1)}}}}})
	if err != nil || r[0].Err != nil || r[0].Merged != 1 || r[0].Version != 3 || r[0].Changes.Notes[0].Content != "one\ntheirs\nmine" {
		t.Fatalf("clean merge without a renderer = %+v, %v; want merged at 3", r, err)
	}
	// The failed call's key was not kept, nor its revisions: 1 and 2 only.
	if n := forgetAllRevisions(t, s); n != 2 {
		t.Fatalf("%d revisions, want 2 (the failed call kept none)", n)
	}
	setter.SetNoteRenderer(changelog.RenderNote)
	if _, replayed, err := applyPush(ctx, s, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "k"); err != nil || replayed {
		t.Fatalf("the failed call's key: replayed=%v err=%v, want applied", replayed, err)
	}
}

// testPruneRevisionsKeepsNewest: revisions superseded before the cutoff
// go, except each row's newest keep; a row with a new revision loses the
// one that falls past keep at the next sweep.
func testPruneRevisionsKeepsNewest(t *testing.T, open Opener) {
	ctx := context.Background()
	const keep = persist.KeepRevisions
	s, clock := openWith(t, open, T0, "b1")
	// Note a: 150 versions at T0 (149 revisions), then 10 more 31 days
	// later. Note b: 5 versions at T0. Each push is one version.
	var in []persist.PushInput
	for i := range 150 {
		ns := []board.Note{edited(fmt.Sprint("a ", i), 0)}
		if i < 5 {
			b := edited(fmt.Sprint("b ", i), 0)
			b.ID = "b"
			ns = append(ns, b)
		}
		in = append(in, persist.PushInput{Push: &board.Push{Notes: board.NoteChanges{Upserted: ns}}})
	}
	for _, r := range mustBatch(t, s, in) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	clock.Advance(31 * 24 * time.Hour)
	for i := range 10 {
		mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited(fmt.Sprint("a late ", i), 0)}}}, "")
	}
	// a: revisions 1..149 at T0, 150..159 now; its newest 100 are 60..159.
	// b: revisions 1..4, all old, all among its newest.
	cutoff := clock.Now().Add(-30 * 24 * time.Hour)
	if n, err := s.PruneRevisions(ctx, cutoff, keep); err != nil || n != 59 {
		t.Fatalf("PruneRevisions = %d, %v; want 59 (a's revisions 1..59)", n, err)
	}
	if n, err := s.PruneRevisions(ctx, cutoff, keep); err != nil || n != 0 {
		t.Fatalf("second PruneRevisions = %d, %v; want 0", n, err)
	}
	// The oldest kept revision of a is still a base; the newest forgotten
	// one is not.
	e := &mergeEnv{t: t, s: s, clock: clock}
	if r := e.notes(edited("a late 9\nmore", 60)); r.Merged != 1 || r.Fallbacks != 0 {
		t.Fatalf("push on base 60: %+v, want merged", r)
	}
	// That push superseded a's version 160: a now has 101 revisions, and
	// the oldest (60, kept so far for the count) goes at the next sweep.
	if n, err := s.PruneRevisions(ctx, cutoff, keep); err != nil || n != 1 {
		t.Fatalf("PruneRevisions after one more revision = %d, %v; want 1", n, err)
	}
	if r := e.notes(edited("mine", 60)); r.Merged != 0 || r.Fallbacks != 1 {
		t.Fatalf("push on base 60 after the sweep: %+v, want a fallback", r)
	}
	if r := e.notes(edited("mine\nagain", 61)); r.Merged != 1 {
		t.Fatalf("push on base 61: %+v, want merged", r)
	}
	// b's old revisions and a's newer ones were never due.
	if r := e.notes(func() board.Note { b := edited("b", 1); b.ID = "b"; return b }()); r.Merged != 1 {
		t.Fatalf("push on b's base 1: %+v, want merged", r)
	}
	// a: 61..162 (the pushes above superseded 160, 161 and 162), b: 1..5.
	if n := forgetAllRevisions(t, s); n != 102+5 {
		t.Fatalf("%d revisions left, want %d", n, 102+5)
	}
}

// testPruneRevisionsCutoff: with keep 0, exactly the revisions superseded
// strictly before the cutoff go, on every board.
func testPruneRevisionsCutoff(t *testing.T, open Opener) {
	ctx := context.Background()
	s, clock := openWith(t, open, T0, "b1", "b2")
	for _, id := range []string{"b1", "b2"} {
		mustPush(t, s, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{mergeNote()}}}, "")
		mustPush(t, s, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edited("x", 0)}}}, "") // revision at T0
	}
	clock.Advance(time.Minute)
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"a"}}}, "") // revision at T0+1m
	if n, err := s.PruneRevisions(ctx, T0, 0); err != nil || n != 0 {
		t.Fatalf("PruneRevisions(T0) = %d, %v; want 0 (superseded at the cutoff stay)", n, err)
	}
	if n, err := s.PruneRevisions(ctx, T0.Add(time.Nanosecond), 0); err != nil || n != 2 {
		t.Fatalf("PruneRevisions(T0+1ns) = %d, %v; want 2, one per board", n, err)
	}
	if n := forgetAllRevisions(t, s); n != 1 {
		t.Fatalf("%d revisions left, want 1 (b1's a before its deletion)", n)
	}
	if _, err := s.PruneRevisions(ctx, T0, 0); err != nil {
		t.Fatalf("PruneRevisions with nothing to do: %v", err)
	}
}

func mustBatch(tb testing.TB, s persist.SyncStore, in []persist.PushInput) []persist.Applied {
	tb.Helper()
	res, err := s.ApplyPushes(context.Background(), "b1", in)
	if err != nil {
		tb.Fatalf("ApplyPushes: %v", err)
	}
	return res
}
