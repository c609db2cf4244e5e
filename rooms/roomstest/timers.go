package roomstest

import (
	"sync"
	"time"
)

// Timers is a rooms.Options.AfterFunc that runs nothing by itself: a test
// fires what is armed when it chooses (the presence tick, the idle sweep,
// the view throttle), so that nothing depends on how fast the machine is.
type Timers struct {
	mu      sync.Mutex
	pending []func()
}

// NewTimers returns Timers with nothing armed.
func NewTimers() *Timers { return &Timers{} }

// AfterFunc implements rooms.Options.AfterFunc: f waits for Fire.
func (t *Timers) AfterFunc(_ time.Duration, f func()) {
	t.mu.Lock()
	t.pending = append(t.pending, f)
	t.mu.Unlock()
}

// Fire runs every function armed before the call, in order, and returns
// how many ran. What they arm meanwhile waits for the next Fire.
func (t *Timers) Fire() int {
	t.mu.Lock()
	fs := t.pending
	t.pending = nil
	t.mu.Unlock()
	for _, f := range fs {
		f()
	}
	return len(fs)
}
