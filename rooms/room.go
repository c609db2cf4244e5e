// Package rooms runs one actor goroutine per board. A room applies pushes in
// arrival order through the store (which owns the version), answers pulls,
// fans every applied change out to its subscribers without ever waiting for
// one, and tracks presence and pointers.
//
// A room's loop never touches a socket: its fan-out goroutine hands each
// message to the subscribers' Sinks, which never wait for the peer (the live
// transport writes to the socket when it can take the message at once and
// queues it otherwise); a subscriber whose queue is full is dropped with
// livewire.CloseResync. Fan-out is a hint, not the truth: a client that
// sees a gap in versions pulls ChangesSince from the store.
package rooms

import (
	"cmp"
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/ratelimit"
	"corkboard/transport/livewire"
)

// ErrClosed is returned by a room that has stopped (idle or closed) before
// it took the request; the hub retries on a fresh room.
var ErrClosed = &board.Error{Code: board.EUNAVAILABLE, Message: "The board's room has stopped; retry."}

// errShuttingDown answers pushes still queued when the room is closed.
var errShuttingDown = board.Errorf(board.EUNAVAILABLE, "The server is shutting down; retry the push.")

// Defaults of Options.
const (
	DefaultPointerInterval = 50 * time.Millisecond // at most 20 pointer updates/s per connection
	DefaultMaxBatch        = 256
	// DefaultPushRate and DefaultPushBurst bound the pushes of one live
	// connection: 10 a second, 20 at once. A person editing sends a few a
	// second at most (a client batches a drag into one push).
	DefaultPushRate  = 10
	DefaultPushBurst = 20
)

// Options tune a room. Zero fields take the defaults.
type Options struct {
	// PointerInterval is the least time between two pointer updates of one
	// connection; faster updates are coalesced (the latest position wins).
	PointerInterval time.Duration
	// MaxBatch is how many queued pushes one commit may apply together.
	MaxBatch int
	// PushRate is how many pushes a second one connection may make over
	// time (Subscriber.AllowPush), PushBurst how many at once.
	PushRate  float64
	PushBurst int
	// Now is the clock (idle tracking, pointer throttling); nil is time.Now.
	Now func() time.Time
	// Logger receives the room's warnings; nil is slog.Default().
	Logger *slog.Logger
	// Observer is told of commits, pulls and drops (metrics); nil tells no one.
	Observer Observer
	// Relay, when set, carries what the room tells the rooms of the same
	// board on other nodes (nodes.go); nil on a single node. With a Relay
	// other nodes commit to the store too, so a pull or long poll that
	// would find nothing new asks the store for the board's version first
	// (one indexed read); without one it is answered from memory.
	Relay Relay
}

func (o Options) withDefaults() Options {
	if o.PointerInterval <= 0 {
		o.PointerInterval = DefaultPointerInterval
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.PushRate <= 0 {
		o.PushRate = DefaultPushRate
	}
	if o.PushBurst <= 0 {
		o.PushBurst = DefaultPushBurst
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return o
}

// PullResult answers a pull: Changes is nil when nothing changed after the
// client's version (never for since 0, a full sync), and the answer is then
// {serverVersion} alone.
type PullResult struct {
	ServerVersion int64
	Changes       *board.Changes
}

// Welcome is what a new subscriber learns atomically with joining: the
// version after which every change reaches its queue, and who else is here.
type Welcome struct {
	ServerVersion int64
	Present       []livewire.Presence
}

type pushReply struct {
	version  int64
	replayed bool
	err      error
}

type pushReq struct {
	ctx    context.Context
	in     persist.PushInput
	origin *Subscriber // nil for REST pushes
	msgID  string      // the live push's id, echoed in the ack
	reply  chan pushReply
}

type joinReq struct {
	sub   *Subscriber
	reply chan Welcome
}

type pointerReq struct {
	sub  *Subscriber
	x, y float64
}

type editReq struct {
	sub    *Subscriber
	noteID string
}

type leaveReq struct {
	sub  *Subscriber
	done chan struct{}
}

type kickReq struct {
	email, reason string
}

type idleReq struct {
	cutoff time.Time
	reply  chan bool
}

// commit is one store call's outcome, handed back to the loop.
type commit struct {
	reqs    []*pushReq
	applied []persist.Applied
	msgs    []*Message // changes message per request; nil when nothing to fan out
	err     error
	// base is the room's version when the store call started; catchUp,
	// when set, is everything after base (another node committed in
	// between, nodes.go) and is sent instead of msgs.
	base    int64
	catchUp *board.Changes
	// gapped: another node committed in between and the read that would
	// bridge it failed; the batch's messages are not sent (subscribers
	// would see a gap) and the room catches up from base instead.
	gapped bool
}

// Room is one board's actor. Build it with Start; stop it with Close.
type Room struct {
	id    string
	store persist.SyncStore
	opts  Options
	log   *slog.Logger

	pushC    chan *pushReq
	joinC    chan joinReq
	leaveC   chan leaveReq
	pointerC chan pointerReq
	editC    chan editReq
	kickC    chan kickReq
	idleC    chan idleReq
	waitC    chan *Waiter
	unwaitC  chan unwaitReq
	commitC  chan *commit
	nodeC    chan func()   // work from other nodes, run by the loop (nodes.go)
	quit     chan struct{} // closed by Close
	done     chan struct{} // closed when the loop has exited

	closeOnce  sync.Once
	closing    atomic.Bool
	version    atomic.Int64 // last committed version; written by the loop only
	lastActive atomic.Int64 // UnixNano of the last request
	subCount   atomic.Int32
	waitCount  atomic.Int32

	// Owned by the loop goroutine.
	subs       []*Subscriber // in no particular order; a subscriber's index is its pos
	seq        uint64
	pending    []*pushReq
	committing bool
	dropped    []*Subscriber // subscribers whose sinks were full, to drop
	fanStopped bool
	waiters    []*Waiter                 // long polls, all waiting on the current version; a waiter's index is its pos
	target     int64                     // the highest version other nodes reported; above version, a catch-up is due
	remote     map[string]remotePresence // connections on other nodes, by ID

	// The fan-out goroutine (fanOut) writes to the subscribers' sinks; the
	// loop hands it each message with the subscribers to send it to and
	// learns from dropC whose sinks were full.
	fanC    chan fanJob
	dropC   chan *Subscriber
	fanDone chan struct{}
}

// Start loads the board's version from the store and starts its room.
// ENOTFOUND for an unclaimed board.
func Start(ctx context.Context, store persist.SyncStore, boardID string, opts Options) (*Room, error) {
	v, err := store.CurrentVersion(ctx, boardID)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	r := &Room{
		id:       boardID,
		store:    store,
		opts:     opts,
		log:      opts.Logger.With(slog.String("board", boardID)),
		pushC:    make(chan *pushReq),
		joinC:    make(chan joinReq),
		leaveC:   make(chan leaveReq),
		pointerC: make(chan pointerReq),
		editC:    make(chan editReq),
		kickC:    make(chan kickReq),
		idleC:    make(chan idleReq),
		waitC:    make(chan *Waiter),
		unwaitC:  make(chan unwaitReq),
		commitC:  make(chan *commit),
		nodeC:    make(chan func()),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		fanC:     make(chan fanJob, fanOutBacklog),
		dropC:    make(chan *Subscriber),
		fanDone:  make(chan struct{}),
	}
	r.version.Store(v)
	r.touch()
	go r.fanOut()
	go r.loop()
	return r, nil
}

// ID returns the board ID.
func (r *Room) ID() string { return r.id }

// Version returns the last version the room committed or loaded.
func (r *Room) Version() int64 { return r.version.Load() }

// Subscribers returns how many subscribers the room has.
func (r *Room) Subscribers() int { return int(r.subCount.Load()) }

// Done is closed when the room's goroutine has exited.
func (r *Room) Done() <-chan struct{} { return r.done }

func (r *Room) touch() { r.lastActive.Store(r.opts.Now().UnixNano()) }

// Push applies p through the store and fans the change out; it returns the
// new version (or, with replayed, the version an earlier push with the same
// idempotency key produced). Pushes to one board are applied in the order
// the room receives them. A push whose ctx ends before its commit starts is
// not applied; once the commit has started it completes even if ctx ends.
func (r *Room) Push(ctx context.Context, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	return r.push(ctx, &pushReq{in: persist.PushInput{Push: p, IdempotencyKey: idemKey}})
}

func (r *Room) push(ctx context.Context, req *pushReq) (int64, bool, error) {
	if r.closing.Load() {
		return 0, false, ErrClosed
	}
	req.ctx = ctx
	req.reply = make(chan pushReply, 1)
	select {
	case r.pushC <- req:
	case <-r.done:
		return 0, false, ErrClosed
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	// The loop answers every push it took, even when it shuts down.
	select {
	case rep := <-req.reply:
		return rep.version, rep.replayed, rep.err
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}

// Pull answers a pull. When since equals the room's version it answers at
// once without touching storage on a single node; with several (a Relay)
// it first reads the board's version from the store, since another node
// may have acknowledged a push whose note has not come yet, and reads the
// changes when the store is ahead (the room catches up too). Otherwise it
// reads the store in the caller's goroutine, so a large pull never holds
// up the room. since 0 is a full sync and always gets the full shape, even
// from a board still at version 0 (its header and empty lists).
func (r *Room) Pull(ctx context.Context, since int64) (*PullResult, error) {
	if since < 0 {
		return nil, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	if r.closing.Load() {
		return nil, ErrClosed
	}
	r.touch()
	var start time.Time
	if v := r.version.Load(); since == v && since != 0 {
		if !r.shared() {
			// Not timed: the cheapest pull would pay more for two clock reads
			// than for its answer.
			r.opts.Observer.Pulled(0, false, nil)
			return &PullResult{ServerVersion: v}, nil
		}
		start = time.Now()
		sv, err := r.store.CurrentVersion(ctx, r.id)
		if err != nil || sv <= v {
			r.opts.Observer.Pulled(time.Since(start), true, err)
			if err != nil {
				return nil, err
			}
			return &PullResult{ServerVersion: v}, nil
		}
		r.storeSaid(sv)
	} else {
		start = time.Now()
	}
	ch, err := r.store.ChangesSince(ctx, r.id, since)
	r.opts.Observer.Pulled(time.Since(start), true, err)
	if err != nil {
		return nil, err
	}
	r.storeSaid(ch.ServerVersion)
	if since == ch.ServerVersion && since != 0 && !ch.Reset {
		return &PullResult{ServerVersion: ch.ServerVersion}, nil
	}
	return &PullResult{ServerVersion: ch.ServerVersion, Changes: ch}, nil
}

// PullTo answers a pull as Pull does, but streams the answer: fn gets
// its parts (persist.SyncStore.ScanChangesSince) as the store reads them,
// the header first, so the answer is never held whole. With nothing new
// after since, fn is not called and changed is false. fn runs in the
// caller's goroutine inside the store's read transaction; its error stops
// the read and comes back as it is.
func (r *Room) PullTo(ctx context.Context, since int64, fn func(p *persist.ChangePart) error) (serverVersion int64, changed bool, err error) {
	if since < 0 {
		return 0, false, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	if r.closing.Load() {
		return 0, false, ErrClosed
	}
	r.touch()
	if v := r.version.Load(); since == v && since != 0 && !r.shared() {
		r.opts.Observer.Pulled(0, false, nil)
		return v, false, nil
	}
	start := time.Now()
	if v := r.version.Load(); since == v && since != 0 {
		// With several nodes, "nothing new" is confirmed with the store, as
		// in Pull; when the store is ahead the read below streams it.
		sv, err := r.store.CurrentVersion(ctx, r.id)
		if err != nil || sv <= v {
			r.opts.Observer.Pulled(time.Since(start), true, err)
			return v, false, err
		}
		r.storeSaid(sv)
	}
	err = r.store.ScanChangesSince(ctx, r.id, since, func(p *persist.ChangePart) error {
		if p.Kind == persist.PartHeader {
			h := p.Header
			serverVersion = h.ServerVersion
			r.storeSaid(h.ServerVersion)
			if since == h.ServerVersion && since != 0 && !h.Reset {
				return nil // the header alone: nothing new
			}
			changed = true
		}
		return fn(p)
	})
	r.opts.Observer.Pulled(time.Since(start), true, err)
	if err != nil {
		return 0, false, err
	}
	return serverVersion, changed, nil
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
		sink:    m.Sink,
		pushes:  ratelimit.NewBucket(r.opts.PushRate, r.opts.PushBurst),
		user:    m.UserPushes,
		pos:     -1,
		done:    make(chan struct{}),
	}
	req := joinReq{sub: s, reply: make(chan Welcome, 1)}
	select {
	case r.joinC <- req:
	case <-r.done:
		return nil, Welcome{}, ErrClosed
	case <-ctx.Done():
		return nil, Welcome{}, ctx.Err()
	}
	// The loop replies at once, without waiting on anything.
	return s, <-req.reply, nil
}

// Kick drops every subscriber of email with livewire.CloseForbidden (its access was
// withdrawn).
func (r *Room) Kick(email, reason string) {
	select {
	case r.kickC <- kickReq{email: email, reason: reason}:
	case <-r.done:
	}
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

// StopIfIdle stops the room when it has no subscribers, no waiters, no
// pushes in flight and no request since cutoff; it reports whether the
// room is stopped. Requests that race with the stop get ErrClosed.
func (r *Room) StopIfIdle(cutoff time.Time) bool {
	select {
	case <-r.done:
		return true
	default:
	}
	if r.subCount.Load() > 0 || r.waitCount.Load() > 0 || r.lastActive.Load() >= cutoff.UnixNano() {
		return false
	}
	req := idleReq{cutoff: cutoff, reply: make(chan bool, 1)}
	select {
	case r.idleC <- req:
		if !<-req.reply {
			return false
		}
		<-r.done // stopped means its goroutines have ended
		return true
	case <-r.done:
		return true
	}
}

// Close stops the room: the push being committed finishes and is fanned
// out, pushes still queued fail with EUNAVAILABLE, every subscriber is
// dropped with livewire.CloseGoingAway and every waiter is answered with
// WaitClosed. It waits for the room's goroutine or ctx. Calling it twice
// is safe.
func (r *Room) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.closing.Store(true)
		close(r.quit)
	})
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Room) loop() {
	defer close(r.done)
	defer r.stopFanOut()
	for {
		// Close first: once it is called the room takes no more work, so a
		// queued push fails with errShuttingDown even when the commit ahead
		// of it ends at the same moment (select would pick either).
		select {
		case <-r.quit:
			r.shutdown()
			return
		default:
		}
		select {
		case s := <-r.dropC:
			r.dropped = append(r.dropped, s)
		case req := <-r.pushC:
			r.touch()
			r.pending = append(r.pending, req)
			r.startCommit()
		case c := <-r.commitC:
			r.finishCommit(c)
			r.startCommit()
		case req := <-r.joinC:
			r.touch()
			r.join(req)
		case req := <-r.leaveC:
			r.touch()
			r.remove(req.sub, 0, "")
			close(req.done)
		case req := <-r.pointerC:
			r.sendPointer(req)
		case req := <-r.editC:
			r.sendEditing(req)
		case f := <-r.nodeC:
			f()
		case req := <-r.kickC:
			r.kick(req)
		case w := <-r.waitC:
			r.touch()
			r.addWaiter(w)
		case req := <-r.unwaitC:
			r.touch()
			r.removeWaiter(req.w)
			close(req.done)
		case req := <-r.idleC:
			if r.stopIfIdle(req) {
				return
			}
		case <-r.quit:
			r.shutdown()
			return
		}
		r.flushDropped()
	}
}

// sendPointer tells the others where a subscriber's pointer is.
func (r *Room) sendPointer(req pointerReq) {
	if !r.has(req.sub) {
		return
	}
	r.broadcast(mustEncode(livewire.PointerMessage{Type: livewire.TypePointer, Presence: req.sub.presence(), X: req.x, Y: req.y}), req.sub)
	r.relay(Note{Kind: NotePointer, Presence: req.sub.presence(), X: req.x, Y: req.y})
}

// sendEditing tells the others which note a subscriber opened in the
// editor ("" when it closed it), when that changed.
func (r *Room) sendEditing(req editReq) {
	if !r.has(req.sub) || req.sub.editing == req.noteID {
		return
	}
	req.sub.editing = req.noteID
	r.broadcast(mustEncode(livewire.EditingMessage{Type: livewire.TypeEditing, Presence: req.sub.presence(), NoteID: req.noteID}), req.sub)
	r.relay(Note{Kind: NoteEditing, Presence: req.sub.presence(), NoteID: req.noteID})
}

// kick drops every subscriber and waiter of one person.
func (r *Room) kick(req kickReq) {
	for _, s := range slices.Clone(r.subs) { // remove reorders r.subs
		if s.email == req.email {
			r.remove(s, livewire.CloseForbidden, req.reason)
		}
	}
	r.kickWaiters(req.email)
}

// stopIfIdle answers whether the room has been idle since req.cutoff (no
// subscriber, waiter or push, nothing committing); an idle room stops
// taking work, and the loop ends when this reports true.
func (r *Room) stopIfIdle(req idleReq) bool {
	idle := len(r.subs) == 0 && len(r.waiters) == 0 && len(r.pending) == 0 && !r.committing && r.lastActive.Load() < req.cutoff.UnixNano()
	if idle {
		r.closing.Store(true)
	}
	req.reply <- idle
	return idle
}

// shutdown finishes the commit in flight, fails queued pushes, answers
// every waiter with WaitClosed and drops every subscriber with
// livewire.CloseGoingAway.
func (r *Room) shutdown() {
	if r.committing {
		r.finishCommit(<-r.commitC)
	}
	for _, req := range r.pending {
		req.reply <- pushReply{err: errShuttingDown}
	}
	r.pending = nil
	r.answerWaiters(WaitClosed)
	// What was fanned out before the shutdown reaches the sinks before the
	// subscribers are told to go.
	r.stopFanOut()
	for _, s := range r.subs {
		s.pos = -1
		s.close(livewire.CloseGoingAway, "server shutting down")
	}
	r.subs = nil
	r.subCount.Store(0)
}

// startCommit hands the queued pushes to the store in a goroutine of their
// own, so that the loop keeps serving pulls, joins and pointers during the
// fsync, and so that rooms of different boards reach bbolt's Batch together
// and share one fsync. Pushes that queue up meanwhile go in the next commit,
// together: one board's throughput is not one fsync per push.
func (r *Room) startCommit() {
	if r.committing {
		return
	}
	if len(r.pending) == 0 {
		r.startCatchUp()
		return
	}
	var batch []*pushReq
	n := 0
	for _, req := range r.pending {
		if len(batch) == r.opts.MaxBatch {
			break
		}
		n++
		if err := req.ctx.Err(); err != nil {
			req.reply <- pushReply{err: err} // the caller gave up before anything was written
			continue
		}
		batch = append(batch, req)
	}
	r.pending = slices.Delete(r.pending, 0, n)
	if len(batch) == 0 {
		return
	}
	r.committing = true
	go r.commit(batch, r.version.Load())
}

func (r *Room) commit(batch []*pushReq, base int64) {
	c := &commit{reqs: batch, base: base}
	in := make([]persist.PushInput, len(batch))
	for i, req := range batch {
		in[i] = req.in
	}
	// Not the requests' contexts: several requests share this write, and a
	// commit once started must finish so that versions stay consecutive
	// with what subscribers were sent.
	start := time.Now()
	c.applied, c.err = r.store.ApplyPushes(context.Background(), r.id, in)
	r.opts.Observer.Committed(len(batch), time.Since(start), c.err)
	if c.err == nil {
		observeMerges(r.opts.Observer, c.applied)
	}
	if c.err == nil {
		r.bridgeGap(c)
		c.msgs = make([]*Message, len(batch))
		// Encoded once here, off the loop, and shared by every subscriber;
		// not at all on a board nobody watches (finishCommit encodes it if
		// someone joined meanwhile).
		if r.subCount.Load() > 0 {
			for i := range c.applied {
				c.msgs[i] = r.encodeChange(batch[i], c.applied[i])
			}
		}
	}
	r.commitC <- c
}

// encodeChange encodes the changes message of one applied push; nil when
// there is nothing to send.
func (r *Room) encodeChange(req *pushReq, a persist.Applied) *Message {
	if a.Changes == nil {
		return nil
	}
	from := ""
	if req.origin != nil {
		from = req.origin.id
	}
	msg, err := encodePushChanges(a, from)
	if err != nil {
		r.log.Error("encode change; subscribers will see a gap and pull", slog.Int64("version", a.Version), slog.Any("err", err))
		return nil
	}
	return NewChangesMessage(msg, a.Version)
}

func (r *Room) finishCommit(c *commit) {
	r.committing = false
	before := r.version.Load()
	own := r.finishCatchUp(c)
	for i, req := range c.reqs {
		own = max(own, r.answerPush(c, i, req))
	}
	if r.version.Load() != before {
		r.answerWaiters(WaitPassed)
	}
	if own > 0 && r.opts.Relay != nil {
		r.opts.Relay.Committed(r.id, own)
	}
	if c.err != nil && len(c.reqs) > 0 {
		r.log.Error("commit failed", slog.Int("pushes", len(c.reqs)), slog.Any("err", c.err))
	}
}

// answerPush answers the i-th push of a finished commit: it fans its
// change and merge events out, acks it on its connection and replies to
// its caller. It returns the push's version when the push changed the
// board (0 otherwise), for the relay.
func (r *Room) answerPush(c *commit, i int, req *pushReq) int64 {
	if c.err != nil {
		req.reply <- pushReply{err: c.err}
		return 0
	}
	a := c.applied[i]
	if a.Err != nil {
		req.reply <- pushReply{err: a.Err}
		return 0
	}
	var own int64
	if a.Changes != nil {
		own = a.Version
	}
	newer := r.advanceTo(c, a)
	eventsSent := newer && c.catchUp == nil && r.sendChange(req, a, c.msgs[i])
	r.sendEvents(a.Events, eventsSent)
	if req.origin != nil && r.has(req.origin) {
		// The ack goes through the pusher's queue so that it arrives in
		// version order with the changes of others.
		r.deliver(req.origin, mustEncode(livewire.Ack{Type: livewire.TypeAck, ID: req.msgID, ServerVersion: a.Version, Replayed: a.Replayed}))
	}
	req.reply <- pushReply{version: a.Version, replayed: a.Replayed}
	return own
}

// advanceTo moves the room's version to the applied push's, and reports
// whether the push is new to the subscribers. It is not when another
// node's commit after it already reached them (a note moved the version
// meanwhile): sending it would take their version back. Nor when the
// commit found a gap: the catch-up from base sends this push with what
// another node committed before it, in order.
func (r *Room) advanceTo(c *commit, a persist.Applied) bool {
	newer := a.Version > r.version.Load()
	if c.gapped {
		r.target = max(r.target, a.Version)
		return false
	}
	if newer {
		r.version.Store(a.Version)
	}
	return newer
}

// sendChange fans a new push's changes message out (msg, or encoded now
// when the commit had none and someone listens), and reports whether it
// went.
func (r *Room) sendChange(req *pushReq, a persist.Applied, msg *Message) bool {
	if msg == nil && len(r.subs) == 0 {
		return false
	}
	if msg == nil {
		msg = r.encodeChange(req, a)
	}
	if msg == nil {
		return false
	}
	// A merged push's rows are not what its connection sent: it gets them
	// too, before its ack.
	skip := req.origin
	if a.Merged > 0 {
		skip = nil
	}
	r.broadcast(msg, skip)
	return true
}

// sendEvents sends a push's merge events: alone where its own changes
// message did not carry them (sent false: a catch-up from another node's
// commit carried its rows), and to the other nodes' subscribers always.
func (r *Room) sendEvents(events []persist.MergeEvent, sent bool) {
	evs := wireEvents(events)
	if len(evs) == 0 {
		return
	}
	if !sent {
		r.broadcast(mustEncode(livewire.EventsMessage{Type: livewire.TypeEvents, Events: evs}), nil)
	}
	for _, e := range evs {
		r.relay(Note{Kind: NoteEvent, Event: e})
	}
}

// join registers a subscriber and tells the others.
func (r *Room) join(req joinReq) {
	present := slices.Clone(r.subs)
	slices.SortFunc(present, func(a, b *Subscriber) int { return cmp.Compare(a.seq, b.seq) })
	w := Welcome{ServerVersion: r.version.Load(), Present: make([]livewire.Presence, len(present))}
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
	r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeJoin, Presence: req.sub.presence()}), req.sub)
	if first {
		// Who is here on other nodes: their rooms answer with joins.
		r.relay(Note{Kind: NoteWho})
	}
	r.relay(Note{Kind: NoteJoin, Presence: req.sub.presence()})
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
	r.broadcast(mustEncode(livewire.PresenceMessage{Type: livewire.TypeLeave, Presence: s.presence()}), nil)
	r.relay(Note{Kind: NoteLeave, Presence: s.presence()})
}

// fanOutBacklog is how many messages the loop may hand the fan-out
// goroutine before waiting for it: the fan-out is CPU work (non-blocking
// writes), so a backlog means the CPU is short, and the room slows down
// with it rather than queueing without bound.
const fanOutBacklog = 64

// fanJob is one message for some of the room's subscribers.
type fanJob struct {
	msg  *Message
	subs []*Subscriber // a snapshot: who was in the room when msg was made
	skip *Subscriber
}

// broadcast sends msg to every subscriber but skip.
func (r *Room) broadcast(msg *Message, skip *Subscriber) {
	if len(r.subs) == 0 || len(r.subs) == 1 && r.subs[0] == skip {
		return
	}
	r.handOver(fanJob{msg: msg, subs: slices.Clone(r.subs), skip: skip})
}

// deliver sends msg to s alone.
func (r *Room) deliver(s *Subscriber, msg *Message) {
	r.handOver(fanJob{msg: msg, subs: []*Subscriber{s}})
}

// handOver gives job to the fan-out goroutine, taking its reports of full
// sinks meanwhile (it may be waiting to report one).
func (r *Room) handOver(job fanJob) {
	for {
		select {
		case r.fanC <- job:
			return
		case s := <-r.dropC:
			r.dropped = append(r.dropped, s)
		}
	}
}

// fanOut is the room's fan-out goroutine: it sends each message to its
// subscribers' sinks, in the order the loop handed them over, so every
// subscriber gets its messages in order. Sinks never wait for a peer (the
// live transport writes to a socket only when it can take the message at
// once, and queues otherwise), so neither does the room; the loop itself
// never touches a sink. A full sink is reported to the loop, which drops
// its subscriber.
//
// Sending is a socket write per subscriber, so a message for many
// subscribers is split between goroutines, one per CPU: the last
// subscriber is reached sooner. Each sink is still called from one
// goroutine at a time and in order: the next message waits for every part.
func (r *Room) fanOut() {
	defer close(r.fanDone)
	for job := range r.fanC {
		for _, s := range job.send() {
			r.dropC <- s // the loop always takes it: in its select, in handOver or in stopFanOut
		}
	}
}

// send sends the job's message and returns the subscribers whose sinks were
// full.
func (j fanJob) send() []*Subscriber {
	parts := min(runtime.GOMAXPROCS(0), len(j.subs)/fanOutPart)
	if parts <= 1 {
		return sendAll(nil, j.subs, j.msg, j.skip)
	}
	size := (len(j.subs) + parts - 1) / parts
	full := make([][]*Subscriber, parts)
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { full[i] = sendAll(nil, j.subs[i*size:min((i+1)*size, len(j.subs))], j.msg, j.skip) })
	}
	full[0] = sendAll(nil, j.subs[:size], j.msg, j.skip)
	wg.Wait()
	return slices.Concat(full...)
}

// fanOutPart is the least number of subscribers worth a goroutine of their
// own in a fan-out.
const fanOutPart = 128

// sendAll sends msg to subs but skip and appends those whose sinks were full
// to full.
func sendAll(full, subs []*Subscriber, msg *Message, skip *Subscriber) []*Subscriber {
	for _, s := range subs {
		if s != skip && !s.sink.Send(msg) {
			full = append(full, s)
		}
	}
	return full
}

// stopFanOut lets the fan-out goroutine finish what it was handed and waits
// for it. Called by the loop only; calling it twice is safe.
func (r *Room) stopFanOut() {
	if r.fanStopped {
		return
	}
	r.fanStopped = true
	close(r.fanC)
	for {
		select {
		case s := <-r.dropC:
			r.dropped = append(r.dropped, s)
		case <-r.fanDone:
			return
		}
	}
}

// flushDropped drops the subscribers whose sinks were full. Telling the
// others that one left may fill more queues; the loop ends because each
// round removes a subscriber.
func (r *Room) flushDropped() {
	for i := 0; i < len(r.dropped); i++ {
		if s := r.dropped[i]; r.has(s) {
			r.log.Info("subscriber dropped: queue full", slog.String("conn", s.id), slog.String("email", s.email))
			r.opts.Observer.SubscriberDropped()
			r.remove(s, livewire.CloseResync, "resync: pull and reconnect")
		}
	}
	clear(r.dropped)
	r.dropped = r.dropped[:0]
}

func (r *Room) has(s *Subscriber) bool { return s.pos >= 0 }
