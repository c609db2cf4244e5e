package rooms

import (
	"slices"
	"time"

	"corkboard/transport/livewire"
)

// Several nodes (docs/scale-out.md). A board may have a room on every node
// at once; the store hands out versions, so the rooms never disagree on
// one, but each learns of the others' commits only through notes: the
// Relay carries what a room tells the others, and the hub hands what they
// tell it to Advance (peers.go: the catch-up with their commits), Remote,
// ForgetNode and Reannounce (here: their connections' presence). Notes are
// hints: a lost one delays a change (until the slow recheck, Advance from
// the store), never loses it.

// Relay carries a room's notes to the rooms of the same board on other
// nodes. Its methods must not wait: Committed and Presence are called
// from the room's loop, Current by every no-change pull.
type Relay interface {
	// Committed tells the others the board is at version (after the commit,
	// never inside it). The room acknowledges the pushes of that commit
	// once the channel it returns gives nil: their note is on its way to
	// every node and the lease has passed since (docs/scale-out.md,
	// "Pulls from memory"). A nil channel: acknowledge at once. An error:
	// the note could not be sent in time (the hub stopped, or publishing
	// kept failing), and the pushes are answered "saved but could not be
	// confirmed".
	Committed(boardID string, version int64) <-chan error
	// Current reports whether every note another node published more
	// than the lease before now has been handed to this node's rooms
	// (Advance): then a room whose version no note passed may answer a
	// pull from memory. now is the room's clock's reading for the pull
	// (Options.Now; a reading without a monotonic clock is not trusted:
	// the Relay reads its own).
	Current(now time.Time) bool
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
	// NoteIdle and NoteActive are a connection going idle and coming
	// back.
	NoteIdle
	NoteActive
	// NoteView is a connection's viewport (X, Y, Zoom), sent only while
	// another node follows it.
	NoteView
	// NoteFollow says the sending node starts (On) or stops following
	// connection Presence.ID, which is on another node.
	NoteFollow
	// NoteSummon is the owner bringing everyone to its view (X, Y, Zoom).
	NoteSummon
)

// Note is a presence note: a connection on some node joined, left or moved
// its pointer. Never stored.
type Note struct {
	Kind NoteKind
	// Node is the node the connection is on (set by the receiving hub).
	Node     string
	Presence livewire.Presence
	X, Y     float64
	// Zoom is the zoom of a NoteView or NoteSummon.
	Zoom float64
	// On is whether a NoteFollow starts following.
	On bool
	// NoteID is the note of a NoteEditing.
	NoteID string
	// Event is the event of a NoteEvent.
	Event livewire.Event
}

// MaxRemotePresence bounds the connections of other nodes a room keeps
// track of; notes of more are ignored (the board is far past the caps of
// one person, and presence is a convenience).
const MaxRemotePresence = 10_000

// Remote takes a presence note from another node: the room's subscribers
// see the connection join, leave, go idle or point as if it were here
// (joins, leaves and idle changes in the room's presence batches).
func (r *Room) Remote(n Note) {
	if n.Kind == NoteEvent {
		r.onLoop(func() {
			r.broadcast(mustEncode(livewire.EventsMessage{Type: livewire.TypeEvents, Events: []livewire.Event{n.Event}}), nil)
		})
		return
	}
	r.onLoop(func() { r.remoteNote(n) })
}

func (r *Room) remoteNote(n Note) {
	id := n.Presence.ID
	p := livewire.Presence{ID: id, Email: n.Presence.Email, Color: ColorFor(n.Presence.Email)}
	e := r.here[id]
	if e != nil && e.sub != nil {
		// About a connection of this node: only a follow is.
		if n.Kind == NoteFollow {
			r.nodeFollows(e, n.Node, n.On)
		}
		return
	}
	// learn adds another node's connection the room has not heard of.
	learn := func() bool {
		if e != nil {
			return true
		}
		if r.remoteCount >= MaxRemotePresence {
			return false
		}
		r.remoteCount++
		e = r.addHere(p, nil, n.Node)
		return true
	}
	switch n.Kind {
	case NoteJoin:
		learn()
	case NotePointer:
		if learn() {
			r.broadcast(mustEncode(livewire.PointerMessage{Type: livewire.TypePointer, Presence: p, X: n.X, Y: n.Y}), nil)
		}
	case NoteEditing:
		if learn() {
			e.p.Editing = n.NoteID
			r.broadcast(mustEncode(livewire.EditingMessage{Type: livewire.TypeEditing, Presence: p, NoteID: n.NoteID}), nil)
		}
	case NoteIdle, NoteActive:
		if learn() {
			r.setIdle(e, n.Kind == NoteIdle)
		}
	case NoteView:
		if e != nil {
			r.setView(e, viewState{n.X, n.Y, n.Zoom})
		}
	case NoteSummon:
		r.broadcast(summonMessage(p, n.X, n.Y, n.Zoom), nil)
	case NoteLeave:
		if e != nil {
			r.forgetRemote(e)
		}
	}
}

// nodeFollows records whether node has followers of e, a connection of
// this node; a new follower node gets e's latest view at once.
func (r *Room) nodeFollows(e *here, node string, on bool) {
	if !on {
		delete(e.nodesFollowing, node)
		return
	}
	if e.nodesFollowing == nil {
		e.nodesFollowing = map[string]struct{}{}
	}
	e.nodesFollowing[node] = struct{}{}
	if v := e.view; v != nil {
		r.relay(Note{Kind: NoteView, Presence: e.sub.presence(), X: v.x, Y: v.y, Zoom: v.zoom})
	}
}

// forgetRemote takes another node's connection out.
func (r *Room) forgetRemote(e *here) {
	r.remoteCount--
	r.removeHere(e)
}

// ForgetNode drops every connection of node (it stopped, or has not been
// heard of for a while): the room's subscribers see them leave.
func (r *Room) ForgetNode(node string) {
	r.onLoop(func() {
		for _, id := range slices.Clone(r.order) {
			e := r.here[id]
			if e.node == node {
				r.forgetRemote(e)
			} else if e.sub != nil {
				delete(e.nodesFollowing, node)
			}
		}
	})
}

// Reannounce tells the other nodes of every local connection (an answer to
// NoteWho): who is here, what they edit, who is idle, and whom this
// node follows.
func (r *Room) Reannounce() {
	r.onLoop(func() {
		for _, s := range r.subs {
			if s.entry == nil {
				continue
			}
			r.relay(Note{Kind: NoteJoin, Presence: s.presence()})
			if s.editing != "" {
				r.relay(Note{Kind: NoteEditing, Presence: s.presence(), NoteID: s.editing})
			}
			if s.entry.p.Idle {
				r.relay(Note{Kind: NoteIdle, Presence: s.presence()})
			}
		}
		for _, e := range r.here {
			if e.followedThere {
				r.relay(Note{Kind: NoteFollow, Presence: livewire.Presence{ID: e.p.ID}, On: true})
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
