package rooms

import (
	"slices"
	"time"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// Who is here, at any size (docs/live-protocol.md, "Who is here"). The
// room keeps every connection it shows (its own and other nodes') in an
// index sorted by ID: a hello takes its first HelloPresent entries and a
// who request a page after an ID, so neither costs more with the room's
// size. Joins, leaves and idle changes are not told one by one: they are
// gathered for PresenceTick and sent as one presence batch, so N joins
// cost about N/tick messages per subscriber instead of N each.

// Presence limits and timings.
const (
	// HelloPresent is how many of the others a hello lists.
	HelloPresent = 100
	// DefaultWhoLimit and MaxWhoLimit bound a who page.
	DefaultWhoLimit = 100
	MaxWhoLimit     = 500
	// MaxBatchEntries bounds the IDs and entries one presence batch
	// carries in all its lists; past it the lists are cut and the batch
	// says more (the count stays exact): a client showing the list asks
	// who. It keeps a batch's size, and a join wave's bytes per
	// subscriber, bounded.
	MaxBatchEntries = 100
	// PresenceTick is how long presence changes are gathered before
	// they are sent as one batch.
	PresenceTick = 100 * time.Millisecond
	// IdleAfter is how long a connection may send no pointer, push,
	// editing, view or active message before it is shown idle.
	IdleAfter = 2 * time.Minute
	// idleSweep is how often the room looks for connections gone idle.
	idleSweep = 5 * time.Second
)

// here is one connection the room shows: its own (sub set) or another
// node's (node set). Owned by the loop.
type here struct {
	p    livewire.Presence // with Editing and Idle
	sub  *Subscriber
	node string
	// view is the connection's latest viewport, nil before its first.
	view *viewState
	// followers are this node's connections following it (true: for
	// one view, a view? request).
	followers map[*Subscriber]bool
	// followedThere is, for another node's connection, whether this node
	// told that node it follows it.
	followedThere bool
	// nodesFollowing are the other nodes with a follower of it (a local
	// connection's): its views are relayed to them only.
	nodesFollowing map[string]struct{}
}

// addHere puts a connection in the index and in the next batch.
func (r *Room) addHere(p livewire.Presence, sub *Subscriber, node string) *here {
	e := &here{p: p, sub: sub, node: node}
	if r.here == nil {
		r.here = map[string]*here{}
	}
	r.here[p.ID] = e
	i, _ := slices.BinarySearch(r.order, p.ID)
	r.order = slices.Insert(r.order, i, p.ID)
	r.batch.join(p.ID)
	r.armPresence()
	return e
}

// removeHere takes a connection out of the index; its followers are told
// it left and the others see it in the next batch.
func (r *Room) removeHere(e *here) {
	id := e.p.ID
	delete(r.here, id)
	if i, ok := slices.BinarySearch(r.order, id); ok {
		r.order = slices.Delete(r.order, i, i+1)
	}
	for f, once := range e.followers {
		if once {
			f.peeking = ""
		} else {
			f.following = ""
		}
		r.deliver(f, mustEncode(livewire.FollowEnded{Type: livewire.TypeFollow, ID: "", Ended: id}))
	}
	if r.batch.leave(id) {
		r.armPresence()
	}
}

// setIdle shows a connection idle or active again (in the next batch).
func (r *Room) setIdle(e *here, idle bool) {
	if e.p.Idle == idle {
		return
	}
	e.p.Idle = idle
	if r.batch.idle(e.p.ID, idle) {
		r.armPresence()
	}
}

// presentPage lists up to limit entries after the ID after, in ID order,
// leaving out skip; more reports that others follow.
func (r *Room) presentPage(after string, limit int, skip string) (page []livewire.Presence, more bool) {
	i := 0
	if after != "" {
		i, _ = slices.BinarySearch(r.order, after)
		if i < len(r.order) && r.order[i] == after {
			i++
		}
	}
	page = make([]livewire.Presence, 0, min(limit, len(r.order)-i))
	for ; i < len(r.order); i++ {
		id := r.order[i]
		if id == skip {
			continue
		}
		if len(page) == limit {
			return page, true
		}
		page = append(page, r.here[id].p)
	}
	return page, false
}

// presenceBatch gathers one tick's changes. joined keeps the order of
// arrival; the state maps say what each ID's change is, so that a
// connection that joined and left within the tick appears in neither
// list, and one that went idle and came back in neither.
type presenceBatch struct {
	joined  []string
	left    []string
	changed []string         // IDs that went idle or active, in order
	state   map[string]uint8 // batchJoined, batchLeft, batchIdle, batchActive
}

const (
	batchJoined = iota + 1
	batchLeft
	batchIdle
	batchActive
	batchGone // joined and left within the tick
	batchSame // went idle and back (or back and idle) within the tick
)

func (b *presenceBatch) empty() bool { return len(b.state) == 0 }

func (b *presenceBatch) set(id string, st uint8) {
	if b.state == nil {
		b.state = map[string]uint8{}
	}
	b.state[id] = st
}

// join records a join; a connection that left within the tick (another
// node's, coming back) is simply here.
func (b *presenceBatch) join(id string) {
	switch b.state[id] {
	case batchLeft:
		b.set(id, batchSame)
	default:
		b.set(id, batchJoined)
		b.joined = append(b.joined, id)
	}
}

// leave records a leave and reports whether the batch changed.
func (b *presenceBatch) leave(id string) bool {
	switch b.state[id] {
	case batchJoined:
		b.set(id, batchGone)
	default:
		b.set(id, batchLeft)
		b.left = append(b.left, id)
	}
	return true
}

// idle records going idle (or active) and reports whether the batch
// changed.
func (b *presenceBatch) idle(id string, idle bool) bool {
	st := uint8(batchActive)
	if idle {
		st = batchIdle
	}
	switch b.state[id] {
	case batchJoined:
		return false // the joined entry carries its state when sent
	case batchIdle, batchActive:
		if b.state[id] != st {
			b.set(id, batchSame)
		}
		return true
	case batchSame:
		b.set(id, st)
		if !slices.Contains(b.changed, id) {
			b.changed = append(b.changed, id)
		}
		return true
	case batchLeft, batchGone:
		return false
	}
	b.set(id, st)
	b.changed = append(b.changed, id)
	return true
}

// armPresence arms the tick that sends the batch, if it is not armed.
func (r *Room) armPresence() {
	if r.presenceArmed {
		return
	}
	r.presenceArmed = true
	r.opts.AfterFunc(PresenceTick, func() { r.waitOnLoop(r.flushPresence) })
}

// flushPresence sends the tick's batch to every subscriber (the hidden
// ones too: they show the others).
func (r *Room) flushPresence() {
	r.presenceArmed = false
	b := r.batch
	r.batch = presenceBatch{}
	if b.empty() {
		return
	}
	m := livewire.PresenceBatch{Type: livewire.TypePresence, Count: len(r.order)}
	room := MaxBatchEntries
	take := func() bool {
		if room == 0 {
			m.More = true
			return false
		}
		room--
		return true
	}
	for _, id := range b.joined {
		if b.state[id] != batchJoined {
			continue
		}
		b.state[id] = 0 // listed once, however often it came back
		if e := r.here[id]; e != nil && take() {
			m.Joined = append(m.Joined, e.p)
		}
	}
	for _, id := range b.left {
		if b.state[id] == batchLeft && take() {
			m.Left = append(m.Left, id)
		}
	}
	for _, id := range b.changed {
		switch b.state[id] {
		case batchIdle:
			if take() {
				m.Idle = append(m.Idle, id)
			}
		case batchActive:
			if take() {
				m.Active = append(m.Active, id)
			}
		}
	}
	if len(m.Joined)+len(m.Left)+len(m.Idle)+len(m.Active) == 0 && !m.More {
		return
	}
	r.broadcast(mustEncode(m), nil)
}

// markActive notes a connection's activity; an idle one is active again.
// Called by the loop for every pointer, push, editing, view and active
// message.
func (r *Room) markActive(s *Subscriber) {
	s.lastActive = r.opts.Now()
	if e := s.entry; e != nil && e.p.Idle {
		r.setIdle(e, false)
		r.relay(Note{Kind: NoteActive, Presence: s.presence()})
	}
}

// armIdleSweep arms the look for idle connections while the room has
// subscribers.
func (r *Room) armIdleSweep() {
	if r.sweepArmed || len(r.subs) == 0 {
		return
	}
	r.sweepArmed = true
	r.opts.AfterFunc(idleSweep, func() { r.waitOnLoop(r.sweepIdle) })
}

// sweepIdle shows the connections that sent nothing for IdleAfter idle.
func (r *Room) sweepIdle() {
	r.sweepArmed = false
	cutoff := r.opts.Now().Add(-IdleAfter)
	for _, s := range r.subs {
		if e := s.entry; e != nil && !e.p.Idle && !s.lastActive.After(cutoff) {
			r.setIdle(e, true)
			r.relay(Note{Kind: NoteIdle, Presence: s.presence()})
		}
	}
	r.armIdleSweep()
}

// Active tells the room the connection is active without a pointer (a
// key pressed): an idle one shows active again.
func (s *Subscriber) Active() {
	s.room.onSub(s, func() { s.room.markActive(s) })
}

// Who sends the subscriber a page of who is here after the ID after
// (livewire.WhoAnswer), in the order of every page, leaving out the
// subscriber itself. EINVALID for a limit outside 1..MaxWhoLimit.
func (s *Subscriber) Who(after string, limit int) error {
	if limit < 1 || limit > MaxWhoLimit {
		return board.FieldErrorf("limit", "limit must be between 1 and %d.", MaxWhoLimit)
	}
	if len(after) > maxConnIDLen {
		return board.FieldErrorf("after", "after must be at most %d characters.", maxConnIDLen)
	}
	s.room.onSub(s, func() {
		page, more := s.room.presentPage(after, limit, s.id)
		next := ""
		if more {
			next = page[len(page)-1].ID
		}
		s.room.deliver(s, mustEncode(livewire.WhoAnswer{Type: livewire.TypeWho, Present: page, Next: next}))
	})
	return nil
}

// maxConnIDLen bounds a connection ID a client names.
const maxConnIDLen = 64

// onSub runs f on the loop if s is still in the room, and waits for it.
func (r *Room) onSub(s *Subscriber, f func()) {
	r.waitOnLoop(func() {
		if r.has(s) {
			f()
		}
	})
}

// waitOnLoop runs f on the loop and waits until it has run (a timer's
// work: what it arms is armed when the timer's goroutine ends).
func (r *Room) waitOnLoop(f func()) {
	ran := make(chan struct{})
	if !r.onLoop(func() {
		defer close(ran)
		f()
	}) {
		return
	}
	<-ran
}
