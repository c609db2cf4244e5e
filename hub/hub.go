// Package hub is the registry of live rooms: it starts a board's room on
// first use, stops rooms that have been idle, sweeps old tombstones,
// revisions and idempotency keys, and shuts every room down (closing their
// sockets with going-away) on Close.
//
// With several nodes on one store (Options.Bus, nodes.go), the hub is where
// a room learns of versions committed elsewhere, of connections on other
// nodes and of kicks made there; rooms recheck their board's version in the
// store on a slow timer, so a lost note only delays a change.
package hub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/rooms"
)

// Defaults of Options.
const (
	DefaultIdleTimeout          = 5 * time.Minute
	DefaultTombstoneRetention   = 30 * 24 * time.Hour
	DefaultIdempotencyRetention = 24 * time.Hour
	DefaultSweepEvery           = time.Hour
)

// Options tune a hub. Zero fields take the defaults.
type Options struct {
	// IdleTimeout stops a room with no subscribers and no request for this long.
	IdleTimeout time.Duration
	// TombstoneRetention is how long deletions are remembered for pulls; a
	// pull from before the forgotten ones answers the full state with reset.
	// Negative keeps them forever.
	TombstoneRetention time.Duration
	// IdempotencyRetention is how long an Idempotency-Key is remembered
	// (at least 24 hours: shorter values are raised to 24 hours).
	IdempotencyRetention time.Duration
	// SweepEvery is how often tombstones and keys are swept; negative
	// disables the background sweep (Sweep can still be called).
	SweepEvery time.Duration
	// MaxConnsPerUserBoard, MaxConnsPerUser and MaxConns cap live
	// connections per person per board, per person, and in all (Admit).
	MaxConnsPerUserBoard int
	MaxConnsPerUser      int
	MaxConns             int
	// UserPushRate and UserPushBurst are one person's push budget over all
	// of their live connections (pushes a second, and at once).
	UserPushRate  float64
	UserPushBurst int
	// ConnMessageRate and ConnMessageBurst are every live connection's
	// message budget (every message it sends, of any kind: a second, and
	// at once); UserMessageRate and UserMessageBurst one person's over all
	// of their live connections on this node (Lease.AllowMessage).
	ConnMessageRate  float64
	ConnMessageBurst int
	UserMessageRate  float64
	UserMessageBurst int
	// Room tunes every room.
	Room rooms.Options
	// Now is the clock; nil is time.Now. It is also the rooms' clock unless
	// Room.Now is set.
	Now func() time.Time
	// Logger; nil is slog.Default().
	Logger *slog.Logger
	// MaxWaitsPerUser and MaxWaits cap held long polls per person and in
	// all (Wait).
	MaxWaitsPerUser int
	MaxWaits        int

	// Bus, when set, joins this hub to the other nodes sharing its store
	// (nodes.go); nil is one node alone.
	Bus Bus
	// NodeID names this node on the bus; "" is a random one (NewNodeID).
	NodeID string
	// PollEvery is how often, with a Bus, rooms with live subscribers or
	// held polls recheck their board's version in the store (pulls and
	// long polls ask the store themselves: rooms.Room.Pull). Negative: no
	// timer (tests call Tick).
	PollEvery time.Duration
	// PointerFlush is how often pointer positions go to the other nodes.
	PointerFlush time.Duration
	// Lease, with a Bus that is a Prober (PostgreSQL's), is how long a
	// push's acknowledgement waits after its note went out, so that other
	// nodes may answer no-change pulls from memory (DefaultLease; docs/
	// scale-out.md, "Pulls from memory"). Negative: no wait, and every
	// no-change pull asks the store, as without a Prober. Every node of a
	// cluster must use the same lease.
	Lease time.Duration
	// OnInvalidate, if set, is called for each record another node says
	// changed (Invalidate): the place where caches drop their copy.
	OnInvalidate func(kind, key string)
}

func (o Options) withDefaults() Options {
	o = o.withHousekeepingDefaults()
	o = o.withLimitDefaults()
	o = o.withClockAndLoggerDefaults()
	if o.Bus != nil {
		o = o.withNodeDefaults()
	}
	return o
}

// withHousekeepingDefaults fills how long idle rooms, tombstones and
// idempotency keys live, and how often they are swept.
func (o Options) withHousekeepingDefaults() Options {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.TombstoneRetention == 0 {
		o.TombstoneRetention = DefaultTombstoneRetention
	}
	// A shorter retention than the default would forget keys a client may
	// still retry with, so the default is also the floor.
	if o.IdempotencyRetention < DefaultIdempotencyRetention {
		o.IdempotencyRetention = DefaultIdempotencyRetention
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	return o
}

// withLimitDefaults fills the caps on connections and held polls and the
// push and message budgets.
func (o Options) withLimitDefaults() Options {
	positiveOr(&o.MaxConnsPerUserBoard, DefaultMaxConnsPerUserBoard)
	positiveOr(&o.MaxConnsPerUser, DefaultMaxConnsPerUser)
	positiveOr(&o.MaxConns, DefaultMaxConns)
	positiveOr(&o.MaxWaitsPerUser, DefaultMaxWaitsPerUser)
	positiveOr(&o.MaxWaits, DefaultMaxWaits)
	positiveOr(&o.UserPushRate, DefaultUserPushRate)
	positiveOr(&o.UserPushBurst, DefaultUserPushBurst)
	positiveOr(&o.ConnMessageRate, DefaultConnMessageRate)
	positiveOr(&o.ConnMessageBurst, DefaultConnMessageBurst)
	positiveOr(&o.UserMessageRate, DefaultUserMessageRate)
	positiveOr(&o.UserMessageBurst, DefaultUserMessageBurst)
	return o
}

// positiveOr sets *v to def unless *v is positive.
func positiveOr[T int | float64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// withClockAndLoggerDefaults fills the clock and the logger, which the
// rooms inherit from the hub unless given their own.
func (o Options) withClockAndLoggerDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Room.Now == nil {
		o.Room.Now = o.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Room.Logger == nil {
		o.Room.Logger = o.Logger
	}
	return o
}

// withNodeDefaults fills what only a hub on a node bus uses.
func (o Options) withNodeDefaults() Options {
	if o.NodeID == "" {
		o.NodeID = NewNodeID()
	}
	if o.PollEvery == 0 {
		o.PollEvery = DefaultPollEvery
	}
	if o.PointerFlush <= 0 {
		o.PointerFlush = DefaultPointerFlush
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	return o
}

// errClosed answers requests made after Close.
var errClosed = board.Errorf(board.EUNAVAILABLE, "The server is shutting down.")

// Hub is the map of running rooms. Build it with New, stop it with Close.
type Hub struct {
	store persist.SyncStore
	opts  Options
	log   *slog.Logger

	mu     sync.Mutex
	rooms  map[string]*rooms.Room
	closed bool
	conns  int                  // admitted live connections (live.go)
	users  map[string]*liveUser // by e-mail
	waits  waitCaps             // held long polls (wait.go)
	nodes  *nodes               // the other nodes (nodes.go); nil without a bus

	subs      sync.WaitGroup // live subscriptions, waited for by Close
	quit      chan struct{}
	janitor   sync.WaitGroup
	closeOnce sync.Once
}

// New builds a hub on store and starts its janitor (idle rooms, sweeps).
func New(store persist.SyncStore, opts Options) *Hub {
	opts = opts.withDefaults()
	h := &Hub{
		store: store,
		opts:  opts,
		log:   opts.Logger,
		rooms: make(map[string]*rooms.Room),
		users: make(map[string]*liveUser),
		quit:  make(chan struct{}),
	}
	h.janitor.Add(1)
	go h.runJanitor()
	if opts.Bus != nil {
		h.startNodes()
	}
	return h
}

// Room returns the board's running room, starting it on first use.
// ENOTFOUND for an unclaimed board, EUNAVAILABLE after Close.
func (h *Hub) Room(ctx context.Context, boardID string) (*rooms.Room, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	if r, ok := h.rooms[boardID]; ok {
		select {
		case <-r.Done():
			// Stopped behind our back (cannot happen today: only the
			// janitor stops rooms, under mu); start a fresh one.
		default:
			return r, nil
		}
	}
	// Starting under mu reads one version from the store; it keeps two
	// requests from starting two rooms for one board.
	r, err := rooms.Start(ctx, h.store, boardID, h.opts.Room)
	if err != nil {
		return nil, err
	}
	h.rooms[boardID] = r
	return r, nil
}

// retry runs fn on the board's room, again on a fresh room when the one it
// got stopped for idleness in between.
func retry[T any](ctx context.Context, h *Hub, boardID string, fn func(r *rooms.Room) (T, error)) (T, error) {
	var zero T
	for range 3 {
		r, err := h.Room(ctx, boardID)
		if err != nil {
			return zero, err
		}
		v, err := fn(r)
		if !errors.Is(err, rooms.ErrClosed) {
			return v, err
		}
		h.forget(boardID, r)
	}
	return zero, rooms.ErrClosed
}

// forget removes r from the map if it is still the board's room.
func (h *Hub) forget(boardID string, r *rooms.Room) {
	h.mu.Lock()
	if h.rooms[boardID] == r {
		delete(h.rooms, boardID)
	}
	h.mu.Unlock()
}

type pushed struct {
	version  int64
	replayed bool
}

// Push applies a push through the board's room (see rooms.Room.Push).
func (h *Hub) Push(ctx context.Context, boardID string, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	res, err := retry(ctx, h, boardID, func(r *rooms.Room) (pushed, error) {
		v, rep, err := r.Push(ctx, p, idemKey)
		return pushed{v, rep}, err
	})
	return res.version, res.replayed, err
}

// Pull answers a pull through the board's room (see rooms.Room.Pull).
func (h *Hub) Pull(ctx context.Context, boardID string, since int64) (*rooms.PullResult, error) {
	return retry(ctx, h, boardID, func(r *rooms.Room) (*rooms.PullResult, error) {
		return r.Pull(ctx, since)
	})
}

// PullTo answers a pull through the board's room, streaming it to fn (see
// rooms.Room.PullTo).
func (h *Hub) PullTo(ctx context.Context, boardID string, since int64, fn func(p *persist.ChangePart) error) (serverVersion int64, changed bool, err error) {
	res, err := retry(ctx, h, boardID, func(r *rooms.Room) (pulledTo, error) {
		v, c, err := r.PullTo(ctx, since, fn)
		return pulledTo{v, c}, err
	})
	return res.version, res.changed, err
}

type pulledTo struct {
	version int64
	changed bool
}

// Subscribe admits (Admit) and joins the board's room for a live
// connection; the admission is released when the subscriber leaves. The
// caller must call the subscriber's Leave when the connection ends; Close
// waits for it. Errors: Admit's, and the room's.
func (h *Hub) Subscribe(ctx context.Context, boardID, connID, email string, sink rooms.Sink) (*rooms.Subscriber, rooms.Welcome, error) {
	l, err := h.Admit(boardID, email)
	if err != nil {
		return nil, rooms.Welcome{}, err
	}
	s, w, err := h.subscribe(ctx, boardID, rooms.Member{ConnID: connID, Email: email, Sink: sink, UserPushes: l.pushes, OnLeave: l.Release})
	if err != nil {
		l.Release()
	}
	return s, w, err
}

// subscribe joins the board's room as m.
func (h *Hub) subscribe(ctx context.Context, boardID string, m rooms.Member) (*rooms.Subscriber, rooms.Welcome, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, rooms.Welcome{}, errClosed
	}
	// Counted before the join (under mu, before Close can start waiting)
	// and released by Leave.
	h.subs.Add(1)
	h.mu.Unlock()
	onLeave := m.OnLeave
	m.OnLeave = func() {
		if onLeave != nil {
			onLeave()
		}
		h.subs.Done()
	}
	type joined struct {
		s *rooms.Subscriber
		w rooms.Welcome
	}
	j, err := retry(ctx, h, boardID, func(r *rooms.Room) (joined, error) {
		s, w, err := r.Subscribe(ctx, m)
		return joined{s, w}, err
	})
	if err != nil {
		h.subs.Done()
		return nil, rooms.Welcome{}, err
	}
	return j.s, j.w, nil
}

// Kick closes every live connection of email on the board with
// livewire.CloseForbidden and ends their long polls with rooms.WaitKicked, on
// this node and (through the bus) on the others; call it when an invitee
// is removed.
func (h *Hub) Kick(boardID, email string) {
	h.kickLocal(boardID, email)
	if h.nodes != nil {
		h.nodes.enqueue(note{K: kindKick, Board: boardID, Email: email})
	}
}

// SendTo sends msg to email's live connections to boardID on this node,
// without starting a room; it reports whether there was one. Each node
// sends to its own connections: a plan change reaches every node through
// its cache invalidation, which calls this there (docs/scale-out.md).
func (h *Hub) SendTo(boardID, email string, msg *rooms.Message) bool {
	r := h.existing(boardID)
	return r != nil && r.SendTo(email, msg)
}

// kickLocal is Kick on this node's room.
func (h *Hub) kickLocal(boardID, email string) {
	h.mu.Lock()
	r := h.rooms[boardID]
	h.mu.Unlock()
	if r != nil {
		r.Kick(email, "access to the board was withdrawn")
	}
}

// Rooms returns how many rooms are running.
func (h *Hub) Rooms() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.rooms)
}

// StopIdle stops the rooms idle since before now minus IdleTimeout and
// returns how many it stopped. The janitor calls it; tests call it with a
// clock of their own.
func (h *Hub) StopIdle(now time.Time) int {
	return h.stopIdle(now.Add(-h.opts.IdleTimeout), nil)
}

// stopIdle stops the rooms idle since before cutoff, of the boards pick
// accepts (all when pick is nil), and returns how many it stopped.
func (h *Hub) stopIdle(cutoff time.Time, pick func(boardID string) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for id, r := range h.rooms {
		if pick != nil && !pick(id) {
			continue
		}
		// Under mu, so that Room cannot hand out a room being stopped.
		if r.StopIfIdle(cutoff) {
			delete(h.rooms, id)
			n++
		}
	}
	return n
}

// Sweep forgets tombstones older than TombstoneRetention and the revisions
// (the bases of merges) superseded before then beyond the newest
// persist.KeepRevisions of each row (neither when the retention is
// negative: a client may come back with an edit as old as the deletions a
// pull still reports), and idempotency keys older than
// IdempotencyRetention, as of now.
func (h *Hub) Sweep(ctx context.Context, now time.Time) error {
	t, r := 0, 0
	if h.opts.TombstoneRetention > 0 {
		cutoff := now.Add(-h.opts.TombstoneRetention)
		var err error
		if t, err = h.store.PruneTombstones(ctx, cutoff); err != nil {
			return err
		}
		if r, err = h.store.PruneRevisions(ctx, cutoff, persist.KeepRevisions); err != nil {
			return err
		}
	}
	k, err := h.store.SweepIdempotencyKeys(ctx, now.Add(-h.opts.IdempotencyRetention))
	if err != nil {
		return err
	}
	if t > 0 || r > 0 || k > 0 {
		h.log.InfoContext(ctx, "sync sweep", slog.Int("tombstones", t), slog.Int("revisions", r), slog.Int("idempotencyKeys", k))
	}
	return nil
}

func (h *Hub) runJanitor() {
	defer h.janitor.Done()
	// The floor keeps a tiny -room-idle (1ns) from making the ticker panic.
	idleEvery := max(min(h.opts.IdleTimeout/2, time.Minute), time.Millisecond)
	idle := time.NewTicker(idleEvery)
	defer idle.Stop()
	var sweep <-chan time.Time
	if h.opts.SweepEvery > 0 {
		t := time.NewTicker(h.opts.SweepEvery)
		defer t.Stop()
		sweep = t.C
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-h.quit
		cancel()
	}()
	for {
		select {
		case <-idle.C:
			h.StopIdle(h.opts.Now())
			h.forgetIdleUsers(h.opts.Now())
		case <-sweep:
			if err := h.Sweep(ctx, h.opts.Now()); err != nil && ctx.Err() == nil {
				h.log.WarnContext(ctx, "sync sweep failed", slog.Any("err", err))
			}
		case <-h.quit:
			return
		}
	}
}

// Close stops the janitor and every room (pushes being committed finish,
// queued ones fail with EUNAVAILABLE, subscribers are dropped with
// livewire.CloseGoingAway, long polls are answered with rooms.WaitClosed),
// then waits until every live connection has left, or until ctx ends.
// Later calls answer EUNAVAILABLE. Calling it twice is safe.
func (h *Hub) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		if h.nodes != nil {
			// Goodbye first: the others drop this node's connections at once.
			h.nodes.enqueue(note{K: kindBye})
		}
		close(h.quit)
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
	})
	h.janitor.Wait()
	h.waitNodes()
	h.mu.Lock()
	all := make([]*rooms.Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		all = append(all, r)
	}
	h.mu.Unlock()
	// Rooms close in parallel: each may be finishing a commit (an fsync).
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, r := range all {
		wg.Go(func() { errs[i] = r.Close(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // only ever ctx's error
		}
	}
	done := make(chan struct{})
	go func() {
		h.subs.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
