package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runChangelog: the log, its paging and filters, current.md and the
// point-in-time snapshots (persist.ChangelogStore).
func runChangelog(t *testing.T, open Opener) {
	t.Run("AppendLogKeysUniqueAndOrdered", func(t *testing.T) { testAppendLogKeysUniqueAndOrdered(t, open) })
	t.Run("ListLogFiltersAndPages", func(t *testing.T) { testListLogFiltersAndPages(t, open) })
	t.Run("FindLogEntry", func(t *testing.T) { testFindLogEntry(t, open) })
	t.Run("CurrentSnapshotFreshness", func(t *testing.T) { testCurrentSnapshotFreshness(t, open) })
	t.Run("SnapshotsPruneAndList", func(t *testing.T) { testSnapshotsPruneAndList(t, open) })
	t.Run("IdenticalSnapshotKeepsNoCopy", func(t *testing.T) { testIdenticalSnapshotKeepsNoCopy(t, open) })
	t.Run("BoardsToSnapshot", func(t *testing.T) { testBoardsToSnapshot(t, open) })
	t.Run("AppendLogUnclaimedBoard", func(t *testing.T) { testAppendLogUnclaimedBoard(t, open) })
	t.Run("AppendLogConcurrent", func(t *testing.T) { testAppendLogConcurrent(t, open) })
}

// testAppendLogKeysUniqueAndOrdered appends many entries while the clock
// stands still, then sets it back: keys must stay unique and increasing.
func testAppendLogKeysUniqueAndOrdered(t *testing.T, open Opener) {
	db, clock := openWith(t, open, clT0, "b1")
	var all []persist.LogEntry
	for range 3 {
		all = append(all, appendN(t, db, "b1", 200, func(int) string { return "n1" }, func(int) string { return "update_note" })...)
	}
	clock.Set(clT0.Add(-time.Hour)) // a clock set back must not reorder keys
	all = append(all, appendN(t, db, "b1", 10, func(int) string { return "n1" }, func(int) string { return "update_note" })...)
	for i := 1; i < len(all); i++ {
		if all[i-1].Key >= all[i].Key || all[i-1].Timestamp >= all[i].Timestamp {
			t.Fatalf("entry %d key %q not after %q", i, all[i].Key, all[i-1].Key)
		}
	}
	if got, want := all[0].Timestamp, "2026-03-01T09:30:00.123456000Z"; got != want {
		t.Fatalf("first timestamp %q, want the clock's %q", got, want)
	}
	if got, want := all[0].Key, "log/2026-03-01T09:30:00.123456000Z-n1"; got != want {
		t.Fatalf("first key %q, want %q", got, want)
	}
}

func testListLogFiltersAndPages(t *testing.T, open Opener) {
	db, _ := openWith(t, open, clT0, "b1", "b2")
	ctx := context.Background()
	actions := []string{"create_note", "update_note", "update_note", "delete_note", "rename_board"}
	in := appendN(t, db, "b1", 100, func(i int) string {
		if actions[i%5] == "rename_board" {
			return ""
		}
		return fmt.Sprintf("n%d", i%3)
	}, func(i int) string { return actions[i%5] })
	appendN(t, db, "b2", 5, func(int) string { return "n0" }, func(int) string { return "create_note" })

	want := func(keep func(e persist.LogEntry) bool) []persist.LogEntry {
		var out []persist.LogEntry
		for i := len(in) - 1; i >= 0; i-- {
			if keep(in[i]) {
				out = append(out, in[i])
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		q    persist.LogQuery
		keep func(e persist.LogEntry) bool
	}{
		{"All", persist.LogQuery{}, func(persist.LogEntry) bool { return true }},
		{"Note", persist.LogQuery{NoteID: "n1"}, func(e persist.LogEntry) bool { return e.NoteID == "n1" }},
		{"Action", persist.LogQuery{Action: "update_note"}, func(e persist.LogEntry) bool { return e.Action == "update_note" }},
		{"Rename", persist.LogQuery{Action: "rename_board"}, func(e persist.LogEntry) bool { return e.Action == "rename_board" }},
		{"NoteAndAction", persist.LogQuery{NoteID: "n2", Action: "delete_note"}, func(e persist.LogEntry) bool { return e.NoteID == "n2" && e.Action == "delete_note" }},
		{"UnknownNote", persist.LogQuery{NoteID: "nope"}, func(persist.LogEntry) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := want(tc.keep)
			for _, limit := range []int{1, 7, 500} {
				var got []persist.LogEntry
				q := tc.q
				q.Limit = limit
				for page := 0; ; page++ {
					if page > 200 {
						t.Fatal("paging does not end")
					}
					es, err := db.ListLog(ctx, "b1", q)
					if err != nil {
						t.Fatal(err)
					}
					if len(es) > limit {
						t.Fatalf("page of %d entries, limit %d", len(es), limit)
					}
					got = append(got, es...)
					if len(es) < limit {
						break
					}
					ts, _ := persist.ParseStamp(es[len(es)-1].Timestamp)
					q.Before = &ts
				}
				if !slices.EqualFunc(got, exp, sameEntry) {
					t.Fatalf("limit %d: got %d entries %v, want %d %v", limit, len(got), got, len(exp), exp)
				}
			}
		})
	}

	t.Run("BeforeIsStrict", func(t *testing.T) {
		ts, _ := persist.ParseStamp(in[50].Timestamp)
		es, err := db.ListLog(ctx, "b1", persist.LogQuery{Before: &ts, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 50 || !sameEntry(es[0], in[49]) {
			t.Fatalf("before entry 50: %d entries starting %v, want 50 starting %v", len(es), es[0], in[49])
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := db.ListLog(ctx, "nobody", persist.LogQuery{Limit: 5}); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("ListLog on unclaimed board: %v, want not_found", err)
		}
	})
}

func testFindLogEntry(t *testing.T, open Opener) {
	db, _ := openWith(t, open, clT0, "b1", "b2")
	ctx := context.Background()
	content := []byte("---\nid: 'n1'\n---\n\n" + strings.Repeat("x", 120000) + "\n")
	out, err := db.AppendLog(ctx, "b1", []persist.NewLogEntry{{NoteID: "n1", Action: "create_note", Content: content}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OK", func(t *testing.T) {
		e, err := db.FindLogEntry(ctx, "b1", out[0].Key)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Content) != string(content) || e.NoteID != "n1" || e.Action != "create_note" || e.Timestamp != out[0].Timestamp {
			t.Fatalf("entry %+v (content %d bytes) differs from what was stored", e.Key, len(e.Content))
		}
	})
	t.Run("ErrNotFoundOtherBoard", func(t *testing.T) {
		if _, err := db.FindLogEntry(ctx, "b2", out[0].Key); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("b1's key on b2: %v, want not_found", err)
		}
	})
	t.Run("LatestNoteEntry", func(t *testing.T) {
		more, err := db.AppendLog(ctx, "b1", []persist.NewLogEntry{{NoteID: "n1", Action: "update_note", Content: []byte("v2")}, {NoteID: "n2", Action: "create_note", Content: []byte("other")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		e, err := db.LatestNoteEntry(ctx, "b1", "n1")
		if err != nil || e.Key != more[0].Key || string(e.Content) != "v2" {
			t.Fatalf("LatestNoteEntry=%+v,%v; want %s with v2", e, err, more[0].Key)
		}
		if _, err := db.LatestNoteEntry(ctx, "b1", "n9"); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("LatestNoteEntry(n9): %v, want not_found", err)
		}
	})
}

func testCurrentSnapshotFreshness(t *testing.T, open Opener) {
	db, _ := openWith(t, open, clT0, "b1")
	ctx := context.Background()
	if md, fresh, err := db.CurrentSnapshot(ctx, "b1"); err != nil || md != nil || fresh {
		t.Fatalf("new board: %q %v %v, want none", md, fresh, err)
	}
	if _, err := db.AppendLog(ctx, "b1", nil, &persist.RenderedBoard{Markdown: []byte("v0"), Version: 0}); err != nil {
		t.Fatal(err)
	}
	check := func(wantMD string, wantFresh bool) {
		t.Helper()
		md, fresh, err := db.CurrentSnapshot(ctx, "b1")
		if err != nil || string(md) != wantMD || fresh != wantFresh {
			t.Fatalf("CurrentSnapshot=%q,%v,%v; want %q fresh=%v", md, fresh, err, wantMD, wantFresh)
		}
		if f, err := db.CurrentSnapshotFresh(ctx, "b1"); err != nil || f != wantFresh {
			t.Fatalf("CurrentSnapshotFresh=%v,%v; want %v", f, err, wantFresh)
		}
	}
	check("v0", true)
	if _, _, err := applyPush(ctx, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1"}}}}, ""); err != nil {
		t.Fatal(err)
	}
	check("v0", false)
	if _, err := db.AppendLog(ctx, "b1", nil, &persist.RenderedBoard{Markdown: []byte("v1"), Version: 1}); err != nil {
		t.Fatal(err)
	}
	check("v1", true)
	// A slower writer with an older rendering does not roll current.md back.
	if _, err := db.AppendLog(ctx, "b1", nil, &persist.RenderedBoard{Markdown: []byte("v0 again"), Version: 0}); err != nil {
		t.Fatal(err)
	}
	check("v1", true)
	// Phases change without moving the version; current.md is then stale.
	ph := &board.Phases{Phases: nil, CurrentPhaseID: ""}
	if _, err := db.SetPhases(ctx, "b1", ph); err != nil {
		t.Fatal(err)
	}
	check("v1", false)
	if _, err := db.AppendLog(ctx, "b1", nil, &persist.RenderedBoard{Markdown: []byte("v1 phases"), Version: 1, Phases: ph}); err != nil {
		t.Fatal(err)
	}
	check("v1 phases", true)
}

func testSnapshotsPruneAndList(t *testing.T, open Opener) {
	db, clock := openWith(t, open, clT0, "b1", "b2")
	ctx := context.Background()
	var made []persist.SnapshotInfo
	for i := range 6 {
		clock.Set(clT0.Add(time.Duration(i) * time.Hour))
		info, pruned, err := db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte(fmt.Sprintf("snap %d", i))}, 4)
		if err != nil {
			t.Fatal(err)
		}
		if want := max(0, min(1, i-3)); pruned != want {
			t.Fatalf("snapshot %d pruned %d, want %d", i, pruned, want)
		}
		made = append(made, info)
	}
	if got, want := made[2].Key, "snapshots/2026-03-01T11:30:00.123456000Z.md"; got != want {
		t.Fatalf("key %q, want %q", got, want)
	}
	list, err := db.ListSnapshots(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	want := []persist.SnapshotInfo{made[5], made[4], made[3], made[2]}
	if !slices.Equal(list, want) {
		t.Fatalf("ListSnapshots=%v, want the 4 newest first %v", list, want)
	}
	if md, err := db.FindSnapshot(ctx, "b1", made[5].Key); err != nil || string(md) != "snap 5" {
		t.Fatalf("FindSnapshot=%q,%v", md, err)
	}
	for _, tc := range []struct{ board, key string }{{"b1", made[0].Key}, {"b2", made[5].Key}, {"b1", "snapshots/x.md"}} {
		if _, err := db.FindSnapshot(ctx, tc.board, tc.key); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("FindSnapshot(%s, %s): %v, want not_found", tc.board, tc.key, err)
		}
	}
	if list, err := db.ListSnapshots(ctx, "b2"); err != nil || len(list) != 0 || list == nil {
		t.Fatalf("b2 snapshots %#v, %v; want an empty list", list, err)
	}
	if md, _, _ := db.CurrentSnapshot(ctx, "b1"); string(md) != "snap 5" {
		t.Fatalf("current.md %q after a snapshot, want the snapshot", md)
	}
}

func testBoardsToSnapshot(t *testing.T, open Opener) {
	db, _ := openWith(t, open, clT0, "quiet", "busy", "done")
	ctx := context.Background()
	push := func(id string) int64 {
		v, _, err := applyPush(ctx, db, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n"}}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	push("busy")
	v := push("done")
	if _, _, err := db.PutSnapshot(ctx, "done", persist.RenderedBoard{Markdown: []byte("x"), Version: v}, 0); err != nil {
		t.Fatal(err)
	}
	got, err := db.BoardsToSnapshot(ctx)
	if err != nil || !slices.Equal(got, []string{"busy"}) {
		t.Fatalf("BoardsToSnapshot=%v,%v; want [busy]", got, err)
	}
	push("done")
	if got, _ := db.BoardsToSnapshot(ctx); !slices.Equal(got, []string{"busy", "done"}) {
		t.Fatalf("BoardsToSnapshot=%v, want [busy done]", got)
	}
}

func testAppendLogUnclaimedBoard(t *testing.T, open Opener) {
	db, _ := openWith(t, open, clT0)
	if _, err := db.AppendLog(context.Background(), "ghost", []persist.NewLogEntry{{NoteID: "n", Action: "create_note"}}, nil); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("AppendLog on unclaimed board: %v, want not_found", err)
	}
	if _, _, err := db.PutSnapshot(context.Background(), "ghost", persist.RenderedBoard{}, 0); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("PutSnapshot on unclaimed board: %v, want not_found", err)
	}
}

// testAppendLogConcurrent appends from many goroutines at one instant of
// the clock (a store may merge them into shared transactions): every key
// is unique and the listing holds each entry once, in key order.
func testAppendLogConcurrent(t *testing.T, open Opener) {
	db, _ := openWith(t, open, clT0, "b1", "b2")
	var wg sync.WaitGroup
	keys := make([][]persist.LogEntry, 16)
	for g := range keys {
		wg.Go(func() {
			boardID := []string{"b1", "b2"}[g%2]
			for range 10 {
				out, err := db.AppendLog(context.Background(), boardID, []persist.NewLogEntry{{NoteID: fmt.Sprint("n", g), Action: "update_note"}, {NoteID: "x", Action: "create_note"}}, nil)
				if err != nil {
					t.Error(err)
					return
				}
				keys[g] = append(keys[g], out...)
			}
		})
	}
	wg.Wait()
	for _, boardID := range []string{"b1", "b2"} {
		var want []string
		for g := range keys {
			if []string{"b1", "b2"}[g%2] != boardID {
				continue
			}
			for _, e := range keys[g] {
				want = append(want, e.Key)
			}
		}
		slices.Sort(want)
		slices.Reverse(want)
		if len(slices.Compact(slices.Clone(want))) != 160 {
			t.Fatalf("%s: %d distinct keys, want 160", boardID, len(slices.Compact(slices.Clone(want))))
		}
		got, err := db.ListLog(context.Background(), boardID, persist.LogQuery{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		var gotKeys []string
		for _, e := range got {
			gotKeys = append(gotKeys, e.Key)
		}
		if !slices.Equal(gotKeys, want) {
			t.Fatalf("%s: listing differs from the appended keys", boardID)
		}
	}
}

// testIdenticalSnapshotKeepsNoCopy: a snapshot byte for byte the newest
// one is not kept again; the newest is returned, with Existing set. One
// that differs, or equals an older one only, is kept.
func testIdenticalSnapshotKeepsNoCopy(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := openWith(t, open, clT0, "b1")
	put := func(md string) persist.SnapshotInfo {
		t.Helper()
		clock.Advance(time.Second)
		info, _, err := db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte(md), Version: 1}, 10)
		if err != nil {
			t.Fatalf("PutSnapshot(%q): %v", md, err)
		}
		return info
	}
	a := put("board A")
	if a.Existing {
		t.Fatalf("first snapshot %+v has Existing set", a)
	}
	again := put("board A")
	if again.Key != a.Key || again.Timestamp != a.Timestamp || !again.Existing {
		t.Fatalf("identical snapshot = %+v, want the newest %+v with Existing", again, a)
	}
	b := put("board B")
	a2 := put("board A") // equal to an older one only: kept
	if b.Existing || a2.Existing || b.Key == a.Key || a2.Key == b.Key {
		t.Fatalf("differing snapshots %+v, %+v: want new keys", b, a2)
	}
	list, err := db.ListSnapshots(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("%d snapshots kept, want 3: %+v", len(list), list)
	}
	md, err := db.FindSnapshot(ctx, "b1", a.Key)
	if err != nil || string(md) != "board A" {
		t.Fatalf("FindSnapshot(%s) = %q, %v", a.Key, md, err)
	}
}
