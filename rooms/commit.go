package rooms

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/transport/livewire"
)

// Commits: the room applies queued pushes through the store, one batch at
// a time, and fans each applied push out in version order. On one node
// that is the whole story; peers (peers.go) adds what other nodes' commits
// to the same board need: a catch-up when this room falls behind, and a
// bridge when another node committed between this room's version and a
// batch.

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
	// received is when the room was asked (Unix ns), kept only when the
	// room records stages.
	received int64
}

// serve queues the push and starts a commit unless one is in flight.
func (req *pushReq) serve(r *Room) {
	r.touch()
	if req.origin != nil && r.has(req.origin) {
		r.markActive(req.origin)
	}
	r.pending = append(r.pending, req)
	r.startCommit()
}

// commit is one store call's outcome, handed back to the loop.
type commit struct {
	reqs    []*pushReq
	applied []persist.Applied
	msgs    []*Message // changes message per request; nil when nothing to fan out
	// folded marks requests whose header-only change the next request's
	// message carries (foldHeaderOnly): they send nothing of their own.
	folded []bool
	err    error
	// base is the room's version when the store call started.
	base int64
	// started and committed bracket the store call (Unix ns), kept only
	// when the room records stages.
	started, committed int64
	// catchUp, only with several nodes (peers.go), is a read of the
	// changes after base: other nodes committed in between, and it is
	// sent in place of the batch's messages; or, for a commit without
	// pushes, the catch-up with other nodes' commits that it is.
	catchUp *catchUpRead
}

// Push applies p through the store and fans the change out; it returns the
// new version (or, with replayed, the version an earlier push with the same
// idempotency key produced). Pushes to one board are applied in the order
// the room receives them. A push whose ctx ends before its commit starts is
// not applied; once the commit has started it completes even if ctx ends.
func (r *Room) Push(ctx context.Context, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	return r.push(ctx, &pushReq{in: persist.PushInput{Push: p, IdempotencyKey: idemKey}})
}

func (r *Room) push(ctx context.Context, req *pushReq) (int64, bool, error) {
	if err := r.queuePush(ctx, req); err != nil {
		return 0, false, err
	}
	return req.await(ctx)
}

// queuePush hands req to the loop, which queues it behind the pushes it
// took before; it returns once the loop has it, before its commit.
func (r *Room) queuePush(ctx context.Context, req *pushReq) error {
	if r.closing.Load() {
		return ErrClosed
	}
	req.ctx = ctx
	req.reply = make(chan pushReply, 1)
	if r.opts.Stages != nil {
		req.received = wallNanos()
	}
	select {
	case r.reqC <- req:
		return nil
	case <-r.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// await waits for the answer to a push the loop took: its commit and
// fan-out, or ctx.
func (req *pushReq) await(ctx context.Context) (int64, bool, error) {
	// The loop answers every push it took, even when it shuts down.
	select {
	case rep := <-req.reply:
		return rep.version, rep.replayed, rep.err
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}

// startCommit hands the queued pushes to the store in a goroutine of their
// own, so that the loop keeps serving pulls, joins and pointers during the
// fsync, and so that rooms of different boards reach bbolt's Batch together
// and share one fsync. Pushes that queue up meanwhile go in the next commit,
// together: one board's throughput is not one fsync per push. With no push
// queued, the peers may have a catch-up to start.
func (r *Room) startCommit() {
	if r.committing {
		return
	}
	batch := r.takeBatch()
	if len(batch) == 0 {
		r.peers.catchUp()
		return
	}
	r.committing = true
	go r.commit(batch, r.version.Load())
}

// takeBatch takes up to MaxBatch queued pushes off the queue and returns
// those whose callers still wait; the others are answered with their
// context's error, before anything was written.
func (r *Room) takeBatch() []*pushReq {
	var batch []*pushReq
	n := 0
	for _, req := range r.pending {
		if len(batch) == r.opts.MaxBatch {
			break
		}
		n++
		if err := req.ctx.Err(); err != nil {
			req.reply <- pushReply{err: err}
			continue
		}
		batch = append(batch, req)
	}
	r.pending = slices.Delete(r.pending, 0, n)
	return batch
}

// commit runs in a goroutine of its own: it applies the batch, encodes
// each push's changes message and hands the outcome to the loop.
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
	took := time.Since(start)
	r.opts.Observer.Committed(len(batch), took, c.err)
	c.started, c.committed = start.UnixNano(), start.Add(took).UnixNano()
	if c.err == nil {
		observeMerges(r.opts.Observer, c.applied)
		r.peers.bridge(c)
		c.msgs = make([]*Message, len(batch))
		// Encoded once here, off the loop, and shared by every subscriber;
		// not at all on a board nobody watches (finishCommit encodes it if
		// someone joined meanwhile).
		if r.subCount.Load() > 0 {
			c.folded = foldHeaderOnly(batch, c.applied)
			since := int64(-1)
			for i := range c.applied {
				if c.folded[i] {
					if since < 0 {
						since = c.applied[i].Version - 1
					}
					continue
				}
				c.msgs[i] = r.encodeChangeSince(batch[i], c.applied[i], since)
				since = -1
			}
			r.traceCommit(c)
		}
	}
	r.commitC <- c
}

// headerOnly reports whether a push's change is the board header alone
// (a dot, a vote or timer action, over REST): no row, no merge, no event,
// and nobody to ack.
func headerOnly(req *pushReq, a persist.Applied) bool {
	ch := a.Changes
	return ch != nil && a.Err == nil && !a.Replayed && req.origin == nil && a.Merged == 0 && len(a.Events) == 0 &&
		len(ch.Notes) == 0 && len(ch.DeletedNoteIDs) == 0 && len(ch.TrackerItems) == 0 && len(ch.DeletedTrackerItemIDs) == 0 &&
		len(ch.Frames) == 0 && len(ch.DeletedFrameIDs) == 0 && len(ch.Connectors) == 0 && len(ch.DeletedConnectorIDs) == 0
}

// foldHeaderOnly marks the pushes of a commit whose change the next
// push's message can carry: a header-only change followed, at the next
// version, by another header-only change. The last of such a run sends one
// message from the version before the run's first (its since) with the
// header as the run left it: two hundred people voting at once send a
// handful of messages per socket rather than one per dot, and no row is
// lost, since none changed (docs/live-protocol.md, "Dot voting").
func foldHeaderOnly(batch []*pushReq, applied []persist.Applied) []bool {
	folded := make([]bool, len(applied))
	for i := 0; i+1 < len(applied); i++ {
		folded[i] = headerOnly(batch[i], applied[i]) && headerOnly(batch[i+1], applied[i+1]) &&
			applied[i+1].Version == applied[i].Version+1
	}
	return folded
}

// encodeChange encodes the changes message of one applied push; nil when
// there is nothing to send.
func (r *Room) encodeChange(req *pushReq, a persist.Applied) *Message {
	return r.encodeChangeSince(req, a, -1)
}

// encodeChangeSince is encodeChange from version since (-1: the version
// before the push's).
func (r *Room) encodeChangeSince(req *pushReq, a persist.Applied, since int64) *Message {
	if a.Changes == nil {
		return nil
	}
	from := ""
	if req.origin != nil {
		from = req.origin.id
	}
	msg, err := encodePushChanges(a, from, since)
	if err != nil {
		r.log.Error("encode change; subscribers will see a gap and pull", slog.Int64("version", a.Version), slog.Any("err", err))
		return nil
	}
	return NewChangesMessage(msg, a.Version)
}

// finishCommit answers a finished commit's pushes in order, fanning each
// change out, and the long polls when the version moved.
func (r *Room) finishCommit(c *commit) {
	r.committing = false
	if r.opts.Stages != nil {
		taken := wallNanos()
		for _, m := range c.msgs {
			if m != nil && m.trace != nil {
				m.trace.s.Taken = taken
			}
		}
	}
	before := r.version.Load()
	if c.catchUp != nil {
		r.peers.finishCatchUp(c)
	}
	// The other nodes hear first (the note only goes out after the commit
	// anyway): when the answers need not wait for them, each ack follows
	// its push's changes at once, ahead of the next push's.
	var told <-chan error
	if own := ownVersion(c); own > 0 {
		told = r.peers.committed(own)
	}
	hold := r.holdAnswers(told)
	var answers []pushAnswer
	for i, req := range c.reqs {
		if a, ok := r.answerPush(c, i, req); ok {
			if hold {
				answers = append(answers, a)
			} else {
				r.sendAnswers([]pushAnswer{a}, nil, true)
			}
		}
	}
	if r.version.Load() != before {
		r.answerWaiters(WaitPassed)
	}
	if hold {
		r.release(answers, told)
	}
	if c.err != nil {
		r.log.Error("commit failed", slog.Int("pushes", len(c.reqs)), slog.Any("err", c.err))
	}
}

// pushAnswer is a successful push's answer: its ack on its connection
// and its caller's reply, which may wait for the other nodes (release).
// version is what the other nodes must hear of before it goes: the
// push's version when it changed the board or was replayed (its note may
// never have gone out: the node that took it first may have died between
// its commit and its note), 0 otherwise.
type pushAnswer struct {
	req     *pushReq
	reply   pushReply
	version int64
}

// answerPush settles the i-th push of a finished commit: it fans its
// change and merge events out and returns its answer (ok), or replies to
// a failed push at once.
func (r *Room) answerPush(c *commit, i int, req *pushReq) (pushAnswer, bool) {
	if c.err != nil {
		req.reply <- pushReply{err: c.err}
		return pushAnswer{}, false
	}
	a := c.applied[i]
	if a.Err != nil {
		req.reply <- pushReply{err: a.Err}
		return pushAnswer{}, false
	}
	own := answerVersion(a)
	// With a catch-up read, that read carried (or will carry) the push's
	// rows to the subscribers with what other nodes committed around it.
	var changesSent bool
	if c.catchUp == nil && r.advanceTo(a.Version) {
		// A folded change goes with the next push's message.
		changesSent = i < len(c.folded) && c.folded[i] || r.sendChange(req, a, c.msgs[i])
	}
	r.sendEvents(a.Events, changesSent)
	return pushAnswer{req: req, reply: pushReply{version: a.Version, replayed: a.Replayed}, version: own}, true
}

// errUnconfirmed answers a push that was committed but whose note could not
// be sent to the other nodes before this one stopped: acknowledging it
// would let another node answer a pull without it. Retried with the same
// idempotency key, it is replayed and its note sent again.
var errUnconfirmed = board.Errorf(board.EUNAVAILABLE, "The push was saved but could not be confirmed; retry it with the same idempotency key.")

// answerVersion is the version the other nodes must hear of before a
// successful push is answered: its own when it changed the board or was
// replayed (the node that first took it may have died between its commit
// and its note), 0 otherwise.
func answerVersion(a persist.Applied) int64 {
	if a.Err == nil && (a.Changes != nil || a.Replayed) {
		return a.Version
	}
	return 0
}

// ownVersion is the highest answerVersion of a commit's pushes.
func ownVersion(c *commit) int64 {
	var own int64
	if c.err == nil {
		for _, a := range c.applied {
			own = max(own, answerVersion(a))
		}
	}
	return own
}

// holdAnswers reports whether a commit's answers wait: for the other
// nodes (told), or behind an earlier commit's answers still waiting.
// Called by the loop.
func (r *Room) holdAnswers(told <-chan error) bool {
	if r.released != nil {
		select {
		case <-r.released:
			r.released = nil // every earlier answer went out
		default:
		}
	}
	return told != nil || r.released != nil
}

// release acks a commit's pushes on their connections and replies to
// their callers once the other nodes were told (scale-out.md, "Pulls from
// memory"), off the loop, which goes on meanwhile, and after the answers
// of earlier commits. Called by the loop.
func (r *Room) release(answers []pushAnswer, told <-chan error) {
	prev := r.released
	done := make(chan struct{})
	r.released = done
	go func() {
		defer close(done)
		var err error
		if told != nil {
			err = <-told
		}
		if prev != nil {
			<-prev
		}
		if !r.onLoop(func() { r.sendAnswers(answers, err, true) }) {
			// The room stopped: no connection to ack on, the callers still
			// get their replies.
			r.sendAnswers(answers, err, false)
		}
	}()
}

// sendAnswers acks each push on its connection when onLoop (through the
// pusher's queue, after the changes sent before) and replies to its
// caller; with err, the pushes the other nodes had to hear of are
// answered with errUnconfirmed instead.
func (r *Room) sendAnswers(answers []pushAnswer, err error, onLoop bool) {
	for _, a := range answers {
		req := a.req
		if err != nil && a.version > 0 {
			req.reply <- pushReply{err: errUnconfirmed}
			continue
		}
		// A push that changed nothing had no note to wait for: it is
		// acked whatever became of the others'.
		if onLoop && req.origin != nil && r.has(req.origin) {
			r.deliver(req.origin, mustEncode(livewire.Ack{Type: livewire.TypeAck, ID: req.msgID, ServerVersion: a.reply.version, Replayed: a.reply.replayed}))
		}
		req.reply <- a.reply
	}
}

// advanceTo moves the room's version to v, and reports whether v is new
// to the subscribers. It is not when the room is already there: a replayed
// push, a push that changed nothing, or (with several nodes) another
// node's commit after it already reached them, and sending it would take
// their version back.
func (r *Room) advanceTo(v int64) bool {
	if v <= r.version.Load() {
		return false
	}
	r.version.Store(v)
	return true
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
// message did not carry them (sent false: a catch-up read carried its
// rows), and to the other nodes' subscribers always.
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
