package ratelimit

import (
	"sync"
	"time"
)

// gcra is a token bucket kept as one time, the "theoretical arrival time"
// of the generic cell rate algorithm: the bucket is full when tat is not
// after now, and each token taken moves tat one interval on. With burst
// tokens at once, an event at now is let through when tat - now is at most
// (burst-1) intervals. All of it is integer nanoseconds, so a wait it
// answers is the exact instant the next token is back.
type gcra struct {
	tat time.Time
}

// take takes one token at now from a bucket of burst tokens refilled one
// every interval, or answers how long until one is back.
func (g *gcra) take(now time.Time, interval time.Duration, burst int) (wait time.Duration, ok bool) {
	t := g.tat
	if t.Before(now) {
		t = now
	}
	tolerance := interval * time.Duration(burst-1)
	if debt := t.Sub(now); debt > tolerance {
		return debt - tolerance, false
	}
	g.tat = t.Add(interval)
	return 0, true
}

// untake gives back one token take took.
func (g *gcra) untake(interval time.Duration) { g.tat = g.tat.Add(-interval) }

// full reports whether every token is back at now.
func (g *gcra) full(now time.Time) bool { return !g.tat.After(now) }

// Bucket is one token bucket: Burst tokens at once, one back every
// interval. A live connection's push budget is one, and so is a person's
// across their connections. It is safe for concurrent use.
type Bucket struct {
	perSecond float64
	interval  time.Duration
	burst     int

	mu sync.Mutex
	g  gcra
}

// NewBucket returns a full bucket of burst tokens (at least one) refilled
// at perSecond tokens a second (at least one a week).
func NewBucket(perSecond float64, burst int) *Bucket {
	interval := MaxRateWindow
	if perSecond > 0 {
		interval = min(time.Duration(float64(time.Second)/perSecond), MaxRateWindow)
	}
	return &Bucket{perSecond: perSecond, interval: max(interval, 1), burst: max(burst, 1)}
}

// PerSecond returns the refill rate the bucket was made with, for messages.
func (b *Bucket) PerSecond() float64 { return b.perSecond }

// Burst returns how many tokens the bucket holds when full.
func (b *Bucket) Burst() int { return b.burst }

// Allow takes one token at now, or takes nothing and answers how long
// until one is back.
func (b *Bucket) Allow(now time.Time) (wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.g.take(now, b.interval, b.burst)
}

// Undo gives back a token Allow took: for a caller that spends from two
// buckets and is refused by the second, so that a refusal spends nothing.
func (b *Bucket) Undo() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.g.untake(b.interval)
}

// Full reports whether every token is back at now: forgetting the bucket
// then changes no later answer.
func (b *Bucket) Full(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.g.full(now)
}

// Buckets is a token bucket per key, each of count tokens refilled evenly
// over one window; the count may differ per key and per call (a plan's
// requests per minute, which a plan change alters). It keeps at most
// maxKeys keys and forgets, on every call, the buckets that are full again
// (a bucket untouched for a window is full). It is safe for concurrent use.
type Buckets struct {
	window time.Duration

	mu   sync.Mutex
	keys keys[keyedBucket] // mark: the last token taken
}

type keyedBucket struct {
	g     gcra
	count int
}

// NewBuckets returns buckets refilled over window, remembering at most
// maxKeys keys (DefaultMaxKeys when maxKeys ≤ 0). At capacity a new key
// evicts the one whose last token was taken longest ago.
func NewBuckets(window time.Duration, maxKeys int) *Buckets {
	window = max(window, time.Nanosecond)
	return &Buckets{window: window, keys: newKeys[keyedBucket](window, maxKeys)}
}

// Allow takes one token at now from key's bucket of count tokens (at
// least one), or takes nothing and answers how long until one is back.
// When count differs from the bucket's last call, the tokens in hand are
// kept (at most count) and the pace changes.
func (b *Buckets) Allow(key string, count int, now time.Time) (wait time.Duration, ok bool) {
	count = max(count, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	// Each call forgets the buckets full again: amortised constant time,
	// and no sweeper to run.
	b.keys.purge(now)
	e := b.keys.get(key)
	interval := max(b.window/time.Duration(count), 1)
	switch {
	case e.state.count == 0:
		e.state.count = count
	case e.state.count != count:
		e.state.g = repace(e.state.g, now, max(b.window/time.Duration(e.state.count), 1), interval, count-e.state.count)
		e.state.count = count
		// The new debt is at most a window from now: marking now keeps
		// "untouched for a window means full" true.
		b.keys.markAt(e, now)
	}
	wait, ok = e.state.g.take(now, interval, count)
	if ok {
		b.keys.markAt(e, now)
	}
	return wait, ok
}

// repace moves a bucket to a new interval keeping the tokens in hand (at
// most the new count): the debt (tat - now, in old intervals) is the
// tokens missing from the old count, and the new count has grown tokens
// more (negative when it shrank), so the bucket now misses debt + grown,
// never fewer than none; that is never more than the new count.
func repace(g gcra, now time.Time, oldInterval, newInterval time.Duration, grown int) gcra {
	debt := max(g.tat.Sub(now), 0)
	missing := float64(debt)/float64(oldInterval) + float64(grown)
	if missing <= 0 {
		return gcra{}
	}
	return gcra{tat: now.Add(time.Duration(missing * float64(newInterval)))}
}

// Len returns how many keys the buckets remember.
func (b *Buckets) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keys.len()
}
