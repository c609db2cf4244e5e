package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// Several nodes on one store (docs/scale-out.md). The hub is each node's
// end of a Bus: it tells the other nodes what its rooms committed, who is
// connected and where their pointers are, whom it kicked and which cached
// records changed; and it hands what they tell it to its own rooms. Notes
// are hints: a lost one only delays a change, because every room with
// live subscribers or held polls rechecks its board's version in the
// store every PollEvery, and every room is rechecked when the bus
// reconnects.

// Bus carries short notes between the nodes that share one store. The hub
// owns the notes' format; a Bus only moves bytes (persist/postgres's
// LISTEN/NOTIFY bus, or LocalBus in one process).
type Bus interface {
	// Publish sends payload (at most MaxNotePayload bytes) to every node
	// listening, this one included or not. It may fail or lose the note.
	Publish(ctx context.Context, payload []byte) error
	// Listen hands every payload published by any node to receive, and
	// calls resync after the bus connected or reconnected (notes sent
	// while it was away are lost). Called once, by New; receive and
	// resync are called from one goroutine.
	Listen(receive func(payload []byte), resync func())
}

// Prober is a Bus that can tell how current its listener is (the
// PostgreSQL bus's probes, docs/scale-out.md, "Pulls from memory"). With
// one, a node answers no-change pulls from memory and acknowledges its
// pushes only once their note is out and the lease has passed.
type Prober interface {
	Bus
	// Current reports whether a probe the bus sent itself less than
	// within before now has come back on its listener's current
	// connection (so every note published more than within before now
	// was handed to receive), and keeps the probes going while questions
	// come. now is a time.Now reading; without a monotonic one the bus
	// reads its own clock.
	Current(now time.Time, within time.Duration) bool
}

// MaxNotePayload bounds one published payload: under PostgreSQL's 8000-byte
// NOTIFY limit with room for the channel name.
const MaxNotePayload = 7900

// Defaults of the node options.
const (
	// DefaultPollEvery is how often a room with live subscribers or held
	// polls rechecks its board's version in the store, and how often a
	// node says it is alive.
	DefaultPollEvery = 3 * time.Second
	// DefaultPointerFlush is how often pointer positions go to the other
	// nodes: at most 10 notes a second per node, whatever the number of
	// pointers (the latest position of each wins).
	DefaultPointerFlush = 100 * time.Millisecond
	// DefaultLease is how long a node waits, after a push's note is on its
	// way, before it acknowledges the push, when its bus is a Prober; and,
	// less a margin (trusted), how recent a returned probe must be for a
	// pull to be answered from memory. It bounds what a push pays for
	// linearizable pulls on several nodes: long enough for a probe's round
	// trip under load (a few ms on a busy machine), short against a
	// person's patience.
	DefaultLease = 10 * time.Millisecond
	// publishRetry is the first wait before the publisher tries again
	// after a NOTIFY failed while acknowledgements wait for it (doubling
	// to publishRetryMax).
	publishRetry    = 10 * time.Millisecond
	publishRetryMax = time.Second
	// nodeSilence is how many PollEvery rounds a node may stay silent
	// before its connections are taken for gone.
	nodeSilence = 3
	// maxQueuedNotes bounds the notes waiting to be published (joins,
	// leaves, kicks, invalidations; pointers are bounded apart): past it
	// new ones are dropped, as the bus may drop them anyway.
	maxQueuedNotes = 4096
)

// Note kinds on the wire (the "k" field).
const (
	kindVersion    = "v"
	kindJoin       = "j"
	kindLeave      = "l"
	kindPointer    = "p"
	kindEditing    = "d"
	kindEvent      = "e"
	kindWho        = "w"
	kindKick       = "x"
	kindInvalidate = "i"
	kindAlive      = "a"
	kindBye        = "z"
	kindIdle       = "s"
	kindActive     = "u"
	kindView       = "vw"
	kindFollow     = "f"
	kindSummon     = "m"
)

// note is one item of a payload. Compact names keep a payload small; zero
// fields are left out.
type note struct {
	K     string  `json:"k"`
	Board string  `json:"b,omitempty"`
	V     int64   `json:"v,omitempty"`
	Conn  string  `json:"i,omitempty"`
	Email string  `json:"e,omitempty"`
	X     float64 `json:"x,omitempty"`
	Y     float64 `json:"y,omitempty"`
	Z     float64 `json:"z,omitempty"` // a view's or summon's zoom
	Kind  string  `json:"t,omitempty"`
	Key   string  `json:"q,omitempty"`
	// Row and Table name the row of a merge event (kindEvent: Kind is the
	// event's kind, V the version that lost, Key the changelog entry).
	Row   string `json:"r,omitempty"`
	Table string `json:"o,omitempty"`
}

// envelope is one payload: the sending node, its lease and its notes.
type envelope struct {
	Node string `json:"n"`
	// Lease is the sender's lease in nanoseconds, 0 for none (no prober,
	// the lease off, or a build from before leases): how long it waits
	// after a note before it acknowledges the push (peerLeases).
	Lease int64  `json:"l,omitempty"`
	Notes []note `json:"m"`
}

// nodes is the hub's side of the bus.
type nodes struct {
	h    *Hub
	bus  Bus
	id   string
	wake chan struct{} // buffered 1: notes are waiting
	ptrC chan struct{} // buffered 1: the pointer flush is due

	mu       sync.Mutex
	versions map[string]int64  // the latest committed version per board, to announce
	queue    []note            // joins, leaves, kicks, invalidations, who
	pointers map[string]note   // the latest position per connection
	ptrTimer *time.Timer       // armed while pointers wait
	seen     map[string]uint64 // other nodes by the round they were last heard in
	leases   map[string]int64  // other nodes' announced leases (envelope.Lease)
	round    uint64
	dropped  int
	// waiting are the acknowledgements the next successful flush
	// releases (Committed); retry the wait before the next try after a
	// failed one.
	waiting []ackWait
	retry   time.Duration
	stopped bool // the publisher has stopped: nothing more goes out

	// With a Prober: the lease, and whether the rooms have caught up with
	// everything committed before the listener's connection (a full
	// recheck after it succeeded); epoch counts the connections.
	prober Prober
	lease  time.Duration
	synced atomic.Uint64 // the epoch whose full recheck succeeded, 0 for none
	epoch  atomic.Uint64
	// short counts the nodes heard whose lease is shorter than this one's
	// (peerLeases): while any is, every no-change pull asks the store.
	short atomic.Int32

	done chan struct{}
}

// NewNodeID returns a random node ID (what -node-id defaults to).
func NewNodeID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startNodes joins the hub to its bus: rooms relay through it, and the
// publisher and the recheck timer start. Called by New when Options.Bus is
// set.
func (h *Hub) startNodes() {
	n := &nodes{
		h:        h,
		bus:      h.opts.Bus,
		id:       h.opts.NodeID,
		wake:     make(chan struct{}, 1),
		ptrC:     make(chan struct{}, 1),
		versions: map[string]int64{},
		pointers: map[string]note{},
		seen:     map[string]uint64{},
		leases:   map[string]int64{},
		done:     make(chan struct{}),
	}
	if p, ok := h.opts.Bus.(Prober); ok && h.opts.Lease > 0 {
		n.prober, n.lease = p, h.opts.Lease
	}
	h.nodes = n
	h.opts.Room.Relay = n
	go n.publish()
	n.bus.Listen(n.receive, n.resync)
	if h.opts.PollEvery > 0 {
		h.janitor.Go(func() {
			// Close waits for this goroutine: a recheck stuck on the store
			// ends with it.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-h.quit:
					cancel()
				case <-ctx.Done():
				}
			}()
			t := time.NewTicker(h.opts.PollEvery)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					h.Tick(ctx)
				case <-h.quit:
					return
				}
			}
		})
	}
}

// NodeID returns the node's ID on the bus ("" without a bus).
func (h *Hub) NodeID() string {
	if h.nodes == nil {
		return ""
	}
	return h.nodes.id
}

// Committed queues "board is at version" for the other nodes (rooms.Relay).
// With a Prober the channel it returns gives nil once a NOTIFY carrying
// the note (or a later version of the board) returned and the lease has
// passed since, or an error when the hub closed first; without one, nil:
// nobody answers pulls from memory, so nothing waits.
func (n *nodes) Committed(boardID string, version int64) <-chan error {
	var told chan error
	n.mu.Lock()
	if version > n.versions[boardID] {
		n.versions[boardID] = version
	}
	if n.prober != nil {
		told = make(chan error, 1)
		if n.stopped {
			told <- errNotPublished
		} else {
			n.waiting = append(n.waiting, ackWait{c: told, at: time.Now()})
		}
	}
	n.mu.Unlock()
	n.signal(n.wake)
	if told == nil {
		return nil
	}
	return told
}

// trusted is how recent a returned probe must be for a pull to be
// answered from memory: the lease less an eighth, so that clocks whose
// rates differ by up to 14 % (8/7) still keep the promise; offsets never
// matter, each node only measures intervals on its own monotonic clock
// (scale-out.md, "Pulls from memory").
func (n *nodes) trusted() time.Duration { return n.lease - n.lease/8 }

// Current reports whether the node has heard every note published more
// than the trusted time ago, its rooms caught up with what its listener
// missed before it connected (rooms.Relay).
func (n *nodes) Current(now time.Time) bool {
	return n.prober != nil && n.short.Load() == 0 && n.isSynced() && n.prober.Current(now, n.trusted())
}

// resync runs when the listener (re)connected: notes sent while it was
// away are lost, so every room rechecks its board's version in the store.
// Only when every read succeeded may pulls be answered from memory again
// (until then the timer's Tick retries the full recheck).
func (n *nodes) resync() {
	e := n.epoch.Add(1)
	n.fullRecheck(context.Background(), e)
}

// countShortLocked recounts the nodes heard with a lease shorter than this
// node's (n.mu held). The promise of a pull from memory holds only if the
// node that acknowledged a push waited at least as long as the puller
// trusts its probes: a node with a shorter lease (a -node-lease set apart,
// or a build from before leases during a rolling upgrade) turns this
// node's pulls from memory off until it leaves or changes.
func (n *nodes) countShortLocked() {
	var short int32
	for _, l := range n.leases {
		if time.Duration(l) < n.lease {
			short++
		}
	}
	n.short.Store(short)
}

// isSynced reports whether a full recheck succeeded since the listener's
// last (re)connect.
func (n *nodes) isSynced() bool {
	e := n.epoch.Load()
	return e != 0 && n.synced.Load() == e
}

// fullRecheck rechecks every running room and marks the node synced when
// every read succeeded and the listener did not reconnect meanwhile.
func (n *nodes) fullRecheck(ctx context.Context, epoch uint64) {
	// Marked for its own epoch only: a reconnect that comes between the
	// recheck and the mark moves the epoch on, and this mark then says
	// nothing of the new connection (isSynced compares them).
	if n.h.recheck(ctx, true) {
		n.synced.Store(epoch)
	}
}

// Presence queues a presence note for the other nodes (rooms.Relay).
// Pointers are coalesced per connection and sent every PointerFlush.
func (n *nodes) Presence(boardID string, p rooms.Note) {
	nt := note{Board: boardID, Conn: p.Presence.ID, Email: p.Presence.Email}
	switch p.Kind {
	case rooms.NoteJoin:
		nt.K = kindJoin
	case rooms.NoteLeave:
		nt.K = kindLeave
	case rooms.NoteWho:
		nt = note{K: kindWho, Board: boardID}
	case rooms.NoteEditing:
		nt.K, nt.Key = kindEditing, p.NoteID
	case rooms.NoteIdle:
		nt.K = kindIdle
	case rooms.NoteActive:
		nt.K = kindActive
	case rooms.NoteSummon:
		nt.K, nt.X, nt.Y, nt.Z = kindSummon, p.X, p.Y, p.Zoom
	case rooms.NoteFollow:
		nt.K = kindFollow
		if p.On {
			nt.V = 1
		}
	case rooms.NoteView:
		// Coalesced with the pointers: the latest view of each followed
		// connection wins.
		nt.K, nt.X, nt.Y, nt.Z = kindView, p.X, p.Y, p.Zoom
		n.mu.Lock()
		key := kindView + ":" + nt.Conn
		if _, ok := n.pointers[key]; ok || len(n.pointers) < maxQueuedNotes {
			n.pointers[key] = nt
		}
		if n.ptrTimer == nil {
			n.ptrTimer = time.AfterFunc(n.h.opts.PointerFlush, func() { n.signal(n.ptrC) })
		}
		n.mu.Unlock()
		return
	case rooms.NoteEvent:
		e := p.Event
		nt = note{K: kindEvent, Board: boardID, V: e.Version, Kind: e.Kind, Table: e.Table, Row: e.ID, Key: e.LogKey}
	case rooms.NotePointer:
		nt.K, nt.X, nt.Y = kindPointer, p.X, p.Y
		n.mu.Lock()
		if _, ok := n.pointers[nt.Conn]; ok || len(n.pointers) < maxQueuedNotes {
			n.pointers[nt.Conn] = nt
		}
		if n.ptrTimer == nil {
			n.ptrTimer = time.AfterFunc(n.h.opts.PointerFlush, func() { n.signal(n.ptrC) })
		}
		n.mu.Unlock()
		return
	default:
		return
	}
	n.mu.Lock()
	if nt.K == kindLeave {
		// A position sent after the leave would bring the connection back.
		delete(n.pointers, nt.Conn)
		delete(n.pointers, kindView+":"+nt.Conn)
	}
	n.enqueueLocked(nt)
	n.mu.Unlock()
	n.signal(n.wake)
}

// enqueue queues a note for the publisher.
func (n *nodes) enqueue(nt note) {
	n.mu.Lock()
	n.enqueueLocked(nt)
	n.mu.Unlock()
	n.signal(n.wake)
}

func (n *nodes) enqueueLocked(nt note) {
	if len(n.queue) >= maxQueuedNotes {
		n.dropped++
		return
	}
	n.queue = append(n.queue, nt)
}

func (n *nodes) signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// publish is the publisher goroutine: it packs what is waiting into as few
// payloads as fit and publishes them, one at a time, so a slow bus slows
// the notes (which coalesce meanwhile) and never a room.
func (n *nodes) publish() {
	defer close(n.done)
	for {
		var ptrs bool
		select {
		case <-n.wake:
		case <-n.ptrC:
			ptrs = true
		case <-n.h.quit:
			n.flush(false)
			n.failWaiting()
			return
		}
		n.flush(ptrs)
	}
}

// flush publishes the waiting notes, and the pointers too when ptrs.
func (n *nodes) flush(ptrs bool) {
	n.mu.Lock()
	batch := make([]note, 0, len(n.versions)+len(n.queue))
	for b, v := range n.versions {
		batch = append(batch, note{K: kindVersion, Board: b, V: v})
	}
	clear(n.versions)
	batch = append(batch, n.queue...)
	n.queue = n.queue[:0]
	if ptrs {
		for _, p := range n.pointers {
			batch = append(batch, p)
		}
		clear(n.pointers)
		n.ptrTimer = nil
	}
	dropped := n.dropped
	n.dropped = 0
	waiting := n.waiting
	n.waiting = nil
	n.mu.Unlock()
	if dropped > 0 {
		n.h.log.Warn("node notes dropped: the bus is behind", slog.Int("notes", dropped))
	}
	var failed bool
	for _, p := range pack(envelope{Node: n.id, Lease: int64(n.lease)}, batch, MaxNotePayload) {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		err := n.bus.Publish(ctx, p)
		cancel()
		if err != nil {
			// The others recheck on their timer; nothing is lost.
			n.h.log.Warn("publish node notes", slog.Int("bytes", len(p)), slog.Any("err", err))
			failed = true
		}
	}
	n.settle(batch, waiting, failed)
}

// settle releases the acknowledgements a flush carried: after the lease
// when it published everything, or else later: their version notes go
// back in the queue and the publisher tries again (it never acknowledges
// a push whose note may not have gone out). When the hub is closing there
// is no later: they get an error.
func (n *nodes) settle(batch []note, waiting []ackWait, failed bool) {
	if len(waiting) == 0 {
		return
	}
	if !failed {
		n.mu.Lock()
		n.retry = 0
		n.mu.Unlock()
		time.AfterFunc(n.lease, func() {
			for _, w := range waiting {
				w.c <- nil
			}
		})
		return
	}
	select {
	case <-n.h.quit:
		for _, w := range waiting {
			w.c <- errNotPublished
		}
		return
	default:
	}
	// A push does not wait for its note past maxNoteWait: while NOTIFY
	// fails (a full notification queue, a lost database) its client gets
	// an error it retries with the same idempotency key, whose replay
	// publishes again, instead of a request held for the whole outage.
	now := time.Now()
	kept := waiting[:0]
	for _, w := range waiting {
		if now.Sub(w.at) >= maxNoteWait {
			w.c <- errNoteStuck
			continue
		}
		kept = append(kept, w)
	}
	waiting = kept
	n.mu.Lock()
	for _, nt := range batch {
		if nt.K == kindVersion && nt.V > n.versions[nt.Board] {
			n.versions[nt.Board] = nt.V
		}
	}
	n.waiting = append(waiting, n.waiting...)
	n.retry = min(max(2*n.retry, publishRetry), publishRetryMax)
	wait := n.retry
	n.mu.Unlock()
	time.AfterFunc(wait, func() { n.signal(n.wake) })
}

// ackWait is a push's acknowledgement waiting for its note to go out.
type ackWait struct {
	c  chan error
	at time.Time // when it began to wait
}

// maxNoteWait bounds how long a push's acknowledgement waits for its note
// while publishing fails.
const maxNoteWait = 5 * time.Second

// errNoteStuck is what a push gets when its note could not be published
// within maxNoteWait: it was committed, and its retry is answered by
// replay.
var errNoteStuck = errors.New("node bus: the note of a commit could not be published in time")

// errNotPublished is what pushes waiting for their note get when the hub
// closed before it could be sent.
var errNotPublished = errors.New("node bus: the note of a commit could not be published before shutdown")

// publishTimeout bounds one Publish.
const publishTimeout = 5 * time.Second

// pack encodes notes into payloads of at most limit bytes each, in order.
// A note that does not fit in a payload of its own (it cannot: IDs and
// addresses are bounded) is left out.
func pack(env envelope, notes []note, limit int) [][]byte {
	env.Notes = []note{}
	head, _ := json.Marshal(env)
	head = head[:len(head)-2] // `{"n":"…","m":[` and the closing `]}` is added below
	var out [][]byte
	var buf []byte
	for _, nt := range notes {
		b, err := json.Marshal(nt)
		if err != nil {
			continue
		}
		if len(head)+len(b)+2 > limit {
			continue
		}
		if buf != nil && len(buf)+1+len(b)+2 > limit {
			out = append(out, append(buf, ']', '}'))
			buf = nil
		}
		if buf == nil {
			buf = append(make([]byte, 0, limit), head...)
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, b...)
	}
	if buf != nil {
		out = append(out, append(buf, ']', '}'))
	}
	return out
}

// receive takes a payload from the bus. Notes of this node, and notes for
// boards without a room here, are ignored: a room started later reads the
// store.
func (n *nodes) receive(payload []byte) {
	var env envelope
	if err := json.Unmarshal(payload, &env); err != nil || env.Node == "" {
		n.h.log.Warn("node note not understood", slog.Int("bytes", len(payload)))
		return
	}
	if env.Node == n.id {
		return
	}
	n.mu.Lock()
	_, known := n.seen[env.Node]
	n.seen[env.Node] = n.round
	if l, ok := n.leases[env.Node]; !ok || l != env.Lease {
		n.leases[env.Node] = env.Lease
		n.countShortLocked()
	}
	n.mu.Unlock()
	if !known {
		// A node new to this one, or back after it was taken for gone (a
		// stopped process that resumed): ask it who is connected to the
		// boards watched here, since its earlier joins were dropped.
		n.askWho()
	}
	for _, nt := range env.Notes {
		n.apply(env.Node, nt)
	}
}

// noteKinds maps the bus's presence kinds to the room's.
var noteKinds = map[string]rooms.NoteKind{
	kindJoin:    rooms.NoteJoin,
	kindLeave:   rooms.NoteLeave,
	kindPointer: rooms.NotePointer,
	kindEditing: rooms.NoteEditing,
	kindIdle:    rooms.NoteIdle,
	kindActive:  rooms.NoteActive,
	kindView:    rooms.NoteView,
	kindFollow:  rooms.NoteFollow,
	kindSummon:  rooms.NoteSummon,
}

// apply hands one note from another node to the room or hub it is about.
func (n *nodes) apply(from string, nt note) {
	switch nt.K {
	case kindVersion:
		if r := n.h.existing(nt.Board); r != nil {
			r.Advance(nt.V)
		}
	case kindJoin, kindLeave, kindPointer, kindEditing, kindIdle, kindActive, kindView, kindFollow, kindSummon:
		if r := n.h.existing(nt.Board); r != nil {
			r.Remote(rooms.Note{Kind: noteKinds[nt.K], Node: from, Presence: livewire.Presence{ID: nt.Conn, Email: nt.Email}, X: nt.X, Y: nt.Y, Zoom: nt.Z, On: nt.V == 1, NoteID: nt.Key})
		}
	case kindEvent, kindWho:
		n.applyToWatchedRoom(from, nt)
	case kindKick:
		n.h.kickLocal(nt.Board, nt.Email)
	case kindInvalidate:
		if f := n.h.opts.OnInvalidate; f != nil {
			f(nt.Kind, nt.Key)
		}
	case kindBye:
		n.forget(from)
	case kindAlive:
	}
}

// applyToWatchedRoom hands an event or a "who is here" question to the
// board's room, only if someone here watches it: nobody would see either.
func (n *nodes) applyToWatchedRoom(from string, nt note) {
	r := n.h.existing(nt.Board)
	if r == nil || r.Subscribers() == 0 {
		return
	}
	if nt.K == kindWho {
		r.Reannounce()
		return
	}
	r.Remote(rooms.Note{Kind: rooms.NoteEvent, Node: from, Event: livewire.Event{Kind: nt.Kind, Table: nt.Table, ID: nt.Row, Version: nt.V, LogKey: nt.Key}})
}

// askWho asks the other nodes who is connected to every board with live
// subscribers here.
func (n *nodes) askWho() {
	for _, r := range n.h.running() {
		if r.Subscribers() > 0 {
			n.enqueue(note{K: kindWho, Board: r.ID()})
		}
	}
}

// forget drops every connection of a node that left or went silent.
func (n *nodes) forget(node string) {
	n.mu.Lock()
	delete(n.seen, node)
	delete(n.leases, node)
	n.countShortLocked()
	n.mu.Unlock()
	for _, r := range n.h.running() {
		r.ForgetNode(node)
	}
}

// Tick is one round of the slow timer (every PollEvery): the node says it
// is alive, forgets nodes silent for several rounds, and rechecks the
// boards of rooms with live subscribers or held polls. Tests call it
// instead of waiting for the timer.
func (h *Hub) Tick(ctx context.Context) {
	if n := h.nodes; n != nil {
		n.enqueue(note{K: kindAlive})
		n.mu.Lock()
		n.round++
		var gone []string
		for node, r := range n.seen {
			if n.round-r > nodeSilence {
				gone = append(gone, node)
			}
		}
		n.mu.Unlock()
		for _, node := range gone {
			h.log.Info("node silent: its connections are taken for gone", slog.String("node", node))
			n.forget(node)
		}
		if n.prober != nil && !n.isSynced() {
			// The last resync could not read every board: try again, all of
			// them, before pulls are answered from memory.
			n.fullRecheck(ctx, n.epoch.Load())
			return
		}
	}
	h.Recheck(ctx, false)
}

// Recheck reads the version of boards from the store and advances their
// rooms to it: the boards of rooms with live subscribers or held polls
// (and, where pulls are answered from memory, pulled since the last
// round), or every running room when all (after the bus reconnects). One single-row
// read per board.
func (h *Hub) Recheck(ctx context.Context, all bool) {
	h.recheck(ctx, all)
}

// recheck is Recheck; it reports whether every read succeeded.
func (h *Hub) recheck(ctx context.Context, all bool) bool {
	ok := true
	// Pulls answered from memory: a note lost for good (its node died
	// between the commit and the NOTIFY, before acknowledging) would leave
	// a room nobody watches behind for as long as it is pulled, so the
	// rooms pulled since the last round are rechecked too.
	var pulled time.Time
	if h.nodes != nil && h.nodes.prober != nil && h.opts.PollEvery > 0 {
		pulled = h.opts.Now().Add(-h.opts.PollEvery)
	}
	for _, r := range h.running() {
		if !all && r.Subscribers() == 0 && r.Waiters() == 0 && (pulled.IsZero() || !r.ActiveSince(pulled)) {
			continue
		}
		v, err := h.store.CurrentVersion(ctx, r.ID())
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			h.log.Warn("recheck board version", slog.String("board", r.ID()), slog.Any("err", err))
			ok = false
			continue
		}
		r.Advance(v)
	}
	return ok
}

// Invalidate tells the other nodes that the record kind/key changed, so
// that their caches drop it (Options.OnInvalidate). Kinds in use:
// "session" (key: the session's storage key in hex; a logout ends the
// session's sockets on every node). The caller has already dropped its
// own copy. Without a bus it does nothing.
func (h *Hub) Invalidate(kind, key string) {
	if h.nodes != nil {
		h.nodes.enqueue(note{K: kindInvalidate, Kind: kind, Key: key})
	}
}

// HasRoom reports whether the board's room runs on this node (someone is
// connected here, or was a moment ago): what another node's change to the
// board can matter to here.
func (h *Hub) HasRoom(boardID string) bool { return h.existing(boardID) != nil }

// existing returns the board's running room, or nil: notes never start one.
func (h *Hub) existing(boardID string) *rooms.Room {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rooms[boardID]
}

// running returns the running rooms.
func (h *Hub) running() []*rooms.Room {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*rooms.Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		out = append(out, r)
	}
	return out
}

// failWaiting answers the acknowledgements still waiting when the
// publisher stops (a retry queued them after its last flush).
func (n *nodes) failWaiting() {
	n.mu.Lock()
	waiting := n.waiting
	n.waiting = nil
	n.stopped = true
	n.mu.Unlock()
	for _, w := range waiting {
		w.c <- errNotPublished
	}
}

// waitNodes waits for the publisher, which flushes what is waiting (the
// goodbye Close queued) and stops.
func (h *Hub) waitNodes() {
	if h.nodes != nil {
		<-h.nodes.done
	}
}
