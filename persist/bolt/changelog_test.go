package bolt_test

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
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
)

var clT0 = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)

// openChangelogDB opens a store in a temp folder whose clock stands still at
// clT0 until the test moves it, with the given boards claimed.
func openChangelogDB(tb testing.TB, boards ...string) (*bolt.DB, *persisttest.Clock, string) {
	tb.Helper()
	return persisttest.Open(tb, clT0, boards...)
}

// sameEntry compares entries as listed (without content).
func sameEntry(a, b persist.LogEntry) bool {
	return a.Key == b.Key && a.NoteID == b.NoteID && a.Action == b.Action && a.Timestamp == b.Timestamp
}

func appendN(tb testing.TB, db *bolt.DB, boardID string, n int, noteID func(i int) string, action func(i int) string) []persist.LogEntry {
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

func TestStampShape(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{clT0, "2026-03-01T09:30:00.123456000Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000000000Z"},
		{time.Date(2026, 1, 2, 4, 4, 5, 7, time.FixedZone("CET", 3600)), "2026-01-02T03:04:05.000000007Z"},
	} {
		if got := persist.Stamp(tc.in); got != tc.want {
			t.Errorf("Stamp(%v)=%q, want %q", tc.in, got, tc.want)
		}
		if got, ok := persist.ParseStamp(tc.want); !ok || !got.Equal(tc.in) {
			t.Errorf("ParseStamp(%q)=%v,%v, want %v", tc.want, got, ok, tc.in)
		}
	}
	for _, bad := range []string{"", "2026-03-01T09:30:00Z", "2026-03-01T09:30:00.123Z", "2026-13-01T09:30:00.000000000Z", "2026-03-01T09:30:00.000000000+00:00"} {
		if _, ok := persist.ParseStamp(bad); ok {
			t.Errorf("ParseStamp(%q) ok, want refused", bad)
		}
	}
}

// TestCanonicalKeys: a key's timestamp of any precision names the entry
// or snapshot recorded at that instant, in the form the store writes.
func TestCanonicalKeys(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"log/2026-03-01T09:30:00.123456789Z-n1", "log/2026-03-01T09:30:00.123456789Z-n1"},
		{"log/2026-03-01T09:30:00.123Z-n1", "log/2026-03-01T09:30:00.123000000Z-n1"},
		{"log/2026-03-01T09:30:00Z-a-b", "log/2026-03-01T09:30:00.000000000Z-a-b"},
		{"log/2026-03-01T09:30:00.5+00:00-n1", "log/2026-03-01T09:30:00.500000000Z-n1"},
	} {
		if got, ok := persist.CanonicalLogKey(tc.in); !ok || got != tc.want {
			t.Errorf("CanonicalLogKey(%q)=%q,%v, want %q", tc.in, got, ok, tc.want)
		}
	}
	if got, ok := persist.CanonicalSnapshotKey("snapshots/2026-03-02T00:00:00Z.md"); !ok || got != "snapshots/2026-03-02T00:00:00.000000000Z.md" {
		t.Errorf("CanonicalSnapshotKey=%q,%v", got, ok)
	}
}

func TestLogKeyID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"n1", "n1"},
		{"3f2b9c1e-7a4d-4c1b-9e1f-2d6a8b0c4e5f", "3f2b9c1e-7a4d-4c1b-9e1f-2d6a8b0c4e5f"},
		{"note.v2~x_y", "note.v2~x_y"},
		{"", "board"},
		{"a/b", "a_b"},
		{"../../etc", "______etc"},
		{"a..b", "a__b"},
		{"note 7", "note_7"},
		{"заметка", "_______"},
		{"a%2Fb", "a_2Fb"},
		{strings.Repeat("x", 128), strings.Repeat("x", 128)},
		{strings.Repeat("é", 128), strings.Repeat("_", 128)},
	} {
		got := persist.LogKeyID(tc.in)
		if got != tc.want {
			t.Errorf("LogKeyID(%q)=%q, want %q", tc.in, got, tc.want)
		}
		if key := "log/2026-03-01T09:30:00.123456000Z-" + got; !persist.ValidLogKey(key) {
			t.Errorf("ValidLogKey(%q)=false for a key LogKeyID made", key)
		}
	}
}

func TestValidKeys(t *testing.T) {
	const ts = "2026-03-01T09:30:00.123456000Z"
	for _, tc := range []struct {
		key       string
		log, snap bool
	}{
		{"log/" + ts + "-n1", true, false},
		{"log/" + ts + "-board", true, false},
		{"log/" + ts + "-a-b-c", true, false},
		{"snapshots/" + ts + ".md", false, true},
		{"log/" + ts + "-", false, false},
		{"log/" + ts, false, false},
		{"log/" + ts + "-a/b", false, false},
		{"log/" + ts + "-..", false, false},
		{"log/" + ts + "-a..b", false, false},
		{"log/../" + ts + "-n1", false, false},
		{"b2/log/" + ts + "-n1", false, false},
		{"log/2026-03-01T09:30:00Z-n1", true, false},
		{"log/2026-03-01T09:30:00.123Z-n1", true, false},
		{"log/2026-03-01T09:30:00.123456+00:00-n1", true, false},
		{"snapshots/2026-03-01T09:30:00.1Z.md", false, true},
		{"log/2026-03-01T09:30:00.Z-n1", false, false},
		{"log/2026-03-01T09:30:00.1234567890Z-n1", false, false},
		{"log/2026-03-01T09:30:00+01:00-n1", false, false},
		{"log/2026-03-01T09:30:00-n1", false, false},
		{"log/2026-03-01T9:30:00Z-n1", false, false},
		{"log/2026-03-01 09:30:00Z-n1", false, false},
		{"log/2026-02-30T09:30:00Z-n1", false, false},
		{"log/2026-03-01T09:30:00Z", false, false},
		{"log/2026-03-01T09:30:00Z-", false, false},
		{"snapshots/2026-03-01T09:30:00Z.mdx", false, false},
		{"log/2026-03-01T09:30:00.123456000Z-" + strings.Repeat("x", 129), false, false},
		{"log/" + ts + "-n%2F1", false, false},
		{"snapshots/" + ts, false, false},
		{"snapshots/../" + ts + ".md", false, false},
		{"current.md", false, false},
		{"", false, false},
		{"garbage", false, false},
	} {
		if got := persist.ValidLogKey(tc.key); got != tc.log {
			t.Errorf("ValidLogKey(%q)=%v, want %v", tc.key, got, tc.log)
		}
		if got := persist.ValidSnapshotKey(tc.key); got != tc.snap {
			t.Errorf("ValidSnapshotKey(%q)=%v, want %v", tc.key, got, tc.snap)
		}
	}
}

// TestAppendLogKeysUniqueAndOrdered appends many entries while the clock
// stands still, then sets it back: keys must stay unique and increasing.
func TestAppendLogKeysUniqueAndOrdered(t *testing.T) {
	db, clock, _ := openChangelogDB(t, "b1")
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

func TestListLogFiltersAndPages(t *testing.T) {
	db, _, _ := openChangelogDB(t, "b1", "b2")
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

func TestFindLogEntry(t *testing.T) {
	db, _, _ := openChangelogDB(t, "b1", "b2")
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

func TestCurrentSnapshotFreshness(t *testing.T) {
	db, _, _ := openChangelogDB(t, "b1")
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
	if _, _, err := db.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1"}}}}, ""); err != nil {
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

func TestSnapshotsPruneAndList(t *testing.T) {
	db, clock, _ := openChangelogDB(t, "b1", "b2")
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

func TestBoardsToSnapshot(t *testing.T) {
	db, _, _ := openChangelogDB(t, "quiet", "busy", "done")
	ctx := context.Background()
	push := func(id string) int64 {
		v, _, err := db.ApplyPush(ctx, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n"}}}}, "")
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

func TestChangelogSurvivesReopen(t *testing.T) {
	db, _, dir := openChangelogDB(t, "b1")
	ctx := context.Background()
	in := appendN(t, db, "b1", 3, func(int) string { return "n1" }, func(int) string { return "update_note" })
	snap, _, err := db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte("snap")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := bolt.Open(dir)
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

func TestAppendLogUnclaimedBoard(t *testing.T) {
	db, _, _ := openChangelogDB(t)
	if _, err := db.AppendLog(context.Background(), "ghost", []persist.NewLogEntry{{NoteID: "n", Action: "create_note"}}, nil); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("AppendLog on unclaimed board: %v, want not_found", err)
	}
	if _, _, err := db.PutSnapshot(context.Background(), "ghost", persist.RenderedBoard{}, 0); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("PutSnapshot on unclaimed board: %v, want not_found", err)
	}
}

// TestAppendLogConcurrent appends from many goroutines at one instant of
// the clock (bbolt's Batch merges them into shared transactions): every key
// is unique and the listing holds each entry once, in key order.
func TestAppendLogConcurrent(t *testing.T) {
	db, _, _ := openChangelogDB(t, "b1", "b2")
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
