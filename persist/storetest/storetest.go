// Package storetest is the contract suite of persist.Store: every behaviour
// the rest of Corkboard relies on from its storage, written against the
// interfaces only. A store is an implementation of persist.Store that
// passes Run; persist/bolt runs it on a temporary file, and any later
// backend runs it on a fresh database.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// Opener opens a fresh, empty store for one test and arranges (t.Cleanup)
// for it to be closed. The store must take every time it records (creation
// times, tombstone, revision and idempotency-key times, changelog stamps,
// processed billing events) from now, never from the wall clock: the suite
// moves that clock to test expiry and horizons without waiting. It must be
// wired as the server wires it, with SetNoteRenderer(changelog.RenderNote):
// the suite reads back the note snapshots a merge logs.
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

// Owner owns the boards openWith claims.
const Owner = "owner@example.com"

// Start times of the tests' clocks.
var (
	T0     = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clT0   = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)
	authT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
)

// Run runs the whole contract against stores from open. Every subtest
// opens its own store, so they may run in any order.
func Run(t *testing.T, open Opener) {
	t.Run("Boards", func(t *testing.T) { runBoards(t, open) })
	t.Run("Users", func(t *testing.T) { runUsers(t, open) })
	t.Run("Auth", func(t *testing.T) { runAuth(t, open) })
	t.Run("Usage", func(t *testing.T) { runUsage(t, open) })
	t.Run("Sync", func(t *testing.T) { runSync(t, open) })
	t.Run("Merge", func(t *testing.T) { runMerge(t, open) })
	t.Run("Changelog", func(t *testing.T) { runChangelog(t, open) })
	t.Run("Cancelled", func(t *testing.T) { runCancelled(t, open) })
	t.Run("Ping", func(t *testing.T) { runPing(t, open) })
	t.Run("Limits", func(t *testing.T) { runLimits(t, open) })
	t.Run("Structure", func(t *testing.T) { runStructure(t, open) })
	t.Run("Timer", func(t *testing.T) { runTimer(t, open) })
	t.Run("Links", func(t *testing.T) { runLinks(t, open) })
	t.Run("Vote", func(t *testing.T) { runVote(t, open) })
}

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

// openWith opens a store whose clock stands still at start until the test
// moves it, and claims boards for Owner.
func openWith(t *testing.T, open Opener, start time.Time, boards ...string) (persist.Store, *Clock) {
	t.Helper()
	c := NewClock(start)
	s := open(t, c.Now)
	for _, id := range boards {
		if _, err := s.ClaimBoard(context.Background(), id, Owner); err != nil {
			t.Fatalf("ClaimBoard(%s): %v", id, err)
		}
	}
	return s, c
}

// applyPush applies one push, as a room does through ApplyPushes: its own
// failure (EINVALID) comes back as the error.
func applyPush(ctx context.Context, s persist.SyncStore, boardID string, p *board.Push, key string) (version int64, replayed bool, err error) {
	res, err := s.ApplyPushes(ctx, boardID, []persist.PushInput{{Push: p, IdempotencyKey: key}})
	if err != nil {
		return 0, false, err
	}
	if len(res) != 1 {
		return 0, false, fmt.Errorf("ApplyPushes answered %d results for 1 push", len(res))
	}
	return res[0].Version, res[0].Replayed, res[0].Err
}

func mustPush(tb testing.TB, s persist.SyncStore, boardID string, p *board.Push, key string) int64 {
	tb.Helper()
	v, _, err := applyPush(context.Background(), s, boardID, p, key)
	if err != nil {
		tb.Fatalf("ApplyPushes: %v", err)
	}
	return v
}

func changes(tb testing.TB, s persist.SyncStore, boardID string, since int64) *board.Changes {
	tb.Helper()
	ch, err := s.ChangesSince(context.Background(), boardID, since)
	if err != nil {
		tb.Fatalf("ChangesSince(%d): %v", since, err)
	}
	return ch
}

func note(id, content string) board.Note {
	return board.Note{ID: id, Title: "T " + id, Content: content, X: 1, Y: 2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T09:00:00Z"}
}

func item(id, summary string) board.TrackerItem {
	return board.TrackerItem{ID: id, Key: "K-" + id, Type: "story", Summary: summary, UpdatedAt: "2026-11-22T09:00:00Z"}
}

func noteIDs(ns []board.Note) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// sameEntry compares entries as listed (without content).
func sameEntry(a, b persist.LogEntry) bool {
	return a.Key == b.Key && a.NoteID == b.NoteID && a.Action == b.Action && a.Timestamp == b.Timestamp
}

func appendN(tb testing.TB, s persist.ChangelogStore, boardID string, n int, noteID func(i int) string, action func(i int) string) []persist.LogEntry {
	tb.Helper()
	in := make([]persist.NewLogEntry, n)
	for i := range in {
		in[i] = persist.NewLogEntry{NoteID: noteID(i), Action: action(i), Content: []byte(fmt.Sprintf("content %d", i))}
	}
	out, err := s.AppendLog(context.Background(), boardID, in, nil)
	if err != nil {
		tb.Fatalf("AppendLog: %v", err)
	}
	return out
}

func authSessionID(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// errField is the field an EINVALID error names ("" for none).
func errField(err error) string {
	var e *board.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
