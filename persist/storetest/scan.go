package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"corkboard/board"
	"corkboard/persist"
)

// The streamed pull (ScanChangesSince): the parts in the answer's order,
// the same answer as ChangesSince, a stop on fn's error, and one version's
// state while pushes commit in the middle of a scan.
func runScan(t *testing.T, open Opener) {
	t.Run("Order", func(t *testing.T) { testScanOrder(t, open) })
	t.Run("StopsOnError", func(t *testing.T) { testScanStopsOnError(t, open) })
	t.Run("OneVersionUnderConcurrentPushes", func(t *testing.T) { testScanOneVersion(t, open) })
	t.Run("Errors", func(t *testing.T) { testScanErrors(t, open) })
	t.Run("FullIsTheBoardState", func(t *testing.T) { testScanFullIsState(t, open) })
	t.Run("RawIsTheWireForm", func(t *testing.T) { testScanRawIsWireForm(t, open) })
}

// testScanRawIsWireForm: a scan gives each live row as the JSON stored,
// and that JSON is byte for byte what encoding the row gives, so that a
// pull answer that copies it says exactly what one that encodes it would
// (HTML-escaped characters, clients' own fields, sizes and merged edits
// included).
func testScanRawIsWireForm(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b")
	n := note("n1", "<b>a & b</b> \u2028")
	n.Extra = []board.Field{{Name: "votes", Value: json.RawMessage(`{"ana":2}`)}, {Name: "tag", Value: json.RawMessage(`"<x>"`)}}
	n.W, n.H = 240, 180
	it := item("i1", "ship it")
	it.Extra = []board.Field{{Name: "priority", Value: json.RawMessage(`"high"`)}}
	mustPush(t, db, "b", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{n, note("n2", "two")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{it}},
		Frames:       board.FrameChanges{Upserted: []board.Frame{frame("f1", "Ideas")}},
		Connectors:   board.ConnectorChanges{Upserted: []board.Connector{connector("c1", "n1", "n2")}},
	}, "")
	// A merged edit: the row stored is the merge's result.
	edit := note("n2", "two, edited")
	edit.BaseVersion = 1
	mustPush(t, db, "b", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{edit}}}, "")
	for _, since := range []int64{0, 1} {
		live := 0
		err := db.ScanChangesSince(ctx, "b", since, func(p *persist.ChangePart) error {
			if p.Kind == persist.PartHeader || p.ID != "" {
				return nil
			}
			live++
			if p.Raw == nil {
				return fmt.Errorf("live part of kind %d without its stored JSON", p.Kind)
			}
			raw := slices.Clone(p.Raw)
			if err := p.Decode(); err != nil {
				return err
			}
			var v any = p.Note
			switch p.Kind {
			case persist.PartItem:
				v = p.Item
			case persist.PartFrame:
				v = p.Frame
			case persist.PartConnector:
				v = p.Connector
			}
			enc, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if string(enc) != string(raw) {
				return fmt.Errorf("since %d: stored JSON\n%s\nis not the row's encoding\n%s", since, raw, enc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int64]int{0: 5, 1: 1}[since]; live != want {
			t.Fatalf("since %d: %d live rows, want %d", since, live, want)
		}
	}
}

// testScanFullIsState: a full scan gives what BoardState gives, the phases
// included, in the same order (snapshots are rendered from it).
func testScanFullIsState(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0, "b1", "b2")
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("c", "1"), note("a", "1"), note("b", "1")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("y", "1"), item("x", "1")}},
	}, "")
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"b"}}}, "")
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"p1","name":"Ideas"}`)}, CurrentPhaseID: "p1"}
	if _, err := db.SetPhases(ctx, "b1", ph); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b1", "b2"} {
		st, err := db.BoardState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got := board.State{Notes: []board.Note{}, TrackerItems: []board.TrackerItem{}}
		err = db.ScanChangesSince(ctx, id, 0, func(p *persist.ChangePart) error {
			if err := p.Decode(); err != nil {
				return err
			}
			switch p.Kind {
			case persist.PartHeader:
				got.Board, got.Phases = p.Header.Board, p.Header.Phases
			case persist.PartNote:
				got.Notes = append(got.Notes, *p.Note)
			case persist.PartItem:
				got.TrackerItems = append(got.TrackerItems, *p.Item)
			default:
				t.Fatalf("a full scan gave a part of kind %d", p.Kind)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, st) {
			t.Fatalf("board %s: full scan\n%+v\nBoardState\n%+v", id, got, *st)
		}
	}
}

// scanned is what a scan gave: its parts' kinds and a readable line per
// part.
type scanned struct {
	kinds []persist.PartKind
	lines []string
}

func scan(tb testing.TB, s persist.SyncStore, boardID string, since int64) scanned {
	tb.Helper()
	var out scanned
	err := s.ScanChangesSince(context.Background(), boardID, since, func(p *persist.ChangePart) error {
		if err := p.Decode(); err != nil {
			return err
		}
		out.kinds = append(out.kinds, p.Kind)
		switch p.Kind {
		case persist.PartHeader:
			out.lines = append(out.lines, fmt.Sprintf("header %s v%d sv%d reset=%v", p.Header.Board.ID, p.Header.Board.Version, p.Header.ServerVersion, p.Header.Reset))
		case persist.PartNote:
			out.lines = append(out.lines, fmt.Sprintf("note %s %q v%d", p.Note.ID, p.Note.Content, p.Note.Version))
		case persist.PartItem:
			out.lines = append(out.lines, fmt.Sprintf("item %s %q v%d", p.Item.ID, p.Item.Summary, p.Item.Version))
		case persist.PartDeletedNote:
			out.lines = append(out.lines, "deleted note "+p.ID)
		case persist.PartDeletedItem:
			out.lines = append(out.lines, "deleted item "+p.ID)
		default:
			tb.Fatalf("part of unknown kind %d", p.Kind)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("ScanChangesSince(%d): %v", since, err)
	}
	return out
}

func testScanOrder(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("c", "1"), note("a", "1"), note("b", "1"), note("d", "1")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("y", "1"), item("x", "1"), item("z", "1")}},
	}, "")
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("d", "2")}, Deleted: []string{"b"}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("z", "2")}, Deleted: []string{"y"}},
	}, "")
	mustPush(t, db, "b1", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("b2", "3")}, Deleted: []string{"a"}},
		TrackerItems: board.ItemChanges{Deleted: []string{"x"}},
	}, "")

	for _, tc := range []struct {
		name  string
		since int64
		want  []string
	}{
		{"Full", 0, []string{"header b1 v3 sv3 reset=false",
			`note b2 "3" v3`, `note c "1" v1`, `note d "2" v2`,
			`item z "2" v2`}},
		{"Since1", 1, []string{"header b1 v3 sv3 reset=false",
			`note d "2" v2`, `note b2 "3" v3`, "deleted note b", "deleted note a",
			`item z "2" v2`, "deleted item y", "deleted item x"}},
		{"SinceCurrent", 3, []string{"header b1 v3 sv3 reset=false"}},
		{"AheadResets", 9, []string{"header b1 v3 sv3 reset=true",
			`note b2 "3" v3`, `note c "1" v1`, `note d "2" v2`,
			`item z "2" v2`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scan(t, db, "b1", tc.since)
			if !slices.Equal(got.lines, tc.want) {
				t.Fatalf("scan since %d:\n got %q\nwant %q", tc.since, got.lines, tc.want)
			}
			if !slices.IsSorted(got.kinds) {
				t.Fatalf("kinds %v out of the answer's order", got.kinds)
			}
			// ChangesSince is the same answer, held whole.
			ch := changes(t, db, "b1", tc.since)
			var fromPull []string
			fromPull = append(fromPull, fmt.Sprintf("header %s v%d sv%d reset=%v", ch.Board.ID, ch.Board.Version, ch.ServerVersion, ch.Reset))
			for _, n := range ch.Notes {
				fromPull = append(fromPull, fmt.Sprintf("note %s %q v%d", n.ID, n.Content, n.Version))
			}
			for _, id := range ch.DeletedNoteIDs {
				fromPull = append(fromPull, "deleted note "+id)
			}
			for _, it := range ch.TrackerItems {
				fromPull = append(fromPull, fmt.Sprintf("item %s %q v%d", it.ID, it.Summary, it.Version))
			}
			for _, id := range ch.DeletedTrackerItemIDs {
				fromPull = append(fromPull, "deleted item "+id)
			}
			if !slices.Equal(fromPull, tc.want) {
				t.Fatalf("ChangesSince(%d):\n got %q\nwant %q", tc.since, fromPull, tc.want)
			}
		})
	}
}

func testScanStopsOnError(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	notes := make([]board.Note, 0, 1200)
	for i := range cap(notes) {
		notes = append(notes, note(fmt.Sprintf("n%04d", i), "x"))
	}
	pushNotes(t, db, "b1", notes)
	stop := errors.New("client went away")
	for _, at := range []int{1, 2, 700} {
		t.Run(fmt.Sprintf("AtPart%d", at), func(t *testing.T) {
			calls := 0
			err := db.ScanChangesSince(context.Background(), "b1", 0, func(*persist.ChangePart) error {
				calls++
				if calls == at {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) {
				t.Fatalf("err=%v, want fn's error", err)
			}
			if calls != at {
				t.Fatalf("fn called %d times, want the scan to stop at %d", calls, at)
			}
		})
	}
	// The store is still usable: the scan's transaction ended.
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("after", "y")}}}, "")
	if got := len(changes(t, db, "b1", 0).Notes); got != 1201 {
		t.Fatalf("after the stopped scans the board has %d notes, want 1201", got)
	}
}

// testScanOneVersion pauses a scan after its first note until a push that
// rewrites the first and the last note, deletes one in the middle and adds
// one has committed: the scan still gives version 1's state, all of it.
func testScanOneVersion(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	const n = 1200 // more than one page of any store's cursor
	notes := make([]board.Note, 0, n)
	for i := range n {
		notes = append(notes, note(fmt.Sprintf("n%04d", i), "v1"))
	}
	pushNotes(t, db, "b1", notes)

	for _, full := range []bool{true, false} {
		t.Run(fmt.Sprintf("Full%v", full), func(t *testing.T) { checkScanOneVersion(t, db, n, full) })
	}
}

// checkScanOneVersion scans the board of n notes, from 0 when full, else
// from the version before the last, with a push committing inside the
// scan, and checks that the scan gives the state it started at, whole.
func checkScanOneVersion(t *testing.T, db persist.Store, n int, full bool) {
	t.Helper()
	version := changes(t, db, "b1", 0).ServerVersion
	since := int64(0)
	if !full {
		since = version - 1
	}
	later := fmt.Sprintf("later than %d", version)
	sc := scanAcrossPush(t, db, since, n, later)
	if sc.header.ServerVersion != version || sc.header.Board.Version != version {
		t.Fatalf("header %+v, want version %d (the scan's start)", sc.header, version)
	}
	for _, nt := range sc.notes {
		if nt.Version > version || nt.Content == later {
			t.Fatalf("note %s %q at version %d is not version %d's state", nt.ID, nt.Content, nt.Version, version)
		}
	}
	// What version held, whole: every live note (the later push deleted
	// one and added one), or exactly the rows version wrote.
	want := changes(t, db, "b1", since)
	if want.ServerVersion != version+1 {
		t.Fatalf("the concurrent push did not commit: board at %d, want %d", want.ServerVersion, version+1)
	}
	if full && (len(sc.notes) != n || len(sc.deleted) != 0) {
		t.Fatalf("full scan gave %d notes and %d deletions, want the %d of version %d and none", len(sc.notes), len(sc.deleted), n, version)
	}
	if full {
		return
	}
	for _, nt := range sc.notes {
		if nt.Version != version {
			t.Fatalf("note %s at version %d, want %d", nt.ID, nt.Version, version)
		}
	}
	if len(sc.notes) == 0 {
		t.Fatal("scan since version-1 gave no notes")
	}
}

// scannedAcross is what scanAcrossPush gave.
type scannedAcross struct {
	header  persist.ChangesHeader
	notes   []board.Note
	deleted []string
}

// scanAcrossPush scans b1's changes since since and, after the first note,
// waits until a push has committed that rewrites the first and the last of
// the n notes with content later, deletes one in the middle and adds one.
func scanAcrossPush(t *testing.T, db persist.Store, since int64, n int, later string) scannedAcross {
	t.Helper()
	var sc scannedAcross
	pushed := make(chan error, 1)
	err := db.ScanChangesSince(context.Background(), "b1", since, func(p *persist.ChangePart) error {
		if err := p.Decode(); err != nil {
			return err
		}
		switch p.Kind {
		case persist.PartHeader:
			sc.header = p.Header
		case persist.PartDeletedNote:
			sc.deleted = append(sc.deleted, p.ID)
		case persist.PartNote:
			sc.notes = append(sc.notes, *p.Note)
			if len(sc.notes) == 1 {
				go func() {
					_, _, err := applyPush(context.Background(), db, "b1", &board.Push{Notes: board.NoteChanges{
						Upserted: []board.Note{note("n0000", later), note(fmt.Sprintf("n%04d", n-1), later), note("n9999", later)},
						Deleted:  []string{"n0600"},
					}}, "")
					pushed <- err
				}()
				// The push commits while the scan is open.
				if err := <-pushed; err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return sc
}

// pushNotes pushes notes in pushes of board.MaxUpsertedNotes at most.
func pushNotes(tb testing.TB, s persist.SyncStore, boardID string, notes []board.Note) {
	tb.Helper()
	for len(notes) > 0 {
		k := min(len(notes), board.MaxUpsertedNotes)
		mustPush(tb, s, boardID, &board.Push{Notes: board.NoteChanges{Upserted: notes[:k]}}, "")
		notes = notes[k:]
	}
}

func testScanErrors(t *testing.T, open Opener) {
	db, _ := openWith(t, open, T0, "b1")
	none := func(*persist.ChangePart) error { t.Fatal("fn called"); return nil }
	t.Run("ErrNegativeSince", func(t *testing.T) {
		if err := db.ScanChangesSince(context.Background(), "b1", -1, none); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("err=%v, want EINVALID", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if err := db.ScanChangesSince(context.Background(), "nobody", 0, none); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("err=%v, want ENOTFOUND", err)
		}
	})
	t.Run("EmptyBoard", func(t *testing.T) {
		if got := scan(t, db, "b1", 0).lines; !slices.Equal(got, []string{"header b1 v0 sv0 reset=false"}) {
			t.Fatalf("scan of an empty board: %q", got)
		}
	})
}
