package postgres_test

import (
	"context"
	"testing"
	"time"

	"corkboard/changelog"
	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
)

// TestContract runs the storage contract on a fresh database per test,
// with the changelog's note renderer wired as the server wires it.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) persist.Store {
		s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		s.Now = now
		s.SetNoteRenderer(changelog.RenderNote)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

var _ persist.Store = (*postgres.Store)(nil)

// TestDurable checks that the PostgreSQL store keeps everything in the
// database: a store opened again on it (a restart, or another node) reads
// what the first one wrote.
func TestDurable(t *testing.T) {
	storetest.RunDurable(t, func(t *testing.T) func(now func() time.Time) (storetest.ClosableStore, error) {
		dsn := pgtest.NewDatabase(t)
		return func(now func() time.Time) (storetest.ClosableStore, error) {
			s, err := postgres.Open(context.Background(), dsn)
			if err != nil {
				return nil, err
			}
			s.Now = now
			s.SetNoteRenderer(changelog.RenderNote)
			return s, nil
		}
	})
}

// TestSweeps checks the PostgreSQL store's two-pass sweeps of sessions and
// codes.
func TestSweeps(t *testing.T) {
	storetest.RunSweeps(t, func(t *testing.T) storetest.SweepStore {
		s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, postgres.SweepBatch)
}
