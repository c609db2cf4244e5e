package rooms

import (
	"context"
	"slices"

	"corkboard/ratelimit"
	"corkboard/transport/livewire"
)

// Subscribers and presence: who is in the room, their pointers and the
// notes they have open, and kicks. With several nodes the room also tells
// the others (relay) and shows theirs (nodes.go).

// Welcome is what a new subscriber learns atomically with joining: the
// version after which every change reaches its queue, and a page of who
// else is here (at most HelloPresent, in who order) with how many they
// are in all.
type Welcome struct {
	ServerVersion int64
	Present       []livewire.Presence
	// PresentCount is how many others the board shows; PresentMore is
	// true when Present is cut (the client asks Who for the rest).
	PresentCount int
	PresentMore  bool
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
	// it gets every message, but nobody sees it join, leave or go idle,
	// and it is in no hello, who or count.
	Hidden bool
}

// Subscribe adds a subscriber for a connection. Every change committed
// after the returned Welcome's version reaches the subscriber's sink, in
// order; the others are told it joined (in the next presence batch). The
// connection must call Leave when it ends.
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
		hidden:  m.Hidden,
		onLeave: m.OnLeave,
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

// serve registers the subscriber and tells the others (in the next batch).
// The hello's page costs HelloPresent entries whatever the room's size,
// and the index insert a move of pointers: a join is not a message to
// everyone.
func (req *joinReq) serve(r *Room) {
	r.touch()
	s := req.sub
	page, more := r.presentPage("", HelloPresent, "")
	w := Welcome{ServerVersion: r.version.Load(), Present: page, PresentCount: len(r.order), PresentMore: more}
	first := len(r.subs) == 0
	r.seq++
	s.seq = r.seq
	s.pos = len(r.subs)
	s.lastActive = r.opts.Now()
	r.subs = append(r.subs, s)
	r.subCount.Store(int32(len(r.subs)))
	// Its fan-out shard now: a join is no longer a message to everyone,
	// which used to place it.
	r.place(s)
	// The reply goes last: when Subscribe returns, the join is in the
	// batch and its timers are armed.
	defer func() { req.reply <- w }()
	r.armIdleSweep()
	if s.hidden {
		return
	}
	s.entry = r.addHere(livewire.Presence{ID: s.id, Email: s.email, Color: s.color}, s, "")
	if first {
		// Who is here on other nodes: their rooms answer with joins.
		r.relay(Note{Kind: NoteWho})
	}
	r.relay(Note{Kind: NoteJoin, Presence: s.presence()})
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

// remove takes s out of the room and tells the others it left (in the
// next batch); code 0 means s left by itself, otherwise s is closed with
// code.
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
	r.unfollow(s)
	if s.entry != nil {
		r.removeHere(s.entry)
		s.entry = nil
		r.relay(Note{Kind: NoteLeave, Presence: s.presence()})
	}
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
	r.markActive(req.sub)
	if req.sub.hidden {
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
	if !r.has(req.sub) {
		return
	}
	r.markActive(req.sub)
	if req.sub.hidden || req.sub.editing == req.noteID {
		return
	}
	req.sub.editing = req.noteID
	if e := req.sub.entry; e != nil {
		e.p.Editing = req.noteID
	}
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
