package bolt_test

import (
	"testing"
	"time"

	"corkboard/changelog"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/storetest"
)

// TestContract runs the storage contract on a bbolt file in a fresh
// temporary folder, wired with the changelog's note renderer as the server
// wires it.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) persist.Store {
		db, err := bolt.Open(t.TempDir())
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		db.Now = now
		db.SetNoteRenderer(changelog.RenderNote)
		t.Cleanup(func() { db.Close() })
		return db
	})
}

// TestDurable checks that a bbolt store keeps everything in its file: a
// store opened again on the folder reads what the first one wrote.
func TestDurable(t *testing.T) {
	storetest.RunDurable(t, func(t *testing.T) func(now func() time.Time) (storetest.ClosableStore, error) {
		dir := t.TempDir()
		return func(now func() time.Time) (storetest.ClosableStore, error) {
			db, err := bolt.Open(dir)
			if err != nil {
				return nil, err
			}
			db.Now = now
			db.SetNoteRenderer(changelog.RenderNote)
			return db, nil
		}
	})
}

// TestSweeps checks bbolt's two-pass sweeps of sessions and codes.
func TestSweeps(t *testing.T) {
	storetest.RunSweeps(t, func(t *testing.T) storetest.SweepStore {
		db, err := bolt.Open(t.TempDir())
		if err != nil {
			t.Fatalf("bolt.Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}, bolt.SweepBatch)
}
