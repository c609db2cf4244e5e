package rooms

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"corkboard/board"
)

// WaitReason says why a wait ended.
type WaitReason uint8

// Why a wait ended.
const (
	// WaitPassed: the board's version passed the waiter's.
	WaitPassed WaitReason = iota + 1
	// WaitKicked: the waiter's access to the board was withdrawn (Kick).
	WaitKicked
	// WaitClosed: the room stopped (server shutdown).
	WaitClosed
)

// WaitEnd is the room's answer to a waiter: the room's version when the
// wait ended, and why it ended.
type WaitEnd struct {
	Version int64
	Reason  WaitReason
}

// WaitFor describes a pull that waits for a change.
type WaitFor struct {
	// Since is the version the client holds.
	Since int64
	// Email is who waits; Kick of that e-mail ends the wait.
	Email string
	// OnStop, if set, runs once when the waiter's Stop is called.
	OnStop func()
}

// Waiter is a pull held until the board passes a version (a long poll).
// It costs the room one slice slot and this struct with a one-element
// channel: no goroutine and no timer of its own (the caller, an HTTP
// handler, does the waiting).
type Waiter struct {
	room  *Room
	since int64
	email string
	pos   int // index in the room's waiters, -1 when not there; the loop's

	end      chan WaitEnd // buffered 1: the room answers at most once
	answered atomic.Bool  // set by the loop before it answers
	stopOnce sync.Once
	onStop   func()
}

type unwaitReq struct {
	w    *Waiter
	done chan struct{}
}

// serve takes the waiter out of the room without answering it.
func (req *unwaitReq) serve(r *Room) {
	r.touch()
	r.removeWaiter(req.w)
	close(req.done)
}

// serve holds the waiter (Wait's request).
func (w *Waiter) serve(r *Room) {
	r.touch()
	r.addWaiter(w)
}

// Wait registers a waiter for the room's version to pass f.Since. When the
// version is not f.Since already (the board moved, or the client is ahead
// of it), the waiter is answered at once with WaitPassed. With several
// nodes (a Relay) the store's version is read first, unless the Relay is
// current (as for Pull), and a store ahead of the room answers at once
// too. The caller must
// call Stop when it is done with the waiter, answered or not.
//
// Once Wait has returned, the room has taken the waiter: a push the room
// receives afterwards answers it.
func (r *Room) Wait(ctx context.Context, f WaitFor) (*Waiter, error) {
	if f.Since < 0 {
		return nil, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	if r.closing.Load() {
		return nil, ErrClosed
	}
	now := r.touch()
	w := &Waiter{room: r, since: f.Since, email: f.Email, pos: -1, end: make(chan WaitEnd, 1), onStop: f.OnStop}
	if v := r.version.Load(); f.Since >= v && r.peers.shared() && (f.Since > v || !r.peers.current(v, now)) {
		// With several nodes the room may be behind the store: another node
		// acknowledged a push whose note is on its way, or the client pushed
		// there and is ahead of this room. The store knows; a wait never
		// starts while it is ahead. Its version, even when it is since ("no
		// change, wait again"), never takes the client back.
		sv, err := r.storeVersion(ctx)
		switch {
		case err != nil && f.Since == v:
			return nil, err
		case err == nil && sv > v:
			r.storeSaid(sv)
			w.answer(sv, WaitPassed)
			return w, nil
		}
	}
	if v := r.version.Load(); v != f.Since {
		w.answer(v, WaitPassed)
		return w, nil
	}
	// Counted before the loop takes it, so that Waiters is exact once
	// Wait returns.
	r.waitCount.Add(1)
	select {
	case r.reqC <- w:
		return w, nil
	case <-r.done:
		r.waitCount.Add(-1)
		return nil, ErrClosed
	case <-ctx.Done():
		r.waitCount.Add(-1)
		return nil, ctx.Err()
	}
}

// Ended delivers the room's answer, once: the version passed, access was
// withdrawn or the room stopped. It never delivers after Stop.
func (w *Waiter) Ended() <-chan WaitEnd { return w.end }

// Version returns the room's current version (what a wait that ran out
// answers).
func (w *Waiter) Version() int64 { return w.room.Version() }

// Stop takes the waiter out of the room, if the room has not answered it,
// and runs OnStop. Once it returns the room holds nothing of the waiter.
// Safe to call twice.
func (w *Waiter) Stop() {
	w.stopOnce.Do(func() {
		if !w.answered.Load() {
			req := &unwaitReq{w: w, done: make(chan struct{})}
			select {
			case w.room.reqC <- req:
				<-req.done
			case <-w.room.done:
			}
		}
		if w.onStop != nil {
			w.onStop()
		}
	})
}

func (w *Waiter) answer(v int64, why WaitReason) {
	w.answered.Store(true)
	w.end <- WaitEnd{Version: v, Reason: why}
}

// Waiters returns how many waiters the room holds (counting those whose
// Wait has returned and that it has not answered or let go yet).
func (r *Room) Waiters() int { return int(r.waitCount.Load()) }

// ActiveSince reports whether the room took a request (a pull, a push, a
// wait…) at t or later.
func (r *Room) ActiveSince(t time.Time) bool { return r.lastActive.Load() >= t.UnixNano() }

// addWaiter holds w, or answers it at once when the version moved since
// Wait looked. Called by the loop.
func (r *Room) addWaiter(w *Waiter) {
	if v := r.version.Load(); v != w.since {
		r.waitCount.Add(-1)
		w.answer(v, WaitPassed)
		return
	}
	w.pos = len(r.waiters)
	r.waiters = append(r.waiters, w)
}

// removeWaiter takes w out without answering it. Called by the loop.
func (r *Room) removeWaiter(w *Waiter) {
	if w.pos < 0 {
		return
	}
	last := r.waiters[len(r.waiters)-1]
	r.waiters[w.pos], last.pos = last, w.pos
	r.waiters[len(r.waiters)-1] = nil
	r.waiters = r.waiters[:len(r.waiters)-1]
	w.pos = -1
	r.waitCount.Add(-1)
}

// answerWaiters answers every waiter with the room's version and why. Every
// waiter the room holds waits on the version it had when it was added, so
// whenever the version moves they are all answered, in one pass. Called by
// the loop.
func (r *Room) answerWaiters(why WaitReason) {
	if len(r.waiters) == 0 {
		return
	}
	v := r.version.Load()
	r.waitCount.Add(-int32(len(r.waiters)))
	for i, w := range r.waiters {
		w.pos = -1
		w.answer(v, why)
		r.waiters[i] = nil
	}
	r.waiters = r.waiters[:0]
	// A burst of waiters on one board may have grown the slice; do not
	// keep a large one for a board that went quiet.
	if cap(r.waiters) > 1024 {
		r.waiters = nil
	}
}

// kickWaiters answers the waiters of email with WaitKicked. Called by the
// loop.
func (r *Room) kickWaiters(email string) {
	for i := 0; i < len(r.waiters); {
		w := r.waiters[i]
		if w.email != email {
			i++
			continue
		}
		r.removeWaiter(w) // moves the last waiter to i
		w.answer(r.version.Load(), WaitKicked)
	}
}
