package rooms

import (
	"context"
	"log/slog"
	"time"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// peers is what the rooms of the same board on other nodes add to a
// room's versions. On one node there are none (noPeers): every commit goes
// through this room, so its version in memory is the board's, and each
// commit's changes follow on from the last ones it sent. With several
// (storePeers, when Options.Relay is set) other nodes commit to the store
// too: the room learns of their versions from notes and from the store,
// catches up by reading the store, and tells them of its own commits.
//
// shared answers the same for a room's whole life and is called from any
// goroutine; bridge is called in the commit goroutine; the others by the
// room's loop, which owns what they touch.
type peers interface {
	// shared reports whether other nodes commit to the board too: the
	// room's version may then be behind the store's, so a pull or wait
	// that would find nothing new asks the store first.
	shared() bool
	// heard takes a version another node reached (a note, a recheck, a
	// read of the store); above the room's, a catch-up is due.
	heard(v int64)
	// catchUp starts the catch-up that is due, if any; called when
	// nothing is being committed. A catch-up that reads the store sets
	// the room committing and hands the loop a commit without pushes.
	catchUp()
	// bridge is called in the commit goroutine once the store applied a
	// batch: when another node committed between the room's version and
	// the batch, it sets c.catchUp, sent in place of the batch's messages.
	bridge(c *commit)
	// finishCatchUp sends c.catchUp (everything after c.base) to the
	// subscribers and moves the room's version.
	finishCatchUp(c *commit)
	// committed tells the other nodes the board is at v, after a commit of
	// this node's pushes; the commit's answers wait for the channel it
	// returns (nil: none to wait for; Relay.Committed).
	committed(v int64) <-chan error
	// current reports whether a pull that finds the room at v at now may
	// be answered from memory: every push another node acknowledged before
	// now has reached the room (Relay.Current), and no note above v is on
	// its way to it. Called from any goroutine.
	current(v int64, now time.Time) bool
}

func newPeers(r *Room, relay Relay) peers {
	if relay == nil {
		return noPeers{}
	}
	return &storePeers{room: r, relay: relay}
}

// noPeers is a room alone on its board: nobody else commits to it.
type noPeers struct{}

func (noPeers) shared() bool                  { return false }
func (noPeers) heard(int64)                   {}
func (noPeers) catchUp()                      {}
func (noPeers) bridge(*commit)                {}
func (noPeers) finishCatchUp(*commit)         {}
func (noPeers) committed(int64) <-chan error  { return nil }
func (noPeers) current(int64, time.Time) bool { return true }

// storePeers is a room among rooms of its board on other nodes: it
// catches up with their commits by reading the store, and tells them of
// its own through the Relay. Notes are hints: a lost one delays a change
// (until the slow recheck, Advance from the store), never loses it.
type storePeers struct {
	room  *Room
	relay Relay
	// target is the highest version other nodes reached, as far as this
	// room heard; above its version, a catch-up is due. The loop's.
	target int64
}

// catchUpRead is a read of the store's changes after a commit's base; err
// when it failed.
type catchUpRead struct {
	changes *board.Changes
	err     error
}

// catchUpTimeout bounds one catch-up read; the next recheck tries again.
const catchUpTimeout = 30 * time.Second

func (p *storePeers) shared() bool { return true }

func (p *storePeers) heard(v int64) { p.target = max(p.target, v) }

func (p *storePeers) committed(v int64) <-chan error { return p.relay.Committed(p.room.id, v) }

// current: the Relay is asked first, noted read after. A note the
// listener handed on before the probe that made the Relay current has
// set noted by then.
func (p *storePeers) current(v int64, now time.Time) bool {
	return p.relay.Current(now) && p.room.noted.Load() <= v
}

// catchUp moves the room to the version other nodes reached: at once
// without subscribers (a pull below it asks the store anyway), through a
// read of the store with them.
func (p *storePeers) catchUp() {
	r := p.room
	cur := r.version.Load()
	if p.target <= cur {
		return
	}
	if len(r.subs) == 0 {
		r.version.Store(p.target)
		r.answerWaiters(WaitPassed)
		return
	}
	r.committing = true
	go func() {
		// Like a commit: the loop waits for it on shutdown, so it ends.
		ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
		defer cancel()
		ch, err := r.store.ChangesSince(ctx, r.id, cur)
		r.commitC <- &commit{base: cur, catchUp: &catchUpRead{changes: ch, err: err}}
	}()
}

// bridge: when the batch's first version is not the one after base,
// another node committed in between, and sending the batch's changes
// alone would show subscribers a gap. It reads everything after base
// instead.
func (p *storePeers) bridge(c *commit) {
	r := p.room
	for _, a := range c.applied {
		if a.Err != nil || a.Changes == nil {
			continue
		}
		if a.Version-1 <= c.base {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
		defer cancel()
		ch, err := r.store.ChangesSince(ctx, r.id, c.base)
		if err != nil {
			// Sending the batch's own messages would show subscribers a gap:
			// they are held back, and the room catches up from base once the
			// store answers again (finishCatchUp sets the target).
			r.log.Warn("read changes between nodes' commits; catching up later", slog.Int64("since", c.base), slog.Any("err", err))
		}
		c.catchUp = &catchUpRead{changes: ch, err: err}
		return
	}
}

// finishCatchUp sends a catch-up's changes (since c.base) to every
// subscriber and moves the room's version. When the read failed, a
// catch-up alone gives up until the next recheck, and one bridging a
// batch holds the batch's changes back: the room catches up past them
// once the store answers again.
func (p *storePeers) finishCatchUp(c *commit) {
	r := p.room
	if err := c.catchUp.err; err != nil {
		if len(c.reqs) == 0 {
			r.log.Warn("catch up with other nodes' commits", slog.Any("err", err))
			p.target = r.version.Load()
			return
		}
		for _, a := range c.applied {
			if a.Err == nil {
				p.target = max(p.target, a.Version)
			}
		}
		return
	}
	ch := c.catchUp.changes
	if ch.ServerVersion <= r.version.Load() {
		return
	}
	if len(r.subs) > 0 {
		if b, err := livewire.EncodeChanges(ch, c.base, ""); err == nil {
			r.broadcast(NewChangesMessage(b, ch.ServerVersion), nil)
		} else {
			r.log.Error("encode catch-up; subscribers will see a gap and pull", slog.Any("err", err))
		}
	}
	r.version.Store(ch.ServerVersion)
}

// Advance tells the room the board is at version v: committed on another
// node (a note) or read from the store (a recheck, a pull). When v is
// above the room's version, a room with subscribers reads the changes
// after its version from the store and fans them out, in order and after
// anything it sent before, as it does a local commit; a room without
// subscribers only moves its version (a pull below it asks the store
// anyway) and answers its long polls. A room without a Relay has no other
// node to keep up with, and ignores it.
func (r *Room) Advance(v int64) {
	for {
		// Before the loop hears of it: pulls stop answering from memory at
		// once (storePeers.current).
		n := r.noted.Load()
		if v <= n || r.noted.CompareAndSwap(n, v) {
			break
		}
	}
	r.onLoop(func() {
		if v <= r.version.Load() {
			return
		}
		r.peers.heard(v)
		r.startCommit()
	})
}

// storeSaid takes a version read from the store: above the room's, another
// node committed, and the room catches up.
func (r *Room) storeSaid(v int64) {
	if r.peers.shared() && v > r.version.Load() {
		r.Advance(v)
	}
}

var (
	_ peers = noPeers{}
	_ peers = (*storePeers)(nil)
)
