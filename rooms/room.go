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
//
// A room has two halves. What it does on one node reads on its own: the
// loop and its requests (room.go), commits (commit.go), pulls (pull.go),
// subscribers and presence (presence.go), long polls (waiter.go) and the
// fan-out (fanout.go). What several nodes add sits behind the peers
// interface (peers.go: nothing on one node; with several, the catch-up
// with other nodes' commits from the store) and in nodes.go (the notes a
// room exchanges with the rooms of its board on other nodes).
package rooms

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"corkboard/board"
	"corkboard/persist"
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
	// AfterFunc runs f after d on a goroutine of its own: the presence
	// tick, the idle sweep and the view throttle. nil is time.AfterFunc;
	// tests fire them by hand.
	AfterFunc func(d time.Duration, f func())
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
	// Stages, when set, is given the stage timeline of every changes
	// message a push fans out (stages.go); nil records nothing and reads
	// no clock for it.
	Stages StageRecorder
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
	if o.AfterFunc == nil {
		o.AfterFunc = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return o
}

// Room is one board's actor. Build it with Start; stop it with Close.
//
// Its loop owns the board's version, subscribers and long polls, and
// takes work from four channels, each with one purpose: reqC, what callers
// ask (a request each); commitC, the store's answers to the commit in
// flight; fan.dropC, the fan-out shards' reports of full sinks; quit,
// Close.
type Room struct {
	id    string
	store persist.SyncStore
	opts  Options
	log   *slog.Logger
	// peers is what the rooms of the board on other nodes add (peers.go):
	// nothing on one node.
	peers peers

	reqC    chan request
	commitC chan *commit
	quit    chan struct{} // closed by Close
	done    chan struct{} // closed when the loop has exited

	closeOnce sync.Once
	closing   atomic.Bool
	version   atomic.Int64 // last committed version; written by the loop only
	// noted is the highest version the other nodes' notes, the rechecks
	// and the pulls' store reads told the room of (Advance): while it is
	// above version, a catch-up is on its way and a pull must not be
	// answered from memory. Written when told, before the loop hears.
	noted      atomic.Int64
	lastActive atomic.Int64 // UnixNano of the last request
	subCount   atomic.Int32
	waitCount  atomic.Int32

	// Owned by the loop goroutine.
	subs       []*Subscriber // in no particular order; a subscriber's index is its pos
	seq        uint64
	pending    []*pushReq
	released   chan struct{} // closed once the last commit's held answers went out (commit.go)
	committing bool          // a commit or a catch-up is in flight: its answer comes on commitC
	dropped    []*Subscriber // subscribers whose sinks were full, to drop
	stopped    bool          // an idle stop was granted: the loop ends
	waiters    []*Waiter     // long polls, all waiting on the current version; a waiter's index is its pos
	// Who is here (here.go): every connection shown, this node's and
	// the others', by ID and in ID order; the changes of the current
	// tick; whether the tick and the idle sweep are armed; how many of
	// the connections are other nodes'.
	here          map[string]*here
	order         []string
	batch         presenceBatch
	presenceArmed bool
	sweepArmed    bool
	remoteCount   int

	// The fan-out's shards (fanout.go) write to the subscribers' sinks; the
	// loop hands them each message with the subscribers to send it to and
	// learns from fan.dropC whose sinks were full.
	fan fanOut

	// confirm is the version check pulls share on several nodes (confirm.go).
	confirm confirmer
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
		id:      boardID,
		store:   store,
		opts:    opts,
		log:     opts.Logger.With(slog.String("board", boardID)),
		reqC:    make(chan request),
		commitC: make(chan *commit),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	r.peers = newPeers(r, opts.Relay)
	r.version.Store(v)
	r.touch()
	r.startFanOut()
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

// touch notes the room's activity and returns the clock's reading: the
// loop reads its clock once per request it takes.
func (r *Room) touch() time.Time {
	now := r.opts.Now()
	r.lastActive.Store(now.UnixNano())
	return now
}

// request is something a caller asks of the room: a push, a join, a
// leave, a pointer, a wait... serve runs on the loop, which owns
// everything it touches; a request carries its reply channel when it has
// an answer.
type request interface {
	serve(r *Room)
}

// loopFunc is work run by the loop that needs no type of its own (the
// notes of other nodes, SendTo).
type loopFunc func()

func (f loopFunc) serve(*Room) { f() }

// onLoop runs f on the room's loop; false when the room has stopped.
func (r *Room) onLoop(f func()) bool {
	select {
	case r.reqC <- loopFunc(f):
		return true
	case <-r.done:
		return false
	}
}

// idleReq asks the loop to stop if the room has been idle since cutoff.
type idleReq struct {
	cutoff time.Time
	reply  chan bool
}

// serve answers whether the room has been idle since cutoff (no
// subscriber, waiter or push, nothing committing); an idle room stops
// taking work, and the loop ends.
func (req idleReq) serve(r *Room) {
	idle := len(r.subs) == 0 && len(r.waiters) == 0 && len(r.pending) == 0 && !r.committing && r.lastActive.Load() < req.cutoff.UnixNano()
	if idle {
		r.closing.Store(true)
		r.stopped = true
	}
	req.reply <- idle
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
	case r.reqC <- req:
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
	for !r.stopped {
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
		case req := <-r.reqC:
			req.serve(r)
		case c := <-r.commitC:
			r.finishCommit(c)
			r.startCommit()
		case s := <-r.fan.dropC:
			r.dropped = append(r.dropped, s)
		case <-r.quit:
			r.shutdown()
			return
		}
		r.flushDropped()
	}
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
