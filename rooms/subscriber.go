package rooms

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/ratelimit"
	"corkboard/transport/livewire"
)

// Subscriber is one live connection in a room. The room hands its messages
// to the connection's Sink and never waits for it; when Done is closed the
// connection closes its socket with CloseStatus.
type Subscriber struct {
	room  *Room
	id    string
	email string
	color string
	seq   uint64 // join order, set by the loop
	pos   int    // index in the room's subs, -1 when not in the room; the loop's
	shard int32  // 1 + the fan-out shard that sends to it, 0 until placed; the loop's

	onLeave func()

	sink Sink

	pushes *ratelimit.Bucket // this connection's push budget
	user   *ratelimit.Bucket // the person's, across connections; may be nil

	closeOnce sync.Once
	done      chan struct{}
	code      int    // written before done is closed
	reason    string // written before done is closed

	editing string // the note open in the connection's editor; owned by the room's loop

	// Presence, owned by the room's loop (here.go, follow.go): whether
	// the connection is left out of presence, its entry in the room's
	// index (nil when hidden), when it was last active, and whom it
	// follows or waits for one view of.
	hidden     bool
	entry      *here
	lastActive time.Time
	following  string
	peeking    string

	mu      sync.Mutex // guards the throttles
	left    bool
	pointer latest[[2]float64]
	timer   *time.Timer       // the pointer throttle's flush, stopped on Leave
	view    latest[viewState] // follow.go
}

// ID returns the connection ID.
func (s *Subscriber) ID() string { return s.id }

// Email returns the subscriber's e-mail.
func (s *Subscriber) Email() string { return s.email }

// Color returns the subscriber's presence colour.
func (s *Subscriber) Color() string { return s.color }

// Room returns the subscriber's room.
func (s *Subscriber) Room() *Room { return s.room }

func (s *Subscriber) presence() livewire.Presence {
	return livewire.Presence{ID: s.id, Email: s.email, Color: s.color}
}

// Editing tells the others that the connection opened the editor of note
// noteID, or closed it ("" ). The state ends when the connection leaves.
// EINVALID for an ID longer than board.MaxIDLen.
func (s *Subscriber) Editing(noteID string) error {
	if len(noteID) > board.MaxIDLen {
		return board.FieldErrorf("noteId", "noteId must be at most %d characters.", board.MaxIDLen)
	}
	select {
	case s.room.reqC <- editReq{sub: s, noteID: noteID}:
	case <-s.room.done:
	case <-s.done:
	}
	return nil
}

// Done is closed when the subscriber has been dropped (or has left); its
// connection should then close with CloseStatus.
func (s *Subscriber) Done() <-chan struct{} { return s.done }

// CloseStatus returns the close code and reason once Done is closed.
func (s *Subscriber) CloseStatus() (code int, reason string) {
	<-s.done
	return s.code, s.reason
}

// ClosingSink is a Sink that is told at once when its subscriber is closed
// (dropped or left), so that its connection needs no goroutine waiting on
// Done. SubscriberClosed is called once, after Done is closed, from
// whichever goroutine closed the subscriber (the room's among them): it
// must not block.
type ClosingSink interface {
	Sink
	SubscriberClosed()
}

func (s *Subscriber) close(code int, reason string) {
	s.closeOnce.Do(func() {
		s.code, s.reason = code, reason
		close(s.done)
		if cs, ok := s.sink.(ClosingSink); ok {
			cs.SubscriberClosed()
		}
	})
}

// Drop closes the subscriber with code and reason: its connection closes
// its socket with them and then leaves the room. The first close wins.
func (s *Subscriber) Drop(code int, reason string) { s.close(code, reason) }

// Enqueue sends a message of the connection's own (an error answer) through
// its sink without waiting. When the sink is full the subscriber is closed
// with livewire.CloseResync and Enqueue reports false.
func (s *Subscriber) Enqueue(msg *Message) bool {
	if s.sink.Send(msg) {
		return true
	}
	s.close(livewire.CloseResync, "resync: pull and reconnect")
	return false
}

// AllowPush spends one push from the connection's budget and then from
// the person's (Member.UserPushes). Call it for every push message before
// looking at the push, so that a flood costs no storage reads. ERATELIMIT
// (with RetryAfter) when either is spent; a refusal spends nothing.
func (s *Subscriber) AllowPush() error {
	now := s.room.opts.Now()
	if wait, ok := s.pushes.Allow(now); !ok {
		return pushRateError(fmt.Sprintf("Too many pushes on this connection: at most %g a second (%d at once).", s.pushes.PerSecond(), s.pushes.Burst()), wait)
	}
	if s.user == nil {
		return nil
	}
	if wait, ok := s.user.Allow(now); !ok {
		s.pushes.Undo()
		return pushRateError(fmt.Sprintf("Too many pushes from your connections together: at most %g a second (%d at once).", s.user.PerSecond(), s.user.Burst()), wait)
	}
	return nil
}

func pushRateError(msg string, wait time.Duration) error {
	e := board.Errorf(board.ERATELIMIT, "%s Nothing was applied; push again in %s.", msg, wait.Round(time.Millisecond))
	e.RetryAfter = board.RetryAfterSeconds(wait)
	return e
}

// Push applies p like Room.Push, on behalf of this connection: the others get
// the change and this connection gets an ack carrying msgID, queued in
// version order with the changes of others.
func (s *Subscriber) Push(ctx context.Context, msgID string, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	return s.room.push(ctx, &pushReq{in: persist.PushInput{Push: p, IdempotencyKey: idemKey}, origin: s, msgID: msgID})
}

// QueuePush is Push without the wait: it returns once the room has taken
// the push (or could not: ErrClosed, ctx's error), so a connection's pushes
// are still applied in the order it queued them, and the connection can
// read its next message while this one commits; pushes queued during a
// commit share the next one. The connection gets its ack in version order
// as with Push; answered is called once, from a goroutine of its own, with
// the push's outcome (nil when applied) when the room took it.
func (s *Subscriber) QueuePush(ctx context.Context, msgID string, p *board.Push, idemKey string, answered func(err error)) error {
	req := &pushReq{in: persist.PushInput{Push: p, IdempotencyKey: idemKey}, origin: s, msgID: msgID}
	if err := s.room.queuePush(ctx, req); err != nil {
		return err
	}
	go func() {
		_, _, err := req.await(ctx)
		answered(err)
	}()
	return nil
}

// PullTo is Room.PullTo.
func (s *Subscriber) PullTo(ctx context.Context, since int64, fn func(p *persist.ChangePart) error) (int64, bool, error) {
	return s.room.PullTo(ctx, since, fn)
}

// Pull is Room.Pull.
func (s *Subscriber) Pull(ctx context.Context, since int64) (*PullResult, error) {
	return s.room.Pull(ctx, since)
}

// Pointer relays the connection's pointer position to the others. Updates
// closer together than the room's PointerInterval are coalesced: the latest
// position is sent when the interval has passed. Positions are never
// stored. EINVALID for a coordinate that is not a finite number within
// ±board.MaxCoordinate.
func (s *Subscriber) Pointer(x, y float64) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"x", x}, {"y", y}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || math.Abs(c.v) > board.MaxCoordinate {
			return board.FieldErrorf(c.name, "%s must be a finite number between -%g and %g.", c.name, float64(board.MaxCoordinate), float64(board.MaxCoordinate))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left {
		return nil
	}
	s.pointer.offer(s.room.opts.Now(), s.room.opts.PointerInterval, [2]float64{x, y}, s.sendPointer, func(wait time.Duration) {
		s.timer = time.AfterFunc(wait, s.flushPointer)
	})
	return nil
}

// flushPointer sends the position held back by the throttle.
func (s *Subscriber) flushPointer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if !s.left {
		s.pointer.flush(s.room.opts.Now(), s.sendPointer)
	}
}

// sendPointer hands a position to the room; called with s.mu held.
func (s *Subscriber) sendPointer(p [2]float64) {
	select {
	case s.room.reqC <- pointerReq{sub: s, x: p[0], y: p[1]}:
	case <-s.room.done:
	case <-s.done:
	}
}

// Leave takes the subscriber out of its room and returns once the others
// have been told; it closes the subscriber with livewire.CloseNormal if it was not
// closed already. The connection
// calls it when it ends. Calling it twice is safe.
func (s *Subscriber) Leave() {
	s.mu.Lock()
	already := s.left
	s.left = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	if already {
		return
	}
	req := &leaveReq{sub: s, done: make(chan struct{})}
	select {
	case s.room.reqC <- req:
		<-req.done // the loop answers at once
	case <-s.room.done:
	}
	s.close(livewire.CloseNormal, "")
	if s.onLeave != nil {
		s.onLeave()
	}
}
