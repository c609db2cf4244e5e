package ratelimit

import (
	"sync"
	"time"
)

// Window is an exact sliding-window limit per key: a key may have at most
// Count events in any Window. It keeps the times of the counted events (a
// log), at most Count per key and at most maxKeys keys. It is safe for
// concurrent use.
type Window struct {
	rate Rate

	mu   sync.Mutex
	keys keys[[]time.Time] // ascending event times; mark: the newest
}

// NewWindow returns a sliding window of r over at most maxKeys keys
// (DefaultMaxKeys when maxKeys ≤ 0).
func NewWindow(r Rate, maxKeys int) *Window {
	r = r.normal()
	return &Window{rate: r, keys: newKeys[[]time.Time](r.Window, maxKeys)}
}

// Rate returns the window's rate.
func (w *Window) Rate() Rate { return w.rate }

// Allow counts one event for key at now, unless key is at its limit; then
// it counts nothing and answers how long until the oldest counted event
// leaves the window, which is exactly when the next event would be let
// through.
func (w *Window) Allow(key string, now time.Time) (wait time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.keys.get(key)
	e.state = dropUntil(e.state, now.Add(-w.rate.Window))
	times := e.state
	if len(times) >= w.rate.Count {
		// A refused event leaves the entry where it is: its newest
		// counted event, which the order is by, did not change.
		return times[0].Add(w.rate.Window).Sub(now), false
	}
	if n := len(times); n > 0 && now.Before(times[n-1]) {
		// The wall clock stepped back: keep the log ascending, at the cost
		// of counting this event a little longer.
		now = times[n-1]
	}
	e.state = append(times, now)
	w.keys.markAt(e, now)
	return 0, true
}

// dropUntil forgets the times at or before cut, reusing the slice's array.
func dropUntil(times []time.Time, cut time.Time) []time.Time {
	i := 0
	for i < len(times) && !times[i].After(cut) {
		i++
	}
	if i == 0 {
		return times
	}
	n := copy(times, times[i:])
	return times[:n]
}

// Purge forgets every key with no event in the window ending at now, in
// time proportional to what it forgets.
func (w *Window) Purge(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keys.purge(now)
}

// Len returns how many keys the window remembers.
func (w *Window) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys.len()
}
