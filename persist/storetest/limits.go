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

	"corkboard/board"
	"corkboard/persist"
)

// runLimits checks board.Limits as a store enforces them in the push's
// transaction: live notes and items per board, each at its edge.
func runLimits(t *testing.T, open Opener) {
	t.Run("NotesAtTheEdge", func(t *testing.T) { testRowLimitEdge(t, open, "notes") })
	t.Run("ItemsAtTheEdge", func(t *testing.T) { testRowLimitEdge(t, open, "trackerItems") })
	t.Run("TombstonesDoNotCount", func(t *testing.T) { testTombstonesDoNotCount(t, open) })
	t.Run("RefusedPushInBatch", func(t *testing.T) { testRefusedPushInBatch(t, open) })
	t.Run("OverALoweredLimit", func(t *testing.T) { testOverLoweredLimit(t, open) })
	t.Run("ConcurrentPushesAtTheEdge", func(t *testing.T) { testConcurrentPushesAtLimit(t, open) })
	t.Run("BoardsPerUser", func(t *testing.T) { testBoardsPerUser(t, open) })
	t.Run("ChangelogBytes", func(t *testing.T) { testChangelogBytes(t, open) })
}

// openLimited opens a store with limits l and claims board "b".
func openLimited(t *testing.T, open Opener, l board.Limits) persist.Store {
	t.Helper()
	s, _ := openWith(t, open, T0, "b")
	ls, ok := s.(persist.Limited)
	if !ok {
		t.Fatalf("%T does not implement persist.Limited", s)
	}
	ls.SetLimits(l)
	return s
}

// rowsPush upserts n new rows of table ("notes" or "trackerItems") named
// prefix0…
func rowsPush(table, prefix string, n int) *board.Push {
	p := &board.Push{}
	for i := range n {
		id := fmt.Sprintf("%s%d", prefix, i)
		if table == "notes" {
			p.Notes.Upserted = append(p.Notes.Upserted, note(id, "x"))
		} else {
			p.TrackerItems.Upserted = append(p.TrackerItems.Upserted, item(id, "x"))
		}
	}
	return p
}

// wantFull checks that err is the limit error of table at limit.
func wantFull(t *testing.T, err error, table string, limit int) {
	t.Helper()
	var e *board.Error
	if !errors.As(err, &e) || e.Code != board.ETOOLARGE || e.Field != table || e.Limit != int64(limit) {
		t.Fatalf("err = %v, want ETOOLARGE on %q with limit %d", err, table, limit)
	}
}

func liveRows(t *testing.T, s persist.SyncStore, table string) int {
	t.Helper()
	ch := changes(t, s, "b", 0)
	if table == "notes" {
		return len(ch.Notes)
	}
	return len(ch.TrackerItems)
}

func testRowLimitEdge(t *testing.T, open Opener, table string) {
	ctx := context.Background()
	const limit = 5
	l := board.Limits{NotesPerBoard: limit, ItemsPerBoard: limit}
	t.Run("OnePushOfNPasses", func(t *testing.T) {
		s := openLimited(t, open, l)
		if v := mustPush(t, s, "b", rowsPush(table, "r", limit), ""); v != 1 {
			t.Fatalf("version = %d, want 1", v)
		}
	})
	t.Run("OnePushOfNPlus1Fails", func(t *testing.T) {
		s := openLimited(t, open, l)
		_, _, err := applyPush(ctx, s, "b", rowsPush(table, "r", limit+1), "k1")
		wantFull(t, err, table, limit)
		if v, err := s.CurrentVersion(ctx, "b"); err != nil || v != 0 {
			t.Fatalf("CurrentVersion = %d, %v; want 0 (nothing applied)", v, err)
		}
		// The key was not recorded: the same key applies once there is room.
		s.(persist.Limited).SetLimits(board.Limits{NotesPerBoard: limit + 1, ItemsPerBoard: limit + 1})
		if v, replayed, err := applyPush(ctx, s, "b", rowsPush(table, "r", limit+1), "k1"); err != nil || replayed || v != 1 {
			t.Fatalf("retry = %d, %v, %v; want 1, false, nil", v, replayed, err)
		}
	})
	t.Run("NthThenNPlus1th", func(t *testing.T) {
		s := openLimited(t, open, l)
		mustPush(t, s, "b", rowsPush(table, "a", limit-1), "")
		mustPush(t, s, "b", rowsPush(table, "b", 1), "") // the Nth
		_, _, err := applyPush(ctx, s, "b", rowsPush(table, "c", 1), "")
		wantFull(t, err, table, limit)
		if got := liveRows(t, s, table); got != limit {
			t.Fatalf("live rows = %d, want %d", got, limit)
		}
		// Editing rows that exist adds none: it passes at the limit.
		if v := mustPush(t, s, "b", rowsPush(table, "a", limit-1), ""); v != 3 {
			t.Fatalf("version after an edit at the limit = %d, want 3", v)
		}
	})
}

func testTombstonesDoNotCount(t *testing.T, open Opener) {
	ctx := context.Background()
	s := openLimited(t, open, board.Limits{NotesPerBoard: 2, ItemsPerBoard: 2})
	mustPush(t, s, "b", rowsPush("notes", "n", 2), "")
	// One push deleting one note and adding another keeps two: it passes.
	p := rowsPush("notes", "m", 1)
	p.Notes.Deleted = []string{"n0"}
	mustPush(t, s, "b", p, "")
	// A note upserted and deleted in one push ends deleted: it adds none.
	p = rowsPush("notes", "gone", 1)
	p.Notes.Deleted = []string{"gone0"}
	mustPush(t, s, "b", p, "")
	// Bringing a deleted note back adds one: over the limit.
	_, _, err := applyPush(ctx, s, "b", rowsPush("notes", "n", 1), "")
	wantFull(t, err, "notes", 2)
	// After a deletion it fits again.
	mustPush(t, s, "b", &board.Push{Notes: board.NoteChanges{Deleted: []string{"m0"}}}, "")
	mustPush(t, s, "b", rowsPush("notes", "n", 1), "")
	if got := liveRows(t, s, "notes"); got != 2 {
		t.Fatalf("live notes = %d, want 2", got)
	}
}

func testRefusedPushInBatch(t *testing.T, open Opener) {
	ctx := context.Background()
	s := openLimited(t, open, board.Limits{NotesPerBoard: 3, ItemsPerBoard: 3})
	res, err := s.ApplyPushes(ctx, "b", []persist.PushInput{
		{Push: rowsPush("notes", "a", 2)},
		{Push: rowsPush("notes", "b", 2), IdempotencyKey: "over"},
		{Push: rowsPush("trackerItems", "i", 3)},
	})
	if err != nil {
		t.Fatalf("ApplyPushes: %v", err)
	}
	if res[0].Err != nil || res[0].Version != 1 {
		t.Fatalf("push 0 = %+v, want version 1", res[0])
	}
	wantFull(t, res[1].Err, "notes", 3)
	if res[1].Changes != nil {
		t.Fatalf("refused push has changes %+v", res[1].Changes)
	}
	if res[2].Err != nil || res[2].Version != 2 {
		t.Fatalf("push 2 = %+v, want version 2", res[2])
	}
	ch := changes(t, s, "b", 0)
	if got, want := noteIDs(ch.Notes), []string{"a0", "a1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("notes = %v, want %v", got, want)
	}
}

func testOverLoweredLimit(t *testing.T, open Opener) {
	ctx := context.Background()
	s := openLimited(t, open, board.Limits{NotesPerBoard: 4})
	mustPush(t, s, "b", rowsPush("notes", "n", 4), "")
	s.(persist.Limited).SetLimits(board.Limits{NotesPerBoard: 2})
	// Over the new limit, edits and deletions still pass; additions not.
	mustPush(t, s, "b", rowsPush("notes", "n", 4), "")
	mustPush(t, s, "b", &board.Push{Notes: board.NoteChanges{Deleted: []string{"n3"}}}, "")
	_, _, err := applyPush(ctx, s, "b", rowsPush("notes", "new", 1), "")
	wantFull(t, err, "notes", 2)
}

// testConcurrentPushesAtLimit: with room for one more note, of pushes
// racing to add one each exactly one passes.
func testConcurrentPushesAtLimit(t *testing.T, open Opener) {
	ctx := context.Background()
	const limit, racers = 10, 8
	s := openLimited(t, open, board.Limits{NotesPerBoard: limit})
	mustPush(t, s, "b", rowsPush("notes", "n", limit-1), "")
	var wg sync.WaitGroup
	errs := make([]error, racers)
	start := make(chan struct{})
	for r := range racers {
		wg.Go(func() {
			<-start
			_, _, errs[r] = applyPush(ctx, s, "b", rowsPush("notes", fmt.Sprintf("racer%d-", r), 1), "")
		})
	}
	close(start)
	wg.Wait()
	passed := 0
	for _, err := range errs {
		switch board.ErrorCode(err) {
		case "":
			passed++
		case board.ETOOLARGE:
		default:
			t.Fatalf("push failed: %v", err)
		}
	}
	if passed != 1 {
		t.Fatalf("%d of %d racing pushes passed, want 1", passed, racers)
	}
	if got := liveRows(t, s, "notes"); got != limit {
		t.Fatalf("live notes = %d, want %d", got, limit)
	}
}

// testBoardsPerUser: a person may own BoardsPerUser boards; the claim of
// one more is refused (ETOOLARGE naming "boards" and the limit) and
// leaves it unclaimed; invitations do not count; of claims racing for the
// last place exactly one passes.
func testBoardsPerUser(t *testing.T, open Opener) {
	ctx := context.Background()
	const limit = 3
	s, _ := openWith(t, open, T0)
	s.(persist.Limited).SetLimits(board.Limits{BoardsPerUser: limit})
	if _, err := s.ClaimBoard(ctx, "other", "else@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddInvite(ctx, "other", Owner); err != nil {
		t.Fatal(err)
	}
	for i := range limit - 1 {
		if _, err := s.ClaimBoard(ctx, fmt.Sprintf("b%d", i), Owner); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	start := make(chan struct{})
	for r := range errs {
		wg.Go(func() {
			<-start
			_, errs[r] = s.ClaimBoard(ctx, fmt.Sprintf("race%d", r), Owner)
		})
	}
	close(start)
	wg.Wait()
	passed := 0
	for _, err := range errs {
		if err == nil {
			passed++
		} else {
			wantFull(t, err, "boards", limit)
		}
	}
	if passed != 1 {
		t.Fatalf("%d racing claims passed for the last place, want 1", passed)
	}
	_, err := s.ClaimBoard(ctx, "one-more", Owner)
	wantFull(t, err, "boards", limit)
	if _, err := s.FindBoard(ctx, "one-more"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindBoard of the refused claim: %v, want not found", err)
	}
	list, err := s.ListBoardsFor(ctx, Owner)
	if err != nil || len(list) != limit+1 {
		t.Fatalf("ListBoardsFor = %d boards, %v; want %d owned and 1 invited", len(list), err, limit)
	}
}

// testChangelogBytes: a changelog of exactly ChangelogBytesPerBoard
// bytes of content keeps every entry; one byte more prunes the oldest,
// never a note's newest entry nor the newest rename.
func testChangelogBytes(t *testing.T, open Opener) {
	ctx := context.Background()
	s, clock := openWith(t, open, clT0, "b")
	s.(persist.Limited).SetLimits(board.Limits{ChangelogBytesPerBoard: 100})
	add := func(noteID, action, content string) persist.LogEntry {
		t.Helper()
		clock.Advance(time.Millisecond)
		out, err := s.AppendLog(ctx, "b", []persist.NewLogEntry{{NoteID: noteID, Action: action, Content: []byte(content)}}, nil)
		if err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		return out[0]
	}
	keys := func() []string {
		t.Helper()
		list, err := s.ListLog(ctx, "b", persist.LogQuery{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(list))
		for i, e := range list {
			out[len(list)-1-i] = e.Key // oldest first
		}
		return out
	}
	ten := "0123456789"
	only := add("lonely", "create_note", ten) // this note's only entry: kept
	rename := add("", "rename_board", ten)    // the newest rename: kept
	var n1 []string
	for range 8 {
		n1 = append(n1, add("n1", "update_note", ten).Key)
	}
	// 100 bytes: at the limit, nothing is pruned.
	if got := len(keys()); got != 10 {
		t.Fatalf("%d entries at the limit, want 10", got)
	}
	// One byte more: the oldest entry that may go (n1's first) goes.
	add("n2", "create_note", "x")
	got := keys()
	want := append([]string{only.Key, rename.Key}, n1[1:]...)
	if len(got) != 10 || fmt.Sprint(got[:9]) != fmt.Sprint(want) {
		t.Fatalf("entries after passing the limit:\n%v\nwant\n%v + n2's", got, want)
	}
	if _, err := s.FindLogEntry(ctx, "b", n1[0]); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("pruned entry still found: %v", err)
	}
	if e, err := s.LatestNoteEntry(ctx, "b", "n1"); err != nil || e.Key != n1[7] {
		t.Fatalf("LatestNoteEntry(n1) = %v, %v; want %s", e, err, n1[7])
	}
	list, err := s.ListLog(ctx, "b", persist.LogQuery{NoteID: "n1", Limit: 500})
	if err != nil || len(list) != 7 {
		t.Fatalf("n1's entries after pruning: %d, %v; want 7 (the note index pruned too)", len(list), err)
	}
	// A large entry prunes as many old ones as it takes, still keeping
	// each note's newest.
	add("n3", "create_note", strings.Repeat("y", 95))
	got = keys()
	for _, k := range []string{only.Key, rename.Key, n1[7]} {
		if !slices.Contains(got, k) {
			t.Fatalf("newest entry %s pruned: %v", k, got)
		}
	}
	if slices.Contains(got, n1[6]) {
		t.Fatalf("n1's older entries kept past the limit: %v", got)
	}
}
