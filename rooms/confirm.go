package rooms

import (
	"context"
	"sync"
	"time"
)

// With several nodes, a pull or a long poll that would answer "nothing
// new" first confirms the room's version with the store (scale-out.md,
// "Pulls and long polls ask the store"): a push another node acknowledged
// before the pull began must be seen. The store's answer holds for every
// pull that began before the read did, so pulls arriving together share
// one read: while one is in flight, those arriving wait for the next,
// which starts when it ends (not the one in flight: it may have been sent
// before a push they must see was acknowledged). Under load a board's
// no-change pulls cost one store round trip per round trip time, however
// many there are, and each waits at most two.

// versionCheck is one read of the board's version from the store, shared
// by the pulls that were waiting when it started.
type versionCheck struct {
	done    chan struct{} // closed when v and err are set
	v       int64
	err     error
	waiters int // pulls that share it (tests)
}

// confirmer is a room's shared version check.
type confirmer struct {
	mu      sync.Mutex
	running bool          // a read is in flight
	next    *versionCheck // the read the pulls arriving now wait for; started when the one in flight ends
	reads   int64         // reads made, for tests
}

// storeVersion reads the board's version from the store in a read that
// starts after the call, shared with the calls that wait for the same
// one. ctx ends this call's wait, not the read, which others may share.
func (r *Room) storeVersion(ctx context.Context) (int64, error) {
	c := &r.confirm
	c.mu.Lock()
	if c.next == nil {
		c.next = &versionCheck{done: make(chan struct{})}
	}
	check := c.next
	check.waiters++
	if !c.running {
		// Nobody is reading: this call reads, with its own ctx and in its
		// own goroutine (a lone pull pays no hand-over), alone (next was
		// nil), and leaves the reads of those who come meanwhile to
		// another goroutine.
		c.running = true
		c.next = nil
		c.mu.Unlock()
		r.readVersion(ctx, check)
		return check.v, check.err
	}
	c.mu.Unlock()
	select {
	case <-check.done:
		return check.v, check.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// sharedReadTimeout bounds a version read that several pulls share: it
// cannot end with any one of their contexts (each stops waiting at its
// own), so it has its own bound. The first read of a run is one caller's
// own and uses its context.
const sharedReadTimeout = 10 * time.Second

// readVersion makes check's read; when pulls came meanwhile, a goroutine
// makes theirs.
func (r *Room) readVersion(ctx context.Context, check *versionCheck) {
	check.v, check.err = r.store.CurrentVersion(ctx, r.id)
	c := &r.confirm
	c.mu.Lock()
	c.reads++
	next := c.next
	c.next = nil
	c.running = next != nil
	c.mu.Unlock()
	close(check.done)
	if next != nil {
		go func() {
			// Not derived from ctx: on a busy board each read would wrap
			// the last one's context, a chain that never ends.
			ctx, cancel := context.WithTimeout(context.Background(), sharedReadTimeout)
			defer cancel()
			r.readVersion(ctx, next)
		}()
	}
}
