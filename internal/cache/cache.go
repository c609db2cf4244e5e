// Package cache is the bounded in-memory cache that the owners of access
// decisions (auth for sessions, billing for plans, transport for board
// membership) keep in front of storage, and the vocabulary of invalidation
// they share: the kinds of record a cache holds and the Invalidator a
// cross-node feed calls.
//
// A Cache is sharded, holds at most a fixed number of entries (the least
// recently used goes first), forgets every entry after a TTL, and never
// lets a fill that read storage before an invalidation put back what the
// invalidation removed: a fill takes the key's generation (Gen) before it
// reads storage and hands it to Add, which refuses it when the key's shard
// was invalidated since. Invalidations are rare (a logout, an invite
// removed, a plan changed), so a shard-wide generation costs a few extra
// misses, never a stale answer.
package cache

import (
	"hash/maphash"
	"sync"
	"time"
)

// Kind names what an invalidation is about.
type Kind string

// The kinds of record the caches hold.
const (
	// Session: the session ended (logout or expiry). The key is the
	// session's storage key (SHA-256 of its token, auth.SessionKey) as a
	// string of its 32 bytes.
	Session Kind = "session"
	// Plan: the user's plan changed. The key is the normalised e-mail.
	Plan Kind = "plan"
	// Board: the board's owner, invitees or phases changed. The key is the
	// board ID.
	Board Kind = "board"
)

// Invalidator drops what a node holds about one record after it changed.
// Each cache owner implements it for its kinds and ignores the others; a
// cross-node feed calls it with the changes other nodes made.
type Invalidator interface {
	Invalidate(kind Kind, key string)
}

// Options configures a Cache.
type Options[K comparable] struct {
	// Size bounds the entries held. The bound is kept per shard, so the
	// total may reach Size rounded up to a multiple of the shard count (16
	// from 1,024 entries on, 1 below). Required (at least 1).
	Size int
	// TTL is how long an entry is trusted after it was added; past it Get
	// misses and the caller reads storage again. Required (positive).
	TTL time.Duration
	// Hash spreads keys over shards. Required.
	Hash func(K) uint64
	// Now is the clock of the TTL; nil is time.Now.
	Now func() time.Time
}

// Cache maps keys to values, bounded in size and age. It is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	shards []shard[K, V]
	mask   uint64
	ttl    int64
	hash   func(K) uint64
	now    func() time.Time
}

type shard[K comparable, V any] struct {
	mu  sync.Mutex
	gen uint64
	m   map[K]*entry[K, V]
	// lru is the sentinel of a ring: lru.next is the most recently used
	// entry, lru.prev the least.
	lru entry[K, V]
	cap int
	_   [40]byte // keeps two shards' locks off one cache line
}

type entry[K comparable, V any] struct {
	key        K
	val        V
	expires    int64 // unix nanoseconds
	prev, next *entry[K, V]
}

// New returns an empty cache. It panics on a Size below 1, a TTL that is
// not positive or a nil Hash: those are programming errors.
func New[K comparable, V any](o Options[K]) *Cache[K, V] {
	if o.Size < 1 || o.TTL <= 0 || o.Hash == nil {
		panic("cache: Size, TTL and Hash are required")
	}
	n := 1
	if o.Size >= 1024 {
		n = 16
	}
	c := &Cache[K, V]{shards: make([]shard[K, V], n), mask: uint64(n - 1), ttl: int64(o.TTL), hash: o.Hash, now: o.Now}
	if c.now == nil {
		c.now = time.Now
	}
	per := (o.Size + n - 1) / n
	for i := range c.shards {
		sh := &c.shards[i]
		sh.m = make(map[K]*entry[K, V])
		sh.cap = per
		sh.lru.next, sh.lru.prev = &sh.lru, &sh.lru
	}
	return c
}

func (c *Cache[K, V]) shard(k K) *shard[K, V] { return &c.shards[c.hash(k)&c.mask] }

// Get returns the value held for k, and whether there was one still within
// its TTL. A hit makes k the most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	sh := c.shard(k)
	now := c.now().UnixNano()
	sh.mu.Lock()
	e, ok := sh.m[k]
	if !ok {
		sh.mu.Unlock()
		var zero V
		return zero, false
	}
	if now >= e.expires {
		sh.remove(e)
		sh.mu.Unlock()
		var zero V
		return zero, false
	}
	sh.unlink(e)
	sh.pushFront(e)
	v := e.val
	sh.mu.Unlock()
	return v, true
}

// Gen returns the generation of k's shard. Take it before reading storage
// for a fill and pass it to Add.
func (c *Cache[K, V]) Gen(k K) uint64 {
	sh := c.shard(k)
	sh.mu.Lock()
	g := sh.gen
	sh.mu.Unlock()
	return g
}

// Add holds v for k unless k's shard was invalidated after gen was taken
// (then it reports false and holds nothing: what the caller read may be
// what the invalidation removed). At the size bound the least recently
// used entry of the shard goes.
func (c *Cache[K, V]) Add(k K, v V, gen uint64) bool {
	sh := c.shard(k)
	expires := c.now().UnixNano() + c.ttl
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != gen {
		return false
	}
	if e, ok := sh.m[k]; ok {
		e.val, e.expires = v, expires
		sh.unlink(e)
		sh.pushFront(e)
		return true
	}
	if len(sh.m) >= sh.cap {
		sh.remove(sh.lru.prev)
	}
	e := &entry[K, V]{key: k, val: v, expires: expires}
	sh.m[k] = e
	sh.pushFront(e)
	return true
}

// Delete forgets k and invalidates its shard, so that a fill in flight
// that read storage before the change is not added.
func (c *Cache[K, V]) Delete(k K) {
	sh := c.shard(k)
	sh.mu.Lock()
	sh.gen++
	if e, ok := sh.m[k]; ok {
		sh.remove(e)
	}
	sh.mu.Unlock()
}

// Clear forgets everything and invalidates every shard.
func (c *Cache[K, V]) Clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.gen++
		clear(sh.m)
		sh.lru.next, sh.lru.prev = &sh.lru, &sh.lru
		sh.mu.Unlock()
	}
}

// Len returns how many entries are held, expired ones not yet dropped
// included.
func (c *Cache[K, V]) Len() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

func (sh *shard[K, V]) unlink(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (sh *shard[K, V]) pushFront(e *entry[K, V]) {
	e.prev, e.next = &sh.lru, sh.lru.next
	sh.lru.next.prev = e
	sh.lru.next = e
}

func (sh *shard[K, V]) remove(e *entry[K, V]) {
	sh.unlink(e)
	delete(sh.m, e.key)
}

// seed keys StringHash for the life of the process.
var seed = maphash.MakeSeed()

// StringHash is a Hash for string keys.
func StringHash(s string) uint64 { return maphash.String(seed, s) }
