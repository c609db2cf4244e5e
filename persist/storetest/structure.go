package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/board"
	"corkboard/persist"
)

// runStructure checks connectors and frames (docs/sync.md, "Connectors and
// frames"): rows like notes, in lists of their own, whose ends the store
// keeps live.
func runStructure(t *testing.T, open Opener) {
	t.Run("RoundTrip", func(t *testing.T) { testStructureRoundTrip(t, open) })
	t.Run("Tombstones", func(t *testing.T) { testStructureTombstones(t, open) })
	t.Run("DeletingAnEndDeletesItsConnectors", func(t *testing.T) { testCascade(t, open) })
	t.Run("UnknownEndIsRefused", func(t *testing.T) { testUnknownEnd(t, open) })
	t.Run("Merge", func(t *testing.T) { testStructureMerge(t, open) })
	t.Run("Idempotent", func(t *testing.T) { testStructureIdempotent(t, open) })
	t.Run("LimitsAtTheEdge", func(t *testing.T) { testStructureLimits(t, open) })
	t.Run("ScanOrder", func(t *testing.T) { testStructureScanOrder(t, open) })
	t.Run("ChangesMatchPull", func(t *testing.T) { testStructureChangesMatchPull(t, open) })
	t.Run("ConcurrentDeletesLeaveNoDanglingConnector", func(t *testing.T) { testConcurrentEnds(t, open) })
}

// testConcurrentEnds: pushes connecting notes race with pushes deleting
// them, on the same board; whatever the order, no connector is left with
// a deleted end, every push is either applied or refused naming the end,
// and the pull of the connectors equals the board's state.
func testConcurrentEnds(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b")
	const n = 12
	seed := &board.Push{}
	for i := range n {
		seed.Notes.Upserted = append(seed.Notes.Upserted, note(fmt.Sprintf("n%d", i), ""))
	}
	mustPush(t, s, "b", seed, "")
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			c := connector(fmt.Sprintf("c%d", i), fmt.Sprintf("n%d", i), fmt.Sprintf("n%d", (i+1)%n))
			_, _, err := applyPush(ctx, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{c}}}, "")
			if err != nil && board.ErrorCode(err) != board.EINVALID {
				errs <- err
			}
		})
		if i%2 == 0 {
			wg.Go(func() {
				if _, _, err := applyPush(ctx, s, "b", &board.Push{Notes: board.NoteChanges{Deleted: []string{fmt.Sprintf("n%d", i)}}}, ""); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("push: %v", err)
	}
	st, err := s.BoardState(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, nt := range st.Notes {
		live[nt.ID] = true
	}
	if len(st.Notes) != n/2 {
		t.Fatalf("%d live notes, want %d", len(st.Notes), n/2)
	}
	for _, c := range st.Connectors {
		if !live[c.From] || !live[c.To] {
			t.Fatalf("connector %s (%s → %s) dangles", c.ID, c.From, c.To)
		}
	}
	// Each odd note i joins note i+1, which is deleted: none survives.
	if len(st.Connectors) != 0 {
		t.Fatalf("live connectors %v, want none (every one touches an even note)", connectorIDs(st.Connectors))
	}
	if got := changes(t, s, "b", 0); len(got.Connectors) != 0 {
		t.Fatalf("pull holds connectors %v", connectorIDs(got.Connectors))
	}
}

// testStructureChangesMatchPull: what a push answers as its change (what
// the room fans out) is what a pull since the version before gives, for
// pushes with and without connectors and frames.
func testStructureChangesMatchPull(t *testing.T, open Opener) {
	s, _ := structured(t, open)
	for i, p := range []*board.Push{
		{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "z")}}},
		{Frames: board.FrameChanges{Upserted: []board.Frame{frame("f2", "")}}, Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c3", "n3", "f2")}}},
		{Notes: board.NoteChanges{Deleted: []string{"n3"}}},
		{Frames: board.FrameChanges{Upserted: []board.Frame{frame("f3", "")}, Deleted: []string{"f2", "f3"}}},
	} {
		res, err := s.ApplyPushes(context.Background(), "b", []persist.PushInput{{Push: p}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("push %d: %v %v", i, err, res[0].Err)
		}
		if diff := cmp.Diff(changes(t, s, "b", res[0].Version-1), res[0].Changes); diff != "" {
			t.Fatalf("push %d: the applied change differs from a pull (-pull +applied):\n%s", i, diff)
		}
	}
}

func frame(id, title string) board.Frame {
	return board.Frame{ID: id, Title: title, X: 0, Y: 0, W: 600, H: 400, Color: "blue", UpdatedAt: "2026-11-22T09:00:00Z"}
}

func connector(id, from, to string) board.Connector {
	return board.Connector{ID: id, From: from, To: to, Label: "", Style: board.StyleArrow, Dash: board.DashSolid, UpdatedAt: "2026-11-22T09:00:00Z"}
}

func connectorIDs(cs []board.Connector) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	slices.Sort(ids)
	return ids
}

// structured opens a store with board "b" holding notes n1, n2, n3,
// frame f1 and connectors c1 (n1→n2) and c2 (n2→f1), at version 1.
func structured(t *testing.T, open Opener) (persist.Store, *Clock) {
	t.Helper()
	s, c := openWith(t, open, T0, "b")
	mustPush(t, s, "b", &board.Push{
		Notes:      board.NoteChanges{Upserted: []board.Note{note("n1", "a"), note("n2", "b"), note("n3", "c")}},
		Frames:     board.FrameChanges{Upserted: []board.Frame{frame("f1", "Risks")}},
		Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c1", "n1", "n2"), connector("c2", "n2", "f1")}},
	}, "")
	return s, c
}

func testStructureRoundTrip(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b")
	c := connector("c1", "n1", "f1")
	c.Label, c.Style, c.Dash, c.Color = "depends on", board.StyleLine, board.DashDashed, "red"
	c.Extra = []board.Field{{Name: "weight", Value: []byte(`2`)}}
	f := frame("f1", "Risks")
	f.Locked = true
	f.Extra = []board.Field{{Name: "z", Value: []byte(`{"a":[1]}`)}}
	res, err := s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &board.Push{
		Notes:      board.NoteChanges{Upserted: []board.Note{note("n1", "a")}},
		Frames:     board.FrameChanges{Upserted: []board.Frame{f}},
		Connectors: board.ConnectorChanges{Upserted: []board.Connector{c}},
	}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("ApplyPushes: %v %v", err, res[0].Err)
	}
	if got := res[0].Changes; len(got.Frames) != 1 || len(got.Connectors) != 1 || got.Connectors[0].Version != 1 {
		t.Fatalf("Changes = %+v, want the frame and the connector at version 1", got)
	}
	for _, ch := range []*board.Changes{changes(t, s, "b", 0), res[0].Changes} {
		checkRoundTrip(t, ch)
	}
	st, err := s.BoardState(ctx, "b")
	if err != nil || len(st.Frames) != 1 || len(st.Connectors) != 1 || len(st.Notes) != 1 {
		t.Fatalf("BoardState = %+v, %v; want 1 note, 1 frame, 1 connector", st, err)
	}
	// A push of notes only changes no connector or frame: its pull has
	// none (the spec's shape).
	v := mustPush(t, s, "b", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n2", "b")}}}, "")
	ch := changes(t, s, "b", v-1)
	if len(ch.Connectors)+len(ch.Frames)+len(ch.DeletedConnectorIDs)+len(ch.DeletedFrameIDs) != 0 || len(ch.Notes) != 1 {
		t.Errorf("pull since %d = %+v, want one note and no structure", v-1, ch)
	}
}

// checkRoundTrip checks the frame and connector testStructureRoundTrip
// pushed, as ch gives them back.
func checkRoundTrip(t *testing.T, ch *board.Changes) {
	t.Helper()
	if len(ch.Connectors) != 1 || len(ch.Frames) != 1 {
		t.Fatalf("changes: %d connectors, %d frames, want 1 and 1", len(ch.Connectors), len(ch.Frames))
	}
	gc, gf := ch.Connectors[0], ch.Frames[0]
	if gc.From != "n1" || gc.To != "f1" || gc.Label != "depends on" || gc.Style != "line" || gc.Dash != "dashed" || gc.Color != "red" ||
		len(gc.Extra) != 1 || string(gc.Extra[0].Value) != "2" || gc.Version != 1 || gc.DeletedAt != nil {
		t.Errorf("connector = %+v", gc)
	}
	if gf.Title != "Risks" || !gf.Locked || gf.W != 600 || len(gf.Extra) != 1 || string(gf.Extra[0].Value) != `{"a":[1]}` || gf.Version != 1 {
		t.Errorf("frame = %+v", gf)
	}
}

func testStructureTombstones(t *testing.T, open Opener) {
	ctx := context.Background()
	s, clock := structured(t, open)
	v := mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Deleted: []string{"c1", "nope"}}}, "")
	if v != 2 {
		t.Fatalf("version = %d, want 2", v)
	}
	ch := changes(t, s, "b", 1)
	if !slices.Equal(ch.DeletedConnectorIDs, []string{"c1"}) || len(ch.Connectors) != 0 {
		t.Fatalf("pull since 1: deleted %v, live %d; want [c1], 0", ch.DeletedConnectorIDs, len(ch.Connectors))
	}
	// Deleting it again changes nothing.
	if v2 := mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Deleted: []string{"c1"}}}, ""); v2 != 2 {
		t.Fatalf("second delete: version %d, want 2", v2)
	}
	mustPush(t, s, "b", &board.Push{Frames: board.FrameChanges{Deleted: []string{"f1"}}}, "")
	ch = changes(t, s, "b", 2)
	// c2 ends on f1: it goes with it.
	if !slices.Equal(ch.DeletedFrameIDs, []string{"f1"}) || !slices.Equal(ch.DeletedConnectorIDs, []string{"c2"}) {
		t.Fatalf("pull since 2: deleted frames %v, connectors %v; want [f1], [c2]", ch.DeletedFrameIDs, ch.DeletedConnectorIDs)
	}
	if full := changes(t, s, "b", 0); len(full.Connectors)+len(full.Frames) != 0 || len(full.DeletedConnectorIDs) != 0 {
		t.Fatalf("full state holds structure: %+v", full)
	}
	clock.Advance(31 * 24 * time.Hour)
	n, err := s.PruneTombstones(ctx, clock.Now().Add(-30*24*time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("PruneTombstones = %d, %v; want the 3 tombstones", n, err)
	}
	if ch := changes(t, s, "b", 1); !ch.Reset {
		t.Errorf("pull from below the horizon: reset false")
	}
}

func testCascade(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := structured(t, open)
	ls := s.(persist.Limited)
	ls.SetLimits(board.Limits{ConnectorsPerBoard: 2})
	res, err := s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Deleted: []string{"n2"}}}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("ApplyPushes: %v %v", err, res[0].Err)
	}
	ch := res[0].Changes
	if !slices.Equal(ch.DeletedNoteIDs, []string{"n2"}) || !slices.Equal(sorted(ch.DeletedConnectorIDs), []string{"c1", "c2"}) {
		t.Fatalf("Changes: deleted notes %v, connectors %v; want [n2], [c1 c2]", ch.DeletedNoteIDs, ch.DeletedConnectorIDs)
	}
	if got := changes(t, s, "b", 1); !slices.Equal(sorted(got.DeletedConnectorIDs), []string{"c1", "c2"}) {
		t.Fatalf("pull since 1: deleted connectors %v", got.DeletedConnectorIDs)
	}
	// The count went down with them: two new connectors fit the limit of 2.
	mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c3", "n1", "n3"), connector("c4", "n3", "f1")}}}, "")
	// A connector upserted by the push that deletes its end ends deleted,
	// and one moved off the deleted end stays.
	moved := connector("c4", "n3", "n1")
	res, err = s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &board.Push{
		Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c5", "n1", "f1"), moved}},
		Frames:     board.FrameChanges{Deleted: []string{"f1"}},
		Notes:      board.NoteChanges{Upserted: []board.Note{note("n9", "")}},
	}}})
	// c3 (n1→n3) is untouched, and c5 goes with f1: the board keeps two
	// connectors, within the limit of 2.
	if err != nil || res[0].Err != nil {
		t.Fatalf("ApplyPushes: %v %v", err, res[0].Err)
	}
	ch = res[0].Changes
	if got := connectorIDs(ch.Connectors); !slices.Equal(got, []string{"c4"}) || !slices.Equal(ch.DeletedConnectorIDs, []string{"c5"}) {
		t.Fatalf("Changes: connectors %v deleted %v; want [c4], [c5]", got, ch.DeletedConnectorIDs)
	}
	if got := connectorIDs(changes(t, s, "b", 0).Connectors); !slices.Equal(got, []string{"c3", "c4"}) {
		t.Fatalf("live connectors %v, want [c3 c4]", got)
	}
}

func testUnknownEnd(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := structured(t, open)
	for _, tc := range []struct {
		name  string
		push  board.Push
		field string
	}{
		{"UnknownTo", board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c9", "n1", "ghost")}}}, "connectors.upserted[0].to"},
		{"UnknownFrom", board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c8", "n1", "n2"), connector("c9", "ghost", "n1")}}}, "connectors.upserted[1].from"},
		{"ItemIsNoEnd", board.Push{TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("i1", "x")}},
			Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c9", "n1", "i1")}}}, "connectors.upserted[0].to"},
		{"LastCopyCounts", board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c9", "n1", "n2"), connector("c9", "n1", "gone")}}}, "connectors.upserted[1].to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &tc.push, IdempotencyKey: "k-" + tc.name}})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Err == nil || board.ErrorCode(res[0].Err) != board.EINVALID || errField(res[0].Err) != tc.field {
				t.Fatalf("Err = %v, want EINVALID naming %s", res[0].Err, tc.field)
			}
			if v, _ := s.CurrentVersion(ctx, "b"); v != 1 {
				t.Fatalf("version = %d, want 1: nothing applied", v)
			}
		})
	}
	// Ends the push itself upserts (a note, a frame) are known.
	v := mustPush(t, s, "b", &board.Push{
		Notes:      board.NoteChanges{Upserted: []board.Note{note("n4", "")}},
		Frames:     board.FrameChanges{Upserted: []board.Frame{frame("f2", "")}},
		Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c9", "n4", "f2")}},
	}, "k-UnknownTo")
	if v != 2 {
		t.Fatalf("version = %d, want 2 (a refused push's key is not recorded)", v)
	}
}

func testStructureMerge(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := structured(t, open)
	theirs := connector("c1", "n1", "n2")
	theirs.Label = "blocks"
	mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{theirs}}}, "")
	mine := connector("c1", "n1", "n3")
	mine.BaseVersion = 1
	res, err := s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{mine}}}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("ApplyPushes: %v %v", err, res[0].Err)
	}
	if got := res[0].Changes.Connectors[0]; got.Label != "blocks" || got.To != "n3" || res[0].Merged != 1 {
		t.Fatalf("merged connector = %+v (merged %d), want label blocks to n3", got, res[0].Merged)
	}
	moved := frame("f1", "Risks")
	moved.X, moved.Y = 100, 200
	mustPush(t, s, "b", &board.Push{Frames: board.FrameChanges{Upserted: []board.Frame{moved}}}, "")
	resized := frame("f1", "Risks")
	resized.W, resized.H, resized.BaseVersion = 900, 700, 1
	mustPush(t, s, "b", &board.Push{Frames: board.FrameChanges{Upserted: []board.Frame{resized}}}, "")
	got := changes(t, s, "b", 0).Frames[0]
	if got.X != 100 || got.Y != 200 || got.W != 900 || got.H != 700 {
		t.Fatalf("merged frame = %+v, want the move and the resize", got)
	}
	// A connector deleted with its end cannot be brought back onto it:
	// the pushed end is gone, so the push is refused.
	mustPush(t, s, "b", &board.Push{Notes: board.NoteChanges{Deleted: []string{"n3"}}}, "")
	revive := connector("c1", "n1", "n3")
	revive.BaseVersion = 1
	revive.Label = "again"
	res, err = s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{revive}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err == nil {
		// The pushed end n3 is gone: refused, naming it.
		t.Fatalf("reviving a connector onto a deleted note was applied: %+v", res[0].Changes)
	}
	if errField(res[0].Err) != "connectors.upserted[0].to" {
		t.Fatalf("Err = %v, want connectors.upserted[0].to", res[0].Err)
	}
	// An edit of its label alone merges into its last live state, whose
	// end (theirs, n3) is gone: the push deletes it again rather than
	// leave it dangling.
	relabel := connector("c1", "n1", "n2")
	relabel.BaseVersion = 1
	relabel.Label = "again"
	res, err = s.ApplyPushes(ctx, "b", []persist.PushInput{{Push: &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{relabel}}}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("ApplyPushes: %v %v", err, res[0].Err)
	}
	if ch := res[0].Changes; len(ch.Connectors) != 0 || !slices.Equal(ch.DeletedConnectorIDs, []string{"c1"}) {
		t.Fatalf("Changes: connectors %v deleted %v; want none live, [c1] deleted", connectorIDs(ch.Connectors), ch.DeletedConnectorIDs)
	}
	if got := connectorIDs(changes(t, s, "b", 0).Connectors); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("live connectors %v, want [c2]", got)
	}
}

func testStructureIdempotent(t *testing.T, open Opener) {
	s, _ := structured(t, open)
	p := &board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{connector("c7", "n1", "n3")}}}
	v1 := mustPush(t, s, "b", p, "key-1")
	v2, replayed, err := applyPush(context.Background(), s, "b", p, "key-1")
	if err != nil || !replayed || v2 != v1 {
		t.Fatalf("replay = v%d replayed=%v err=%v, want v%d replayed", v2, replayed, err, v1)
	}
	if v, _ := s.CurrentVersion(context.Background(), "b"); v != v1 {
		t.Fatalf("version = %d after a replay, want %d", v, v1)
	}
}

func testStructureLimits(t *testing.T, open Opener) {
	ctx := context.Background()
	const limit = 3
	s := openLimited(t, open, board.Limits{ConnectorsPerBoard: limit, FramesPerBoard: limit})
	mustPush(t, s, "b", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", ""), note("z", "")}}}, "")
	var conns []board.Connector
	var frames []board.Frame
	for i := range limit + 1 {
		id := string(rune('0' + i))
		conns = append(conns, connector("c"+id, "a", "z"))
		frames = append(frames, frame("f"+id, ""))
	}
	mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: conns[:limit]}, Frames: board.FrameChanges{Upserted: frames[:limit]}}, "")
	_, _, err := applyPush(ctx, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: conns[limit:]}}, "")
	wantFull(t, err, "connectors", limit)
	_, _, err = applyPush(ctx, s, "b", &board.Push{Frames: board.FrameChanges{Upserted: frames[limit:]}}, "")
	wantFull(t, err, "frames", limit)
	// Rewriting the ones there adds none: accepted.
	mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: conns[:limit]}, Frames: board.FrameChanges{Upserted: frames[:limit]}}, "")
	// Deleting one makes room for the next.
	mustPush(t, s, "b", &board.Push{Connectors: board.ConnectorChanges{Upserted: conns[limit:], Deleted: []string{"c0"}}}, "")
	ch := changes(t, s, "b", 0)
	if len(ch.Connectors) != limit || len(ch.Frames) != limit {
		t.Fatalf("live: %d connectors, %d frames; want %d each", len(ch.Connectors), len(ch.Frames), limit)
	}
}

func testStructureScanOrder(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := structured(t, open)
	mustPush(t, s, "b", &board.Push{
		Notes:        board.NoteChanges{Upserted: []board.Note{note("n5", "")}, Deleted: []string{"n3"}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{item("i1", "")}},
		Frames:       board.FrameChanges{Upserted: []board.Frame{frame("f2", "")}},
		Connectors:   board.ConnectorChanges{Upserted: []board.Connector{connector("c3", "n5", "f2")}, Deleted: []string{"c1"}},
	}, "")
	mustPush(t, s, "b", &board.Push{Frames: board.FrameChanges{Deleted: []string{"f1"}}}, "")
	var kinds []persist.PartKind
	err := s.ScanChangesSince(ctx, "b", 1, func(p *persist.ChangePart) error {
		if len(kinds) == 0 || kinds[len(kinds)-1] != p.Kind {
			kinds = append(kinds, p.Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []persist.PartKind{persist.PartHeader, persist.PartNote, persist.PartDeletedNote, persist.PartItem,
		persist.PartFrame, persist.PartDeletedFrame, persist.PartConnector, persist.PartDeletedConnector}
	if !slices.Equal(kinds, want) {
		t.Fatalf("scan order %v, want %v", kinds, want)
	}
	ch := changes(t, s, "b", 1)
	if !slices.Equal(sorted(ch.DeletedConnectorIDs), []string{"c1", "c2"}) || !slices.Equal(ch.DeletedFrameIDs, []string{"f1"}) {
		t.Fatalf("deleted connectors %v frames %v; want [c1 c2] [f1]", ch.DeletedConnectorIDs, ch.DeletedFrameIDs)
	}
}
