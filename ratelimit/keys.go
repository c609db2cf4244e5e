package ratelimit

import (
	"container/list"
	"time"
)

// DefaultMaxKeys is how many keys a Window, Budget or Buckets remembers
// when its constructor is given no bound.
const DefaultMaxKeys = 100_000

// keys is the bookkeeping every keyed limiter shares: at most maxKeys
// entries in a list ordered by mark, newest at the front. An entry whose
// mark is horizon old or older is worth nothing (see the package doc), and
// because marks only move to the front, the back entry is the first to be
// so. The owner holds its own mutex around every call.
type keys[S any] struct {
	horizon time.Duration
	maxKeys int
	byKey   map[string]*list.Element // of *entry[S]
	order   *list.List               // front: newest mark
	// scanned counts the entries eviction and purge looked at, so that a
	// test can hold the amortised cost to its promise.
	scanned int
}

type entry[S any] struct {
	key   string
	el    *list.Element // e's place in the order, so marking needs no lookup
	mark  time.Time
	state S
}

func newKeys[S any](horizon time.Duration, maxKeys int) keys[S] {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return keys[S]{horizon: horizon, maxKeys: maxKeys, byKey: map[string]*list.Element{}, order: list.New()}
}

// get returns key's entry, adding an empty one at the back (evicting the
// back entry first when full) when there is none. A new entry is not
// marked: the caller marks it when it counts something.
func (k *keys[S]) get(key string) *entry[S] {
	if el := k.byKey[key]; el != nil {
		return el.Value.(*entry[S])
	}
	for k.order.Len() >= k.maxKeys {
		// The back entry is worth nothing if any entry is, else it is
		// the one idle longest.
		k.scanned++
		k.remove(k.order.Back())
	}
	e := &entry[S]{key: key}
	e.el = k.order.PushBack(e)
	k.byKey[key] = e.el
	return e
}

// lookup returns key's entry or nil.
func (k *keys[S]) lookup(key string) *entry[S] {
	if el := k.byKey[key]; el != nil {
		return el.Value.(*entry[S])
	}
	return nil
}

// markAt sets e's mark and moves it to the front.
func (k *keys[S]) markAt(e *entry[S], at time.Time) {
	e.mark = at
	k.order.MoveToFront(e.el)
}

// expired reports whether e is worth nothing at now.
func (k *keys[S]) expired(e *entry[S], now time.Time) bool {
	return !now.Before(e.mark.Add(k.horizon))
}

// forget removes key's entry, if any.
func (k *keys[S]) forget(key string) {
	if el := k.byKey[key]; el != nil {
		k.remove(el)
	}
}

func (k *keys[S]) remove(el *list.Element) {
	delete(k.byKey, el.Value.(*entry[S]).key)
	k.order.Remove(el)
}

// purge forgets every entry worth nothing at now. It stops at the first
// entry from the back that still counts (all in front of it are newer), so
// it costs what it removes plus one. Should the wall clock have stepped
// back, a few dead entries may stay until they reach the back; the key
// bound holds regardless.
func (k *keys[S]) purge(now time.Time) {
	for el := k.order.Back(); el != nil; el = k.order.Back() {
		k.scanned++
		if !k.expired(el.Value.(*entry[S]), now) {
			return
		}
		k.remove(el)
	}
}

// len is the number of keys remembered.
func (k *keys[S]) len() int { return k.order.Len() }
