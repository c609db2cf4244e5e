package ratelimit

import (
	"sync"
	"time"
)

// Budget counts events per key in fixed windows: a key's window opens with
// its first counted event and lasts Window; within it at most Count events
// are let through. It keeps a count, not a time per event, so a budget of a
// hundred costs the same few bytes per key as a budget of one. It is safe
// for concurrent use.
//
// Take reserves before the caller knows whether the event counts, so
// concurrent callers can never overshoot; Undo gives a reservation back
// when it turned out not to count, and Forget clears a key (a success, when
// the budget is of consecutive failures).
type Budget struct {
	rate Rate

	mu   sync.Mutex
	keys keys[int] // the count; mark: the window's start
}

// NewBudget returns a budget of r over at most maxKeys keys
// (DefaultMaxKeys when maxKeys ≤ 0). At capacity a new key evicts the one
// whose window opened first.
func NewBudget(r Rate, maxKeys int) *Budget {
	r = r.normal()
	return &Budget{rate: r, keys: newKeys[int](r.Window, maxKeys)}
}

// Take counts one event for key at now unless its budget is spent; then it
// counts nothing and answers how long until the key's window ends.
func (b *Budget) Take(key string, now time.Time) (wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.keys.get(key)
	if e.mark.IsZero() || b.keys.expired(e, now) {
		// A new key, or its window is over: a window opens now.
		e.state = 0
		b.keys.markAt(e, now)
	}
	if e.state >= b.rate.Count {
		return e.mark.Add(b.rate.Window).Sub(now), false
	}
	e.state++
	return 0, true
}

// Undo gives back one event Take counted for key.
func (b *Budget) Undo(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.keys.lookup(key); e != nil && e.state > 0 {
		e.state--
	}
}

// Forget drops key's count.
func (b *Budget) Forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys.forget(key)
}

// Purge forgets every key whose window has ended at now.
func (b *Budget) Purge(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys.purge(now)
}

// Len returns how many keys the budget remembers.
func (b *Budget) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keys.len()
}
