package rooms

import (
	"cmp"
	"slices"

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
			if s.hidden {
				continue
			}
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
