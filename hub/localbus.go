package hub

import (
	"context"
	"fmt"
	"sync"
)

// LocalBus connects hubs in one process that share one store instance:
// tests of several nodes, and an embedded store that only one process may
// open. Each hub gets an end of its own (End). Delivery is synchronous and
// in order; an end can be made deaf (its notes are lost) and reconnected,
// as a real bus's listener can.
type LocalBus struct {
	mu   sync.Mutex
	ends []*LocalEnd
}

// NewLocalBus returns a bus with no ends.
func NewLocalBus() *LocalBus { return &LocalBus{} }

// End returns a new end of the bus, for one hub (Options.Bus).
func (b *LocalBus) End() *LocalEnd {
	e := &LocalEnd{bus: b, lost: make(chan struct{}, 1024)}
	b.mu.Lock()
	b.ends = append(b.ends, e)
	b.mu.Unlock()
	return e
}

// LocalEnd is one hub's end of a LocalBus; it implements Bus.
type LocalEnd struct {
	bus *LocalBus

	mu      sync.Mutex // held while delivering: one delivery at a time, in order
	receive func([]byte)
	resync  func()
	deaf    bool
	got     int
	lost    chan struct{}
}

// Publish hands payload to every end that listens and is not deaf, this
// one included. A payload over MaxNotePayload is refused, as PostgreSQL
// refuses a NOTIFY over its limit.
func (e *LocalEnd) Publish(ctx context.Context, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(payload) > MaxNotePayload {
		return fmt.Errorf("local bus: payload of %d bytes is over %d", len(payload), MaxNotePayload)
	}
	e.bus.mu.Lock()
	ends := append([]*LocalEnd(nil), e.bus.ends...)
	e.bus.mu.Unlock()
	for _, to := range ends {
		to.deliver(e, payload)
	}
	return nil
}

func (e *LocalEnd) deliver(from *LocalEnd, payload []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.receive == nil {
		return
	}
	if e.deaf {
		if from != e {
			select {
			case e.lost <- struct{}{}:
			default:
			}
		}
		return
	}
	e.got++
	e.receive(payload)
}

// Listen implements Bus: it calls resync at once (the end is connected).
func (e *LocalEnd) Listen(receive func([]byte), resync func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.receive, e.resync = receive, resync
	resync()
}

// SetDeaf makes the end lose every payload published to it (deaf true),
// as a listener that lost its connection does, or hear them again.
func (e *LocalEnd) SetDeaf(deaf bool) {
	e.mu.Lock()
	e.deaf = deaf
	e.mu.Unlock()
}

// Reconnect makes the end hear again and calls its resync, as a listener
// that reconnected does.
func (e *LocalEnd) Reconnect() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deaf = false
	if e.resync != nil {
		e.resync()
	}
}

// Received returns how many payloads the end has handed to its hub.
func (e *LocalEnd) Received() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got
}

// Lost receives once for every payload of another end that this end lost
// while deaf (up to 1024 not yet received), so a test knows a note was
// lost before it repairs the loss.
func (e *LocalEnd) Lost() <-chan struct{} { return e.lost }
