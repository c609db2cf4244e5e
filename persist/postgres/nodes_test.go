package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"corkboard/board"
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
