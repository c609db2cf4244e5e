package bolt_test

import (
	"testing"
	"time"

	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/storetest"
)

// TestContract runs the storage contract on a bbolt file in a fresh
// temporary folder.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) persist.Store {
		db, err := bolt.Open(t.TempDir())
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		db.Now = now
		t.Cleanup(func() { db.Close() })
		return db
	})
}
