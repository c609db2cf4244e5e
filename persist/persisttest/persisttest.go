// Package persisttest helps tests that need real storage: a bbolt store in a
// temporary folder and a settable clock to drive it.
package persisttest

import (
	"context"
	"sync"
	"testing"
	"time"

	"corkboard/persist"
)

// Owner owns the boards Open claims.
const Owner = "owner@example.com"

// Clock is a settable clock safe for concurrent use; pass its Now where a
// clock is injected.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Open opens a store in a fresh temporary folder whose clock stands still at
// start until the test moves it, claims boards for Owner, and closes the
// store when the test ends. It returns the store, its clock and the folder
// (to reopen it).
func Open(tb testing.TB, start time.Time, boards ...string) (*persist.DB, *Clock, string) {
	tb.Helper()
	dir := tb.TempDir()
	db, err := persist.Open(dir)
	if err != nil {
		tb.Fatalf("persist.Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	clock := NewClock(start)
	db.Now = clock.Now
	for _, id := range boards {
		if _, err := db.ClaimBoard(context.Background(), id, Owner); err != nil {
			tb.Fatalf("ClaimBoard(%s): %v", id, err)
		}
	}
	return db, clock, dir
}
