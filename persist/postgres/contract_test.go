package postgres_test

import (
	"context"
	"testing"
	"time"

	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
)

// TestContract runs the storage contract on a fresh database per test.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) persist.Store {
		s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		s.Now = now
		t.Cleanup(func() { s.Close() })
		return s
	})
}

var _ persist.Store = (*postgres.Store)(nil)
