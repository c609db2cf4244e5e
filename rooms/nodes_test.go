package rooms_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// nopRelay is a node bus that carries nothing: the room behaves as one of
// several nodes, but hears of no other node's commit, and is never current
// (every no-change pull asks the store).
type nopRelay struct{}

func (nopRelay) Committed(string, int64) <-chan error { return nil }
func (nopRelay) Presence(string, rooms.Note)          {}
func (nopRelay) Current(time.Time) bool               { return false }

// flakyReads fails the next ChangesSince when armed, as a store whose
// connection another fault just cut would.
type flakyReads struct {
	*bolt.DB
	fail atomic.Bool
}

func (f *flakyReads) ChangesSince(ctx context.Context, id string, since int64) (*board.Changes, error) {
	if f.fail.CompareAndSwap(true, false) {
		return nil, errors.New("connection terminated")
	}
	return f.DB.ChangesSince(ctx, id, since)
}

// TestGapBetweenNodesIsNeverSent: another node commits version 2 unseen
// (no note), then this room commits version 3 and the read that would
// bridge 1 → 3 fails. The room's subscriber must not get "changes since 2"
// while it is at 1: the push is held back, and the room's catch-up sends
// 1 → 3 in one message once the store answers.
func TestGapBetweenNodesIsNeverSent(t *testing.T) {
	store := &flakyReads{DB: openStore(t)}
	r := startRoom(t, store, rooms.Options{Relay: nopRelay{}})
	if _, _, err := r.Push(context.Background(), onePush("n1", "here"), ""); err != nil {
		t.Fatal(err)
	}
	sub, w := subscribe(t, r, "A", "a@example.com")
	if w.ServerVersion != 1 {
		t.Fatalf("welcome at %d, want 1", w.ServerVersion)
	}
	// Another node's commit: straight into the store, no note.
	if _, err := store.DB.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: onePush("n2", "elsewhere")}}); err != nil {
		t.Fatal(err)
	}
	store.fail.Store(true)
	v, _, err := r.Push(context.Background(), onePush("n3", "here again"), "")
	if err != nil || v != 3 {
		t.Fatalf("push: v=%d err=%v, want 3", v, err)
	}
	m := nextOf(t, sub, livewire.TypeChanges)
	if m.Since != 1 || m.ServerVersion != 3 {
		t.Fatalf("subscriber at 1 got changes since %d to %d, want since 1 to 3", m.Since, m.ServerVersion)
	}
	got := map[string]bool{}
	for _, n := range m.Notes {
		got[n.ID] = true
	}
	if !got["n2"] || !got["n3"] {
		t.Fatalf("catch-up carries %v, want n2 and n3", m.Notes)
	}
	// The room is at 3: its next push follows on from there.
	if v, _, err := r.Push(context.Background(), onePush("n4", "next"), ""); err != nil || v != 4 {
		t.Fatalf("next push: v=%d err=%v, want 4", v, err)
	}
	if m := nextOf(t, sub, livewire.TypeChanges); m.Since != 3 || m.ServerVersion != 4 {
		t.Fatalf("next changes since %d to %d, want 3 to 4", m.Since, m.ServerVersion)
	}
}

// countedReads counts the store reads a pull makes.
type countedReads struct {
	*bolt.DB
	versions, changes atomic.Int64
}

func (c *countedReads) CurrentVersion(ctx context.Context, id string) (int64, error) {
	c.versions.Add(1)
	return c.DB.CurrentVersion(ctx, id)
}

func (c *countedReads) ChangesSince(ctx context.Context, id string, since int64) (*board.Changes, error) {
	c.changes.Add(1)
	return c.DB.ChangesSince(ctx, id, since)
}

// TestNoChangePullReads: a pull that finds nothing new in the room's
// memory costs no store read on a single node, one read of the board's
// version with several (a Relay), and when the store is ahead (another
// node committed, no note yet) the changes too.
func TestNoChangePullReads(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		relay                  rooms.Relay
		ahead                  bool
		wantVersion            int64
		wantVersions, wantRead int64
	}{
		{name: "OneNode", wantVersion: 1},
		{name: "Nodes", relay: nopRelay{}, wantVersion: 1, wantVersions: 1},
		{name: "NodesStoreAhead", relay: nopRelay{}, ahead: true, wantVersion: 2, wantVersions: 1, wantRead: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &countedReads{DB: openStore(t)}
			r := startRoom(t, store, rooms.Options{Relay: tc.relay})
			if _, _, err := r.Push(context.Background(), onePush("n1", "here"), ""); err != nil {
				t.Fatal(err)
			}
			if tc.ahead {
				// Another node's commit: straight into the store, no note.
				if _, err := store.DB.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: onePush("n2", "elsewhere")}}); err != nil {
					t.Fatal(err)
				}
			}
			store.versions.Store(0)
			res, err := r.Pull(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.ServerVersion; got != tc.wantVersion || (res.Changes != nil) != tc.ahead {
				t.Fatalf("pull since 1: version %d, changes %v; want %d, changes %v", got, res.Changes != nil, tc.wantVersion, tc.ahead)
			}
			if got, want := store.versions.Load(), tc.wantVersions; got != want {
				t.Errorf("version reads=%d, want %d", got, want)
			}
			if got, want := store.changes.Load(), tc.wantRead; got != want {
				t.Errorf("change reads=%d, want %d", got, want)
			}
		})
	}
}
