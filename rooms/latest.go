package rooms

import "time"

// latest holds back a connection's updates of one kind (its pointer, its
// view) so that at most one goes per interval: an update inside the
// interval is kept, and the latest kept goes when the interval ends, so
// a pointer that stops is shown where it stopped. The subscriber's mu
// guards it.
type latest[T any] struct {
	last  time.Time // when the last update went
	held  T
	has   bool // held is waiting for the interval's end
	armed bool // flush is due
}

// offer sends v at once, or keeps it when the interval since the last
// one sent has not ended, arming the flush (arm(wait)) if it is not.
func (l *latest[T]) offer(now time.Time, interval time.Duration, v T, send func(T), arm func(wait time.Duration)) {
	if wait := l.last.Add(interval).Sub(now); wait > 0 {
		l.held, l.has = v, true
		if !l.armed {
			l.armed = true
			arm(wait)
		}
		return
	}
	l.last, l.has = now, false
	send(v)
}

// flush sends the update kept, if any: what the armed timer calls.
func (l *latest[T]) flush(now time.Time, send func(T)) {
	l.armed = false
	if !l.has {
		return
	}
	l.last, l.has = now, false
	send(l.held)
}
