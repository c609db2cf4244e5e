package rooms

import (
	"math"
	"time"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// Following (docs/live-protocol.md, "Follow and bring everyone"). A
// connection's viewport (its centre in board coordinates and its zoom) is
// kept by the room and sent only to the connections following it, so a
// room pays for views in proportion to its followers, not its size.
// With several nodes a connection's views cross to the nodes with a
// follower of it only (NoteFollow tells them), and a summon crosses to
// every node.

// ViewInterval is the least time between two views of one connection
// relayed to its followers; faster ones are coalesced (the latest wins).
const ViewInterval = 100 * time.Millisecond

// MaxZoom bounds a view's zoom, which must be above 0.
const MaxZoom = 100

type viewState struct{ x, y, zoom float64 }

// checkView refuses a view or summon that is not finite, off the board or
// with a zoom outside (0, MaxZoom].
func checkView(x, y, zoom float64) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"x", x}, {"y", y}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || math.Abs(c.v) > board.MaxCoordinate {
			return board.FieldErrorf(c.name, "%s must be a finite number between -%g and %g.", c.name, float64(board.MaxCoordinate), float64(board.MaxCoordinate))
		}
	}
	if math.IsNaN(zoom) || zoom <= 0 || zoom > MaxZoom {
		return board.FieldErrorf("zoom", "zoom must be above 0 and at most %d.", MaxZoom)
	}
	return nil
}

// View keeps the connection's viewport and sends it to its followers,
// at most once per ViewInterval (the latest wins). EINVALID for
// coordinates that are not finite numbers within ±board.MaxCoordinate or
// a zoom outside (0, MaxZoom].
func (s *Subscriber) View(x, y, zoom float64) error {
	if err := checkView(x, y, zoom); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left {
		return nil
	}
	now := s.room.opts.Now()
	if wait := s.lastView.Add(ViewInterval).Sub(now); wait > 0 && !s.lastView.IsZero() {
		s.pendingView = &viewState{x, y, zoom}
		if !s.viewArmed {
			s.viewArmed = true
			s.room.opts.AfterFunc(wait, s.flushView)
		}
		return nil
	}
	s.lastView = now
	s.pendingView = nil
	s.sendView(viewState{x, y, zoom})
	return nil
}

// flushView sends the view held back by the throttle.
func (s *Subscriber) flushView() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.viewArmed = false
	if s.left || s.pendingView == nil {
		return
	}
	v := *s.pendingView
	s.pendingView = nil
	s.lastView = s.room.opts.Now()
	s.sendView(v)
}

// sendView hands a view to the room; called with s.mu held.
func (s *Subscriber) sendView(v viewState) {
	r := s.room
	select {
	case r.reqC <- loopFunc(func() {
		if r.has(s) {
			r.markActive(s)
			if s.entry != nil {
				r.setView(s.entry, v)
			}
		}
	}):
	case <-r.done:
	case <-s.done:
	}
}

// setView keeps e's view and sends it to e's followers here and, for a
// connection of this node, to the nodes with followers of it.
func (r *Room) setView(e *here, v viewState) {
	e.view = &v
	if len(e.followers) > 0 {
		subs := make([]*Subscriber, 0, len(e.followers))
		for f, once := range e.followers {
			subs = append(subs, f)
			if once {
				delete(e.followers, f)
				f.peeking = ""
			}
		}
		r.handOver(fanJob{msg: viewMessage(e), subs: subs})
		r.followersChanged(e)
	}
	if e.sub != nil && len(e.nodesFollowing) > 0 {
		r.relay(Note{Kind: NoteView, Presence: e.sub.presence(), X: v.x, Y: v.y, Zoom: v.zoom})
	}
}

func viewMessage(e *here) *Message {
	return mustEncode(livewire.ViewMessage{Type: livewire.TypeView, Presence: livewire.Presence{ID: e.p.ID, Email: e.p.Email, Color: e.p.Color}, X: e.view.x, Y: e.view.y, Zoom: e.view.zoom})
}

// Follow makes the connection receive the views of connection id (the
// latest at once, then every change) until it follows "" or id leaves
// (then a follow message with ended). ENOTFOUND (field id) when id is not
// on the board; EINVALID for following itself.
func (s *Subscriber) Follow(id string) error {
	return s.watch(id, false)
}

// ViewOnce sends the connection the latest view of connection id, once:
// at once when the room has it, else when id sends its next. The jump to
// where someone is looking. Errors as Follow's.
func (s *Subscriber) ViewOnce(id string) error {
	if id == "" {
		return board.FieldErrorf("id", "id is required.")
	}
	return s.watch(id, true)
}

func (s *Subscriber) watch(id string, once bool) error {
	if len(id) > maxConnIDLen {
		return board.FieldErrorf("id", "id must be at most %d characters.", maxConnIDLen)
	}
	if id != "" && id == s.id {
		return board.FieldErrorf("id", "A connection cannot follow itself.")
	}
	var err error
	s.room.onSub(s, func() { err = s.room.watch(s, id, once) })
	return err
}

func (r *Room) watch(s *Subscriber, id string, once bool) error {
	if !once {
		r.unfollow(s)
	}
	if id == "" {
		return nil
	}
	e := r.here[id]
	if e == nil {
		return &board.Error{Code: board.ENOTFOUND, Field: "id", Message: "Nobody with this id is on the board."}
	}
	if once {
		if e.view != nil {
			r.deliver(s, viewMessage(e))
			return nil
		}
		if _, ok := e.followers[s]; ok {
			return nil // it follows already: the next view comes anyway
		}
		r.unpeek(s)
		s.peeking = id
	} else {
		r.unpeek(s)
		s.following = id
		if e.view != nil {
			r.deliver(s, viewMessage(e))
		}
	}
	if e.followers == nil {
		e.followers = map[*Subscriber]bool{}
	}
	e.followers[s] = once
	r.followersChanged(e)
	return nil
}

// unfollow ends s's following and its pending view?, if any.
func (r *Room) unfollow(s *Subscriber) {
	r.unpeek(s)
	if s.following == "" {
		return
	}
	if e := r.here[s.following]; e != nil {
		delete(e.followers, s)
		r.followersChanged(e)
	}
	s.following = ""
}

func (r *Room) unpeek(s *Subscriber) {
	if s.peeking == "" {
		return
	}
	if e := r.here[s.peeking]; e != nil && e.followers[s] {
		delete(e.followers, s)
		r.followersChanged(e)
	}
	s.peeking = ""
}

// followersChanged tells e's node, for another node's connection, whether
// this node still follows it (the first follower and the last one).
func (r *Room) followersChanged(e *here) {
	if e.node == "" {
		return
	}
	on := len(e.followers) > 0
	if on == e.followedThere {
		return
	}
	e.followedThere = on
	r.relay(Note{Kind: NoteFollow, Presence: livewire.Presence{ID: e.p.ID}, On: on})
}

// Summon sends every other connection of the board, on every node, the
// connection's view, to jump to (the owner's "bring everyone"; the
// transport checks who may). Errors as View's.
func (s *Subscriber) Summon(x, y, zoom float64) error {
	if err := checkView(x, y, zoom); err != nil {
		return err
	}
	s.room.onSub(s, func() {
		r := s.room
		r.markActive(s)
		r.broadcast(summonMessage(s.presence(), x, y, zoom), s)
		r.relay(Note{Kind: NoteSummon, Presence: s.presence(), X: x, Y: y, Zoom: zoom})
	})
	return nil
}

func summonMessage(p livewire.Presence, x, y, zoom float64) *Message {
	return mustEncode(livewire.SummonMessage{Type: livewire.TypeSummon, Presence: livewire.Presence{ID: p.ID, Email: p.Email, Color: p.Color}, X: x, Y: y, Zoom: zoom})
}
