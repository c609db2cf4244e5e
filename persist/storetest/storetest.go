// Package storetest is the contract suite of persist.Store: every behaviour
// the rest of Corkboard relies on from its storage, written against the
// interfaces only. A store is an implementation of persist.Store that
// passes Run; persist/bolt runs it on a temporary file, and any later
// backend runs it on a fresh database.
package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// Opener opens a fresh, empty store for one test and arranges (t.Cleanup)
// for it to be closed. The store must take every time it records (creation
// times, tombstone and idempotency-key times, changelog stamps, processed
// billing events) from now, never from the wall clock: the suite moves
// that clock to test expiry and horizons without waiting.
type Opener func(t *testing.T, now func() time.Time) persist.Store

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

// T0 is where every test's clock starts.
var T0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// env is one test's store and its clock.
type env struct {
	s     persist.Store
	clock *Clock
}

func newEnv(t *testing.T, open Opener) *env {
	t.Helper()
	c := NewClock(T0)
	return &env{s: open(t, c.Now), clock: c}
}

// Run runs the whole contract against stores from open. Each subtest opens
// its own store.
func Run(t *testing.T, open Opener) {
	t.Run("Boards", func(t *testing.T) { runBoards(t, open) })
}

// errField is the field an EINVALID error names ("" for none).
func errField(err error) string {
	var e *board.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
