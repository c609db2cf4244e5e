// Package persisttest helps tests that need real storage: a bbolt store in a
// temporary folder, wired as the server wires it (with the changelog's note
// renderer), and a settable clock to drive it.
package persisttest

import (
	"context"
	"testing"
	"time"

	"corkboard/changelog"
	"corkboard/persist/bolt"
	"corkboard/persist/storetest"
)

// Owner owns the boards Open claims.
const Owner = "owner@example.com"

// Clock is a settable clock safe for concurrent use: the contract suite's.
type Clock = storetest.Clock

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return storetest.NewClock(t) }

// Open opens a store in a fresh temporary folder whose clock stands still at
// start until the test moves it, claims boards for Owner, and closes the
// store when the test ends. It returns the store, its clock and the folder
// (to reopen it).
func Open(tb testing.TB, start time.Time, boards ...string) (*bolt.DB, *Clock, string) {
	tb.Helper()
	dir := tb.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		tb.Fatalf("bolt.Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	clock := NewClock(start)
	db.Now = clock.Now
	db.SetNoteRenderer(changelog.RenderNote)
	for _, id := range boards {
		if _, err := db.ClaimBoard(context.Background(), id, Owner); err != nil {
			tb.Fatalf("ClaimBoard(%s): %v", id, err)
		}
	}
	return db, clock, dir
}
