package auth

import (
	"container/list"
	"sync"
	"time"
)

// guessCounter counts wrong guesses per key in fixed windows: a key's
// window opens with its first counted guess and lasts rate.Window; within
// it at most rate.Count guesses are let through. Unlike limiter it keeps a
// count, not a timestamp per event, so a budget of a hundred costs the
// same few bytes per key as a budget of one.
//
// take reserves a guess before the code is looked at, so concurrent
// attempts can never overshoot the budget; undo gives the reservation
// back when the attempt turned out not to be a guess (no code pending),
// and forget clears the key after a successful login (the count is of
// consecutive failures).
//
// Keys sit in a list ordered by the start of their window, newest at the
// front, so the back one is the first to expire: the sweep and eviction
// look at the back only. At maxKeys a new key evicts the back one.
type guessCounter struct {
	rate    Rate
	maxKeys int

	mu      sync.Mutex
	keys    map[string]*list.Element // of *guessEntry
	byStart *list.List
}

type guessEntry struct {
	key   string
	start time.Time
	count int
}

func newGuessCounter(r Rate, maxKeys int) *guessCounter {
	if maxKeys <= 0 {
		maxKeys = defaultMaxKeys
	}
	return &guessCounter{rate: r, maxKeys: maxKeys, keys: map[string]*list.Element{}, byStart: list.New()}
}

// take counts one guess for key at now unless its budget is spent; then
// it counts nothing and answers how long until the window ends.
func (c *guessCounter) take(key string, now time.Time) (retryAfter time.Duration, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.keys[key]
	if el != nil && !now.Before(el.Value.(*guessEntry).start.Add(c.rate.Window)) {
		c.removeLocked(el) // its window is over: start afresh
		el = nil
	}
	if el == nil {
		for c.byStart.Len() >= c.maxKeys {
			c.removeLocked(c.byStart.Back())
		}
		el = c.byStart.PushFront(&guessEntry{key: key, start: now})
		c.keys[key] = el
	}
	e := el.Value.(*guessEntry)
	if e.count >= c.rate.Count {
		return e.start.Add(c.rate.Window).Sub(now), false
	}
	e.count++
	return 0, true
}

// undo gives back a guess take counted for key.
func (c *guessCounter) undo(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.keys[key]; el != nil {
		if e := el.Value.(*guessEntry); e.count > 0 {
			e.count--
		}
	}
}

// forget drops key's count.
func (c *guessCounter) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.keys[key]; el != nil {
		c.removeLocked(el)
	}
}

func (c *guessCounter) removeLocked(el *list.Element) {
	delete(c.keys, el.Value.(*guessEntry).key)
	c.byStart.Remove(el)
}

// purge forgets every key whose window has ended at now.
func (c *guessCounter) purge(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.byStart.Back(); el != nil; el = c.byStart.Back() {
		if now.Before(el.Value.(*guessEntry).start.Add(c.rate.Window)) {
			return
		}
		c.removeLocked(el)
	}
}
