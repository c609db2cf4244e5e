package rooms

import (
	"cmp"
	"context"
	"slices"

	"corkboard/ratelimit"
	"corkboard/transport/livewire"
)

// Subscribers and presence: who is in the room, their pointers and the
// notes they have open, and kicks. With several nodes the room also tells
// the others (relay) and shows theirs (nodes.go).

// Welcome is what a new subscriber learns atomically with joining: the
// version after which every change reaches its queue, and who else is here.
type Welcome struct {
	ServerVersion int64
	Present       []livewire.Presence
}

// Member describes a connection joining a room.
type Member struct {
	// ConnID identifies the connection in presence and changes messages.
	ConnID string
	// Email is who is connected.
	Email string
	// Sink receives the subscriber's messages; required.
	Sink Sink
	// OnLeave, if set, runs once when the subscriber's Leave is called.
	OnLeave func()
	// UserPushes, if set, is the push budget the person shares across all
	// of their connections (the hub keeps one per person); AllowPush
	// spends from it after the connection's own.
	UserPushes *ratelimit.Bucket
	// Hidden leaves the connection out of presence (a read-only link's):
	// nobody is told it joined or left, and it is in no one's list.
	Hidden bool
}

// Subscribe adds a subscriber for a connection. Every change committed
// after the returned Welcome's version reaches the subscriber's sink, in
// order; the others are told it joined. The connection must call Leave when
// it ends.
func (r *Room) Subscribe(ctx context.Context, m Member) (*Subscriber, Welcome, error) {
	if m.Sink == nil {
		panic("rooms: Subscribe without a Sink")
	}
	if r.closing.Load() {
		return nil, Welcome{}, ErrClosed
	}
	s := &Subscriber{
		room:    r,
		id:      m.ConnID,
		email:   m.Email,
		color:   ColorFor(m.Email),
		onLeave: m.OnLeave,
		hidden:  m.Hidden,
		sink:    m.Sink,
		pushes:  ratelimit.NewBucket(r.opts.PushRate, r.opts.PushBurst),
		user:    m.UserPushes,
		pos:     -1,
		done:    make(chan struct{}),
	}
	req := &joinReq{sub: s, reply: make(chan Welcome, 1)}
	select {
	case r.reqC <- req:
	case <-r.done:
		return nil, Welcome{}, ErrClosed
	case <-ctx.Done():
		return nil, Welcome{}, ctx.Err()
	}
	// The loop replies at once, without waiting on anything.
	return s, <-req.reply, nil
}

type joinReq struct {
	sub   *Subscriber
	reply chan Welcome
}

// serve registers the subscriber and tells the others.
func (req *joinReq) serve(r *Room) {
	r.touch()
	present := slices.Clone(r.subs)
	slices.SortFunc(present, func(a, b *Subscriber) int { return cmp.Compare(a.seq, b.seq) })
	w := Welcome{ServerVersion: r.version.Load(), Present: make([]livewire.Presence, len(present))}
	present = slices.DeleteFunc(present, func(s *Subscriber) bool { return s.hidden })
	w.Present = w.Present[:len(present)]
	for i, s := range present {
		w.Present[i] = s.presence()
		w.Present[i].Editing = s.editing
	}
	w.Present = append(w.Present, r.remotePresent()...)
	first := len(r.subs) == 0
	r.seq++
	req.sub.seq = r.seq
	req.sub.pos = len(r.subs)
	r.subs = append(r.subs, req.sub)
	r.subCount.Store(int32(len(r.subs)))
	req.reply <- w
	if req.sub.hidden {
		return
	}
	r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeJoin, Presence: req.sub.presence()}), req.sub)
	if first {
		// Who is here on other nodes: their rooms answer with joins.
		r.relay(Note{Kind: NoteWho})
	}
	r.relay(Note{Kind: NoteJoin, Presence: req.sub.presence()})
}

type leaveReq struct {
	sub  *Subscriber
	done chan struct{}
}

// serve takes the subscriber out; the others are told it left.
func (req *leaveReq) serve(r *Room) {
	r.touch()
	r.remove(req.sub, 0, "")
	close(req.done)
}

// remove takes s out of the room and tells the others it left; code 0 means
// s left by itself, otherwise s is closed with code.
func (r *Room) remove(s *Subscriber, code int, reason string) {
	if !r.has(s) {
		return
	}
	last := r.subs[len(r.subs)-1]
	r.subs[s.pos], last.pos = last, s.pos
	r.subs[len(r.subs)-1] = nil
	r.subs = r.subs[:len(r.subs)-1]
	s.pos = -1
	r.subCount.Store(int32(len(r.subs)))
	if code != 0 {
		s.close(code, reason)
	}
	if s.hidden {
		return
	}
	r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeLeave, Presence: s.presence()}), nil)
	r.relay(Note{Kind: NoteLeave, Presence: s.presence()})
}

type pointerReq struct {
	sub  *Subscriber
	x, y float64
}

// serve tells the others where the subscriber's pointer is.
func (req pointerReq) serve(r *Room) {
	if !r.has(req.sub) || req.sub.hidden {
		return // a hidden connection has no pointer others see
	}
	r.broadcast(mustEncode(livewire.PointerMessage{Type: livewire.TypePointer, Presence: req.sub.presence(), X: req.x, Y: req.y}), req.sub)
	r.relay(Note{Kind: NotePointer, Presence: req.sub.presence(), X: req.x, Y: req.y})
}

type editReq struct {
	sub    *Subscriber
	noteID string
}

// serve tells the others which note the subscriber opened in the editor
// ("" when it closed it), when that changed.
func (req editReq) serve(r *Room) {
	if !r.has(req.sub) || req.sub.hidden || req.sub.editing == req.noteID {
		return
	}
	req.sub.editing = req.noteID
	r.broadcast(mustEncode(livewire.EditingMessage{Type: livewire.TypeEditing, Presence: req.sub.presence(), NoteID: req.noteID}), req.sub)
	r.relay(Note{Kind: NoteEditing, Presence: req.sub.presence(), NoteID: req.noteID})
}

// Kick drops every subscriber of email with livewire.CloseForbidden (its
// access was withdrawn), and ends their long polls with WaitKicked.
func (r *Room) Kick(email, reason string) {
	select {
	case r.reqC <- kickReq{email: email, reason: reason}:
	case <-r.done:
	}
}

type kickReq struct {
	email, reason string
}

// serve drops every subscriber and waiter of the person.
func (req kickReq) serve(r *Room) {
	for _, s := range slices.Clone(r.subs) { // remove reorders r.subs
		if s.email == req.email {
			r.remove(s, livewire.CloseForbidden, req.reason)
		}
	}
	r.kickWaiters(req.email)
}

// SendTo sends msg to every subscriber of email on this room, after what
// the room sent them before, and reports whether there was one. Like a
// fan-out it never waits for a socket.
func (r *Room) SendTo(email string, msg *Message) bool {
	found := make(chan bool, 1)
	if !r.onLoop(func() {
		var subs []*Subscriber
		for _, s := range r.subs {
			if s.email == email {
				subs = append(subs, s)
			}
		}
		if len(subs) > 0 {
			r.handOver(fanJob{msg: msg, subs: subs})
		}
		found <- len(subs) > 0
	}) {
		return false
	}
	return <-found
}
