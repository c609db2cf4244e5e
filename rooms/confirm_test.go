package rooms_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/rooms"
)

// heldVersions is a store whose CurrentVersion reads the version and then
// waits for the test once held is set, so that a read is in flight while
// others arrive.
type heldVersions struct {
	*bolt.DB
	held    atomic.Bool
	read    chan int64    // each read's version, once read
	release chan struct{} // one send lets one read answer
}

func (h *heldVersions) CurrentVersion(ctx context.Context, id string) (int64, error) {
	v, err := h.DB.CurrentVersion(ctx, id)
	if !h.held.Load() {
		return v, err
	}
	h.read <- v
	<-h.release
	return v, err
}

// TestPullsShareAVersionReadThatStartedAfterThem: on several nodes, a
// no-change pull confirms the version with the store. Pulls that arrive
// while a read is in flight wait for the next one, which they share: a
// push another node acknowledged before they began is seen (the read in
// flight predates it), and two pulls cost one read.
func TestPullsShareAVersionReadThatStartedAfterThem(t *testing.T) {
	db := openStore(t)
	store := &heldVersions{DB: db, read: make(chan int64, 4), release: make(chan struct{})}
	r := startRoom(t, store, rooms.Options{Relay: nopRelay{}})
	ctx := context.Background()
	if _, _, err := r.Push(ctx, onePush("n1", "here"), ""); err != nil {
		t.Fatal(err)
	}
	store.held.Store(true)
	type answer struct {
		res *rooms.PullResult
		err error
	}
	pull := func() <-chan answer {
		c := make(chan answer, 1)
		go func() {
			res, err := r.Pull(ctx, 1)
			c <- answer{res, err}
		}()
		return c
	}
	first := pull()
	if v := <-store.read; v != 1 {
		t.Fatalf("first read found %d, want 1", v)
	}
	// Another node commits and acknowledges version 2 (no note comes), then
	// two pulls begin while the first read is still in flight.
	if _, err := db.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: onePush("n2", "elsewhere")}}); err != nil {
		t.Fatal(err)
	}
	second, third := pull(), pull()
	deadline := time.Now().Add(waitFor)
	for _, waiting := rooms.VersionReads(r); waiting < 2; _, waiting = rooms.VersionReads(r) {
		if time.Now().After(deadline) {
			t.Fatalf("%d pulls wait for the next read, want 2", waiting)
		}
		runtime.Gosched()
	}
	store.release <- struct{}{}
	if a := <-first; a.err != nil || a.res.Changes != nil || a.res.ServerVersion != 1 {
		t.Fatalf("first pull: %+v %v, want nothing new at 1 (it began before version 2)", a.res, a.err)
	}
	if v := <-store.read; v != 2 {
		t.Fatalf("second read found %d, want 2", v)
	}
	store.release <- struct{}{}
	for i, c := range []<-chan answer{second, third} {
		if a := <-c; a.err != nil || a.res.Changes == nil || a.res.ServerVersion != 2 {
			t.Fatalf("pull %d: %+v %v, want the change to 2", i+2, a.res, a.err)
		}
	}
	if reads, _ := rooms.VersionReads(r); reads != 2 {
		t.Fatalf("%d version reads for three pulls, want 2", reads)
	}
}
