package rooms_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/rooms"
)

// nopRelay is a node bus that carries nothing: the room behaves as one of
// several nodes, but hears of no other node's commit.
type nopRelay struct{}

func (nopRelay) Committed(string, int64)     {}
func (nopRelay) Presence(string, rooms.Note) {}

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
	m := nextOf(t, sub, rooms.TypeChanges)
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
	if m := nextOf(t, sub, rooms.TypeChanges); m.Since != 3 || m.ServerVersion != 4 {
		t.Fatalf("next changes since %d to %d, want 3 to 4", m.Since, m.ServerVersion)
	}
}
