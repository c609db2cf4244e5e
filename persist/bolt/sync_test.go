package bolt_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
	"corkboard/persist/storetest"
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

func BenchmarkApplyPush(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	storetest.BenchApplyPush(b, db)
}

// BenchmarkDeleteConnectedNote: a round of two pushes (a note and a
// connector from it; the note's deletion, which takes the connector) on a
// board of 2,000 notes and 50 frames, with and without 2,000 connectors.
func BenchmarkDeleteConnectedNote(b *testing.B) {
	for _, connected := range []bool{false, true} {
		b.Run(fmt.Sprintf("connectors=%v", connected), func(b *testing.B) {
			db, _, _ := openSyncDB(b, "b1")
			storetest.BenchDeleteConnectedNote(b, db, connected)
		})
	}
}

func BenchmarkApplyPush100Boards(b *testing.B) {
	ids := storetest.BoardIDs(100)
	db, _, _ := openSyncDB(b, ids...)
	storetest.BenchApplyPushBoards(b, db, ids)
}

// BenchmarkApplyPushEdit100Boards is BenchmarkApplyPushEdit on 100 boards
// at once: one round pushes one edit to each board's 1 KB note
// concurrently (storetest.BenchEditNoteBoards), replacing the row
// (base=none) or merged against the version before the current one
// (base=previous), as BenchmarkApplyPush100Boards pushes its notes.
func BenchmarkApplyPushEdit100Boards(b *testing.B) {
	ids := storetest.BoardIDs(100)
	for _, bc := range []struct {
		name  string
		merge bool
	}{{"base=none", false}, {"base=previous", true}} {
		b.Run(bc.name, func(b *testing.B) {
			db, _, _ := openSyncDB(b, ids...)
			storetest.BenchEditNoteBoards(b, db, ids, bc.merge)
		})
	}
}

// BenchmarkApplyPushEdit is one push at a time editing one line of a 1 KB
// note: replacing the row (base=none), or carrying the version before the
// current one as baseVersion so that the store merges it against that
// revision (base=previous). The two side by side are what merging costs a
// push (docs/benchmarks.md).
//
// The fsync=off variants measure the same pushes without the disk: the
// store's own work, where merging shows most.
func BenchmarkApplyPushEdit(b *testing.B) {
	for _, bc := range []struct {
		name          string
		merge, nosync bool
	}{{"base=none", false, false}, {"base=previous", true, false}, {"fsync=off/base=none", false, true}, {"fsync=off/base=previous", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			db, _, _ := openSyncDB(b, "b1")
			if bc.nosync {
				bolt.SetNoSync(db)
			}
			storetest.BenchEditNote(b, db, bc.merge)
		})
	}
}

// BenchmarkApplyPushEditSideBySide is BenchmarkApplyPushEdit (boards=1)
// and BenchmarkApplyPushEdit100Boards (boards=100) with both variants in
// one run, each on a store of its own, alternating push by push (round by
// round for 100 boards): storetest.BenchEditNoteSideBySide. Its
// merged/plain metric is the figure docs/benchmarks.md gives; the A-A
// runs push without baseVersion on both sides, for the method's error. Run it with -benchtime 400x for
// one board, 60x for 100.
func BenchmarkApplyPushEditSideBySide(b *testing.B) {
	for _, bc := range []struct {
		name          string
		boards        int
		nosync, merge bool
	}{{"boards=1", 1, false, true}, {"boards=100", 100, false, true}, {"fsync=off/boards=1", 1, true, true},
		{"A-A/boards=1", 1, false, false}, {"A-A/boards=100", 100, false, false}} {
		b.Run(bc.name, func(b *testing.B) {
			// One file each (see BenchEditNoteSideBySide).
			ids := storetest.BoardIDs(bc.boards)
			pdb, _, _ := openSyncDB(b, ids...)
			mdb, _, _ := openSyncDB(b, ids...)
			if bc.nosync {
				bolt.SetNoSync(pdb)
				bolt.SetNoSync(mdb)
			}
			storetest.BenchEditNoteSideBySide(b, pdb, mdb, ids, ids, bc.merge)
		})
	}
}

// BenchmarkRevisions1000Edits measures the revision store after 1,000
// merged edits of a 1 KB note (storetest.PushNoteEdits), from bbolt's
// bucket stats once the store is closed: the bytes its two buckets use in
// their pages (r, the revisions; rt, their time index) and the pages they
// take, per edit. Run it once: -benchtime=1x.
func BenchmarkRevisions1000Edits(b *testing.B) {
	const edits = 1000
	var revs, times bbolt.BucketStats
	for b.Loop() {
		db, _, dir := openSyncDB(b, "b1")
		storetest.PushNoteEdits(b, db, "b1", edits)
		db.Close()
		bdb, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, &bbolt.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		err = bdb.View(func(tx *bbolt.Tx) error {
			rb := tx.Bucket([]byte("board_rows")).Bucket([]byte("b1"))
			revs, times = rb.Bucket([]byte("r")).Stats(), rb.Bucket([]byte("rt")).Stats()
			return nil
		})
		bdb.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	if revs.KeyN != edits-1 {
		b.Fatalf("%d revisions, want %d", revs.KeyN, edits-1)
	}
	inuse := func(s bbolt.BucketStats) int { return s.BranchInuse + s.LeafInuse }
	alloc := func(s bbolt.BucketStats) int { return s.BranchAlloc + s.LeafAlloc }
	b.ReportMetric(float64(inuse(revs))/edits, "r-inuse-B/edit")
	b.ReportMetric(float64(alloc(revs))/edits, "r-alloc-B/edit")
	b.ReportMetric(float64(inuse(times))/edits, "rt-inuse-B/edit")
	b.ReportMetric(float64(alloc(times))/edits, "rt-alloc-B/edit")
}

func BenchmarkChangesSince5000Notes(b *testing.B) {
	db, _, _ := openSyncDB(b, "b1")
	storetest.BenchChangesSince5000Notes(b, db)
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

// TestDeletingABoardsRowsDeletesItsRevisions: a board's revisions live in
// nested buckets of its rows bucket (board_rows/<id>/r and rt), so removing
// that bucket, as removing a board would, removes them and nothing of
// another board's.
func TestDeletingABoardsRowsDeletesItsRevisions(t *testing.T) {
	ctx := context.Background()
	db, _, dir := openSyncDB(t, "b1", "b2")
	for _, id := range []string{"b1", "b2"} {
		for i := range 3 {
			mustPush(t, db, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", fmt.Sprint(i))}}}, "")
		}
	}
	db.Close()
	bdb, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		rows := tx.Bucket([]byte("board_rows"))
		for _, id := range []string{"b1", "b2"} {
			for _, sub := range []string{"r", "rt"} {
				if n := rows.Bucket([]byte(id)).Bucket([]byte(sub)).Stats().KeyN; n != 2 {
					return fmt.Errorf("board_rows/%s/%s holds %d keys, want 2", id, sub, n)
				}
			}
		}
		return rows.DeleteBucket([]byte("b1"))
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.PruneRevisions(ctx, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), 0); err != nil || n != 2 {
		t.Fatalf("PruneRevisions of everything = %d, %v; want b2's 2 alone", n, err)
	}
}
