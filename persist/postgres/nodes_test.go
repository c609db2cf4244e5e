package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
)

// TestConcurrentOpensMigrateOnce: two nodes starting together on a fresh
// database both open, and every migration is applied (and recorded) once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	const nodes = 4
	stores := make([]*postgres.Store, nodes)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(ctx, dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: Open: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	var applied, distinct int
	if err := stores[0].Pool().QueryRow(ctx, "SELECT count(*), count(DISTINCT version) FROM schema_migrations").Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	if want := postgres.MigrationCount(); applied != want || distinct != want {
		t.Fatalf("schema_migrations holds %d rows (%d versions), want each of the %d migrations once", applied, distinct, want)
	}
	for i := 1; i < nodes; i++ {
		if string(stores[i].Secret()) != string(stores[0].Secret()) {
			t.Fatalf("node %d has another server secret than node 0", i)
		}
	}
	// A node that starts later finds nothing to do and the same data.
	if _, err := stores[0].ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	late, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open after migration: %v", err)
	}
	defer late.Close()
	if _, err := late.FindBoard(ctx, "b1"); err != nil {
		t.Fatalf("late node: FindBoard: %v", err)
	}
}

// TestTwoNodesNeverShareAVersion: two stores with their own pools, as two
// nodes would have, push to one board at once. Every push gets its own
// version and together they are 1..N, with no gap and no duplicate; a pull
// from either node sees every note at the version its push was told.
func TestTwoNodesNeverShareAVersion(t *testing.T) {
	const perNode, nodes = 40, 2
	ctx := context.Background()
	first, _, dsn := pgtest.Open(t, pgtest.T0, "b1")
	second, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	stores := []*postgres.Store{first, second}

	type ack struct {
		note    string
		version int64
	}
	acks := make(chan ack, nodes*perNode)
	errs := make(chan error, nodes*perNode)
	var wg sync.WaitGroup
	for n, s := range stores {
		for i := range perNode {
			wg.Go(func() {
				id := fmt.Sprintf("node%d-%d", n, i)
				v, _, err := s.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note(id, "x")}}}, "key-"+id)
				if err != nil {
					errs <- err
					return
				}
				acks <- ack{id, v}
			})
		}
	}
	wg.Wait()
	close(acks)
	close(errs)
	for err := range errs {
		t.Fatalf("push: %v", err)
	}
	told := map[string]int64{}
	var versions []int64
	for a := range acks {
		told[a.note] = a.version
		versions = append(versions, a.version)
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != int64(i+1) {
			t.Fatalf("versions handed out %v, want 1..%d once each", versions, nodes*perNode)
		}
	}
	for _, s := range stores {
		ch := changes(t, s, "b1", 0)
		if ch.ServerVersion != nodes*perNode || len(ch.Notes) != nodes*perNode {
			t.Fatalf("pull: version %d with %d notes, want %d and %d", ch.ServerVersion, len(ch.Notes), nodes*perNode, nodes*perNode)
		}
		for _, n := range ch.Notes {
			if n.Version != told[n.ID] {
				t.Fatalf("note %s is at version %d, its push was told %d", n.ID, n.Version, told[n.ID])
			}
		}
	}
	// A retry on the other node with the same key is a replay.
	v, replayed, err := second.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("node0-0", "again")}}}, "key-node0-0")
	if err != nil || !replayed || v != told["node0-0"] {
		t.Fatalf("retry on the other node: v=%d replayed=%v err=%v, want a replay of %d", v, replayed, err, told["node0-0"])
	}
}

// TestPushSurvivesKilledConnection: the pool's only connection is
// terminated by the server (as pg_terminate_backend or a restart does); the
// next push still applies, exactly once.
func TestPushSurvivesKilledConnection(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	s, err := postgres.Open(ctx, dsn+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := s.Pool().QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var killed bool
	if err := admin.Pool().QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&killed); err != nil || !killed {
		t.Fatalf("pg_terminate_backend: %v %v", killed, err)
	}
	v, _, err := s.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}, "k1")
	if err != nil || v != 1 {
		t.Fatalf("push after the connection was killed: v=%d err=%v, want version 1", v, err)
	}
	if ch := changes(t, s, "b1", 0); ch.ServerVersion != 1 || len(ch.Notes) != 1 {
		t.Fatalf("after the push: version %d, %d notes; want 1 and 1", ch.ServerVersion, len(ch.Notes))
	}
}

// TestSessionSettings: every pooled connection has the documented timeouts
// (docs/postgres.md) and keeps synchronous_commit on.
func TestSessionSettings(t *testing.T) {
	s, _, _ := pgtest.Open(t, pgtest.T0)
	want := map[string]string{
		"lock_timeout":                        "5s",
		"statement_timeout":                   "30s",
		"idle_in_transaction_session_timeout": "15s",
		"synchronous_commit":                  "on",
	}
	for name, value := range want {
		var got string
		if err := s.Pool().QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != value {
			t.Errorf("%s = %s, want %s", name, got, value)
		}
	}
}

// TestTwoNodesMergeEveryEdit: clients editing different lines of one note
// from the same base push through two nodes at once. The board's row lock
// orders them, each merge reads the rows and revisions the one before it
// committed, and so every edit is in the note at the end, none overwritten.
func TestTwoNodesMergeEveryEdit(t *testing.T) {
	const lines, nodes = 20, 2
	ctx := context.Background()
	first, _, dsn := pgtest.Open(t, pgtest.T0, "b1")
	second, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetNoteRenderer(changelog.RenderNote)
	stores := []*postgres.Store{first, second}
	text := func(edit func(i int) string) string {
		var b strings.Builder
		for i := range lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(edit(i))
		}
		return b.String()
	}
	base := note("a", text(func(i int) string { return fmt.Sprint("line ", i) }))
	if _, _, err := first.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{base}}}, ""); err != nil {
		t.Fatal(err)
	}
	var merged atomic.Int64
	var wg sync.WaitGroup
	for i := range lines {
		wg.Go(func() {
			n := base
			n.BaseVersion = 1
			n.Content = text(func(j int) string {
				if j == i {
					return fmt.Sprint("LINE ", j)
				}
				return fmt.Sprint("line ", j)
			})
			res, err := stores[i%nodes].ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{n}}}}})
			if err != nil || res[0].Err != nil || len(res[0].Events) != 0 {
				t.Errorf("edit of line %d: %+v, %v; want applied without overlap", i, res, err)
				return
			}
			merged.Add(int64(res[0].Merged))
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	want := text(func(i int) string { return fmt.Sprint("LINE ", i) })
	for _, s := range stores {
		if ch := changes(t, s, "b1", 0); len(ch.Notes) != 1 || ch.Notes[0].Content != want || ch.ServerVersion != lines+1 {
			t.Fatalf("note after the edits: %+v, want every line edited at version %d", ch.Notes, lines+1)
		}
	}
	// The first edit to commit found nothing committed since its base.
	if got := merged.Load(); got != lines-1 {
		t.Fatalf("%d edits merged, want %d", got, lines-1)
	}
}

// TestDeletingABoardDeletesItsRevisions: the store never deletes a board,
// but an operator may, and a board's revisions go with it (and with each
// of its rows), without touching another board's.
func TestDeletingABoardDeletesItsRevisions(t *testing.T) {
	ctx := context.Background()
	s, _, _ := pgtest.Open(t, pgtest.T0, "b1", "b2")
	for _, id := range []string{"b1", "b2"} {
		for i := range 3 {
			if _, _, err := s.ApplyPush(ctx, id, &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", fmt.Sprint(i))}}}, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(boardID string) int {
		t.Helper()
		var n int
		if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM board_revisions WHERE board_id = $1", boardID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count("b1") != 2 || count("b2") != 2 {
		t.Fatalf("revisions b1=%d b2=%d, want 2 each", count("b1"), count("b2"))
	}
	// Everything else that refers to the board first, then the board.
	for _, sql := range []string{
		"DELETE FROM board_members WHERE board_id = $1",
		"DELETE FROM idempotency_keys WHERE board_id = $1",
		"DELETE FROM changelog_entries WHERE board_id = $1",
		"DELETE FROM changelog_state WHERE board_id = $1",
		"DELETE FROM snapshots WHERE board_id = $1",
		"DELETE FROM board_rows WHERE board_id = $1",
		"DELETE FROM boards WHERE id = $1",
	} {
		if _, err := s.Pool().Exec(ctx, sql, "b1"); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if count("b1") != 0 || count("b2") != 2 {
		t.Fatalf("after deleting b1: revisions b1=%d b2=%d, want 0 and 2", count("b1"), count("b2"))
	}
}
