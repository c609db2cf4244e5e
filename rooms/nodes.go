package rooms

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"time"

	"corkboard/transport/livewire"
)

// Several nodes (docs/scale-out.md). A board may have a room on every node
// at once; the store hands out versions, so the rooms never disagree on
// one, but each learns of the others' commits only through notes: the
// Relay carries what a room tells the others, and the hub hands what they
// tell it to Advance, Remote, ForgetNode and Reannounce. Notes are hints:
// a lost one delays a change (until the slow recheck, Advance from the
// store), never loses it.

// Relay carries a room's notes to the rooms of the same board on other
// nodes. Both methods are called from the room's loop and must not wait.
type Relay interface {
	// Committed tells the others the board is at version (after the commit,
	// never inside it).
	Committed(boardID string, version int64)
	// Presence tells the others of a local connection joining, leaving or
	// moving its pointer, or asks them who is here (NoteWho).
	Presence(boardID string, n Note)
}

// NoteKind is what a presence note says.
type NoteKind uint8

// Presence note kinds.
const (
	NoteJoin NoteKind = iota + 1
	NoteLeave
	NotePointer
	// NoteWho asks the other nodes' rooms to announce their connections
	// (sent when a room gets its first local subscriber).
	NoteWho
	// NoteEditing is a connection opening (NoteID) or closing ("") a
	// note's editor.
	NoteEditing
	// NoteEvent is a merge event of a push this node applied, for the
	// subscribers on the others (Event; no Presence).
	NoteEvent
)

// Note is a presence note: a connection on some node joined, left or moved
// its pointer. Never stored.
type Note struct {
	Kind NoteKind
	// Node is the node the connection is on (set by the receiving hub).
	Node     string
	Presence livewire.Presence
	X, Y     float64
	// NoteID is the note of a NoteEditing.
	NoteID string
	// Event is the event of a NoteEvent.
	Event livewire.Event
}

// MaxRemotePresence bounds the connections of other nodes a room keeps
// track of; notes of more are ignored (the board is far past the caps of
// one person, and presence is a convenience).
const MaxRemotePresence = 10_000

type remotePresence struct {
	livewire.Presence // with Editing, for the hello's list
	node              string
}

// presence is p as join, leave and pointer messages carry it: without the
// note it is editing.
func (p remotePresence) presence() livewire.Presence {
	q := p.Presence
	q.Editing = ""
	return q
}

// shared reports whether other nodes commit to the room's store too (the
// room has a Relay): its version in memory may then be behind the store's
// until their note comes, so a pull or long poll that would find nothing
// new asks the store first (Pull, Wait). On a single node every commit goes
// through this room, and its version is the truth.
func (r *Room) shared() bool { return r.opts.Relay != nil }

// storeSaid takes a version read from the store: above the room's, another
// node committed, and the room catches up.
func (r *Room) storeSaid(v int64) {
	if r.shared() && v > r.version.Load() {
		r.Advance(v)
	}
}

// onLoop runs f on the room's loop; false when the room has stopped.
func (r *Room) onLoop(f func()) bool {
	select {
	case r.nodeC <- f:
		return true
	case <-r.done:
		return false
	}
}

// Advance tells the room the board is at version v: committed on another
// node (a note) or read from the store (a recheck, a pull). When v is above the room's version, a room with
// subscribers reads the changes after its version from the store and fans
// them out, in order and after anything it sent before, as it does a local
// commit; a room without subscribers only moves its version (a pull below
// it asks the store anyway) and answers its long polls.
func (r *Room) Advance(v int64) {
	r.onLoop(func() {
		if v <= r.version.Load() {
			return
		}
		r.target = max(r.target, v)
		r.startCommit()
	})
}

// startCatchUp moves the room to the version other nodes reported: at once
// without subscribers, through a read of the store with them. Called by
// the loop when nothing is being committed.
func (r *Room) startCatchUp() {
	cur := r.version.Load()
	if r.target <= cur {
		return
	}
	if len(r.subs) == 0 {
		r.version.Store(r.target)
		r.answerWaiters(WaitPassed)
		return
	}
	r.committing = true
	go func() {
		// Like a commit: the loop waits for it on shutdown, so it ends.
		ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
		defer cancel()
		c := &commit{base: cur}
		c.catchUp, c.err = r.store.ChangesSince(ctx, r.id, cur)
		r.commitC <- c
	}()
}

// catchUpTimeout bounds one catch-up read; the next recheck tries again.
const catchUpTimeout = 30 * time.Second

// bridgeGap is called in the commit goroutine after the store applied a
// batch: when the batch's first version is not the one after base, another
// node committed in between, and sending the batch's changes alone would
// show subscribers a gap. It reads everything after base instead, which
// the loop sends in place of the batch's messages.
func (r *Room) bridgeGap(c *commit) {
	if r.opts.Relay == nil {
		return
	}
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
			// store answers again (finishCommit sets the target).
			r.log.Warn("read changes between nodes' commits; catching up later", slog.Int64("since", c.base), slog.Any("err", err))
			c.gapped = true
			return
		}
		c.catchUp = ch
		return
	}
}

// finishCatchUp sends a catch-up's changes (since c.base) to every
// subscriber and moves the version; for a catch-up alone (no pushes) that
// failed, it gives up until the next recheck. It returns 0 (no version of
// this node's own to announce). Called by the loop.
func (r *Room) finishCatchUp(c *commit) int64 {
	if c.catchUp == nil {
		if c.err != nil && len(c.reqs) == 0 {
			r.log.Warn("catch up with other nodes' commits", slog.Any("err", c.err))
			r.target = r.version.Load()
		}
		return 0
	}
	ch := c.catchUp
	if ch.ServerVersion <= r.version.Load() {
		return 0
	}
	if len(r.subs) > 0 {
		if b, err := livewire.EncodeChanges(ch, c.base, ""); err == nil {
			r.broadcast(NewChangesMessage(b, ch.ServerVersion), nil)
		} else {
			r.log.Error("encode catch-up; subscribers will see a gap and pull", slog.Any("err", err))
		}
	}
	r.version.Store(ch.ServerVersion)
	return 0
}

// Remote takes a presence note from another node: the room's subscribers
// see the connection join, leave or point as if it were here.
func (r *Room) Remote(n Note) {
	if n.Kind == NoteEvent {
		r.onLoop(func() {
			r.broadcast(mustEncode(livewire.EventsMessage{Type: livewire.TypeEvents, Events: []livewire.Event{n.Event}}), nil)
		})
		return
	}
	r.onLoop(func() {
		id := n.Presence.ID
		p := livewire.Presence{ID: id, Email: n.Presence.Email, Color: ColorFor(n.Presence.Email)}
		if r.remote == nil {
			r.remote = map[string]remotePresence{}
		}
		_, known := r.remote[id]
		switch n.Kind {
		case NoteJoin, NotePointer:
			if !known {
				if len(r.remote) >= MaxRemotePresence {
					return
				}
				r.remote[id] = remotePresence{Presence: p, node: n.Node}
				r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeJoin, Presence: p}), nil)
			}
			if n.Kind == NotePointer {
				r.broadcast(mustEncode(livewire.PointerMessage{Type: livewire.TypePointer, Presence: p, X: n.X, Y: n.Y}), nil)
			}
		case NoteEditing:
			if !known {
				if len(r.remote) >= MaxRemotePresence {
					return
				}
				r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeJoin, Presence: p}), nil)
			}
			r.remote[id] = remotePresence{Presence: livewire.Presence{ID: id, Email: p.Email, Color: p.Color, Editing: n.NoteID}, node: n.Node}
			r.broadcast(mustEncode(livewire.EditingMessage{Type: livewire.TypeEditing, Presence: p, NoteID: n.NoteID}), nil)
		case NoteLeave:
			if known {
				delete(r.remote, id)
				r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeLeave, Presence: p}), nil)
			}
		}
	})
}

// ForgetNode drops every connection of node (it stopped, or has not been
// heard of for a while): the room's subscribers see them leave.
func (r *Room) ForgetNode(node string) {
	r.onLoop(func() {
		for id, p := range r.remote {
			if p.node == node {
				delete(r.remote, id)
				r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeLeave, Presence: p.presence()}), nil)
			}
		}
	})
}

// Reannounce tells the other nodes of every local connection (an answer to
// NoteWho).
func (r *Room) Reannounce() {
	r.onLoop(func() {
		for _, s := range r.subs {
			r.relay(Note{Kind: NoteJoin, Presence: s.presence()})
			if s.editing != "" {
				r.relay(Note{Kind: NoteEditing, Presence: s.presence(), NoteID: s.editing})
			}
		}
	})
}

// relay hands a presence note to the Relay, if any. Called by the loop.
func (r *Room) relay(n Note) {
	if r.opts.Relay != nil {
		r.opts.Relay.Presence(r.id, n)
	}
}

// remotePresent lists the connections on other nodes, by ID. Called by
// the loop.
func (r *Room) remotePresent() []livewire.Presence {
	if len(r.remote) == 0 {
		return nil
	}
	out := make([]livewire.Presence, 0, len(r.remote))
	for _, p := range r.remote {
		out = append(out, p.Presence)
	}
	slices.SortFunc(out, func(a, b livewire.Presence) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
