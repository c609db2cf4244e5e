package bolt_test

import (
	"context"
	"testing"

	"corkboard/persist/bolt"
)

// A closed store fails Ping: the readiness check of a server whose store
// has gone answers 503.
func TestPingAfterClose(t *testing.T) {
	db, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(context.Background()); err != nil {
		t.Fatalf("Ping on an open store: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(context.Background()); err == nil {
		t.Fatal("Ping on a closed store = nil, want an error")
	}
}
