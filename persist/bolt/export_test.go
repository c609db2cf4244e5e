package bolt_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"corkboard/persist/bolt"
)

// TestOpenReadOnly: a migration's open never creates a file, waits for a
// server's lock and gives up with ErrLocked, and once the server is gone
// reads the same secret without writing.
func TestOpenReadOnly(t *testing.T) {
	t.Run("ErrMissing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), bolt.FileName)
		if _, err := bolt.OpenReadOnly(path, 50*time.Millisecond); err == nil {
			t.Fatal("OpenReadOnly of a missing file succeeded")
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("OpenReadOnly left a file behind: %v", err)
		}
	})
	t.Run("ErrLocked", func(t *testing.T) {
		db, dir := openDB(t)
		_, err := bolt.OpenReadOnly(filepath.Join(dir, bolt.FileName), 50*time.Millisecond)
		if !errors.Is(err, bolt.ErrLocked) {
			t.Fatalf("OpenReadOnly while a server holds the file: %v, want ErrLocked", err)
		}
		db.Close()
	})
	t.Run("OK", func(t *testing.T) {
		db, dir := openDB(t)
		secret := bytes.Clone(db.Secret())
		db.Close()
		path := filepath.Join(dir, bolt.FileName)
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ro, err := bolt.OpenReadOnly(path, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ro.Secret(), secret) {
			t.Fatal("OpenReadOnly read another secret")
		}
		// A server cannot open the file while the migration reads it.
		if _, err := bolt.Open(dir); !errors.Is(err, bolt.ErrLocked) {
			t.Fatalf("Open while a migration reads the file: %v, want ErrLocked", err)
		}
		ro.Close()
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatal("OpenReadOnly changed the file")
		}
	})
}
