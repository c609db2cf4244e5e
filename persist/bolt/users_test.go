package bolt_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"corkboard/persist"
	"corkboard/persist/bolt"
)

// TestUnreadableUserIsNeverReplaced: a user record that cannot be decoded
// is an error, never a reason to write a fresh user over it (which would
// silently reset a paid plan to the default).
func TestUnreadableUserIsNeverReplaced(t *testing.T) {
	const email = "ada@example.com"
	garbage := []byte("{not json")
	ctx := context.Background()

	tests := []struct {
		name string
		call func(db *bolt.DB) error
	}{
		{"EnsureUser", func(db *bolt.DB) error {
			_, err := db.EnsureUser(ctx, email, "free")
			return err
		}},
		{"UpdateUser", func(db *bolt.DB) error {
			_, err := db.UpdateUser(ctx, email, "free", func(u *persist.User) error {
				u.Plan = "pro"
				return nil
			})
			return err
		}},
		{"ApplyBillingEvent", func(db *bolt.DB) error {
			_, _, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{
				EventID: "evt_1", Email: email,
				Plan: func(string) (string, bool) { return "pro", true },
			}, "free")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := bolt.Open(dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			db.Close()
			writeRaw(t, dir, "users", email, garbage)

			db, err = bolt.Open(dir)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			if err := tt.call(db); err == nil {
				t.Fatal("err=nil, want an error for an unreadable user record")
			}
			db.Close()
			if got := readRaw(t, dir, "users", email); !bytes.Equal(got, garbage) {
				t.Fatalf("record is now %q, want it left as %q", got, garbage)
			}
		})
	}
}

// writeRaw puts a value straight into a top-level bucket of a closed store.
func writeRaw(tb testing.TB, dir, bucket, key string, value []byte) {
	tb.Helper()
	bdb, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, nil)
	if err != nil {
		tb.Fatalf("bbolt.Open: %v", err)
	}
	defer bdb.Close()
	if err := bdb.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(bucket)).Put([]byte(key), value)
	}); err != nil {
		tb.Fatalf("write %s/%s: %v", bucket, key, err)
	}
}

// readRaw reads a value straight from a top-level bucket of a closed store.
func readRaw(tb testing.TB, dir, bucket, key string) []byte {
	tb.Helper()
	bdb, err := bbolt.Open(filepath.Join(dir, bolt.FileName), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatalf("bbolt.Open: %v", err)
	}
	defer bdb.Close()
	var out []byte
	if err := bdb.View(func(tx *bbolt.Tx) error {
		out = bytes.Clone(tx.Bucket([]byte(bucket)).Get([]byte(key)))
		return nil
	}); err != nil {
		tb.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return out
}
