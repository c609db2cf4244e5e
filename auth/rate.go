package auth

import (
	"container/list"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds ParseRate accepts. The count bound also bounds the memory of one
// limiter key (one timestamp per counted event).
const (
	MaxRateCount  = 10000
	MinRateWindow = time.Second
	MaxRateWindow = 7 * 24 * time.Hour
)

// Rate is "at most Count events in any Window". It implements flag.Value, so
// a command can bind a flag to it directly.
type Rate struct {
	Count  int
	Window time.Duration
}

// ParseRate parses "count/window", e.g. "5/15m" (count 1 to 10000, window a
// Go duration from 1s to 168h).
func ParseRate(s string) (Rate, error) {
	c, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want count/window, e.g. 5/15m", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if err != nil || n < 1 || n > MaxRateCount {
		return Rate{}, fmt.Errorf("rate %q: count must be a whole number from 1 to %d", s, MaxRateCount)
	}
	d, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || d < MinRateWindow || d > MaxRateWindow {
		return Rate{}, fmt.Errorf("rate %q: window must be a duration from %s to %s, e.g. 15m", s, MinRateWindow, MaxRateWindow)
	}
	return Rate{Count: n, Window: d}, nil
}

// String formats r the way ParseRate reads it.
func (r Rate) String() string {
	if r.Count == 0 && r.Window == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%s", r.Count, shortDuration(r.Window))
}

// Set parses s into r (flag.Value).
func (r *Rate) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// shortDuration drops the zero units time.Duration.String prints ("15m0s").
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// defaultMaxKeys bounds how many keys (addresses or networks) one limiter
// remembers; past it the key whose last counted event is oldest is forgotten.
const defaultMaxKeys = 100_000

// limiter is an in-memory sliding-window log: a key may have at most
// rate.Count events in any rate.Window. Memory is bounded by maxKeys keys
// of at most rate.Count timestamps each.
//
// Keys sit in a list ordered by their newest counted event, newest at the
// front. A key is empty (nothing left in its window) exactly when its newest
// event has left the window, so if any key is empty the back one is. That
// makes both eviction and the sweep look at the back only: a new key at
// capacity evicts exactly one entry, O(1), and it is an empty one whenever
// one exists. Only when every remembered key is live does a live key go —
// the one idle longest. Pushing a given key out therefore takes maxKeys
// other keys with a counted event inside one window (docs/auth.md works out
// what that costs an attacker).
type limiter struct {
	rate    Rate
	maxKeys int

	mu     sync.Mutex
	keys   map[string]*list.Element // of *limiterEntry
	byLast *list.List               // front: newest counted event
	// scanned counts the entries eviction and purge have looked at, so a
	// test can hold the amortised cost to its promise.
	scanned int
}

type limiterEntry struct {
	key   string
	times []time.Time // ascending
}

func newLimiter(r Rate, maxKeys int) *limiter {
	if maxKeys <= 0 {
		maxKeys = defaultMaxKeys
	}
	return &limiter{rate: r, maxKeys: maxKeys, keys: map[string]*list.Element{}, byLast: list.New()}
}

// allow counts one event for key at now, unless key is at its limit; then it
// counts nothing and answers how long until the oldest event leaves the window.
func (l *limiter) allow(key string, now time.Time) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.keys[key]
	if el == nil {
		for l.byLast.Len() >= l.maxKeys {
			// The back entry's newest event is the oldest of all: empty if
			// any entry is, else the key idle longest.
			l.scanned++
			l.removeLocked(l.byLast.Back())
		}
		el = l.byLast.PushBack(&limiterEntry{key: key})
		l.keys[key] = el
	}
	e := el.Value.(*limiterEntry)
	e.drop(now.Add(-l.rate.Window))
	if len(e.times) >= l.rate.Count {
		// A refused request leaves the entry where it is: its newest
		// counted event, which the order is by, did not change.
		return e.times[0].Add(l.rate.Window).Sub(now), false
	}
	if n := len(e.times); n > 0 && now.Before(e.times[n-1]) {
		// The wall clock stepped back: keep the log ascending, at the cost
		// of counting this event a little longer.
		now = e.times[n-1]
	}
	e.times = append(e.times, now)
	l.byLast.MoveToFront(el)
	return 0, true
}

// drop forgets events at or before cut, reusing the slice's array.
func (e *limiterEntry) drop(cut time.Time) {
	i := 0
	for i < len(e.times) && !e.times[i].After(cut) {
		i++
	}
	if i > 0 {
		n := copy(e.times, e.times[i:])
		e.times = e.times[:n]
	}
}

// live reports whether e has an event after cut.
func (e *limiterEntry) live(cut time.Time) bool {
	n := len(e.times)
	return n > 0 && e.times[n-1].After(cut)
}

func (l *limiter) removeLocked(el *list.Element) {
	delete(l.keys, el.Value.(*limiterEntry).key)
	l.byLast.Remove(el)
}

// purge forgets every key with no event in the window ending at now. It
// stops at the first live entry from the back (all in front of it are newer),
// so it costs what it removes plus one. Should the wall clock have stepped
// back, a few empty keys may stay until they reach the back; the key bound
// holds regardless.
func (l *limiter) purge(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cut := now.Add(-l.rate.Window)
	for el := l.byLast.Back(); el != nil; el = l.byLast.Back() {
		l.scanned++
		if el.Value.(*limiterEntry).live(cut) {
			return
		}
		l.removeLocked(el)
	}
}

// len is the number of keys remembered.
func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byLast.Len()
}

// ipKey is the per-IP limit's key for a client address. An IPv6 client
// usually controls a whole /64, so IPv6 addresses count per /64 network.
func ipKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil {
		return addr
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
