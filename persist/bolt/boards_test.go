package bolt_test

import (
	"errors"
	"testing"
	"time"

	"corkboard/persist/bolt"
)

// openDB opens a store in a fresh temp folder with a controllable clock.
func openDB(tb testing.TB) (*bolt.DB, string) {
	tb.Helper()
	dir := tb.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, dir
}

func TestOpenLockedFailsFast(t *testing.T) {
	_, dir := openDB(t)
	start := time.Now()
	_, err := bolt.Open(dir)
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("second Open err=%v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("second Open took %v, want it to fail fast", d)
	}
}

func TestSecretSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1 := append([]byte(nil), db.Secret()...)
	db.Close()
	db, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(s1) != 32 || string(s1) != string(db.Secret()) {
		t.Fatalf("secret changed across reopen or wrong size (%d bytes)", len(s1))
	}
}
