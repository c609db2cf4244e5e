package hub

import (
	"context"
	"fmt"
	"sync"

	"corkboard/board"
	"corkboard/rooms"
)

// Defaults of the long poll caps (docs/sync.md, "Long polling").
const (
	// DefaultMaxWaitsPerUser bounds one person's held long polls: one per
	// board they watch over REST, with room for several devices.
	DefaultMaxWaitsPerUser = 50
	// DefaultMaxWaits bounds the long polls the server holds in all
	// (docs/benchmarks.md measures 10,000).
	DefaultMaxWaits = 10_000
)

// waitCaps are the long poll counts, guarded by Hub.mu.
type waitCaps struct {
	total  int
	byUser map[string]int
}

// Wait holds a pull on boardID until the board's version passes since (see
// rooms.Room.Wait), within the caps: ERATELIMIT (with RetryAfter) past
// Options.MaxWaitsPerUser waits of email, EUNAVAILABLE past
// Options.MaxWaits in all or after Close. The caller must call the
// waiter's Stop, which gives the slot back.
func (h *Hub) Wait(ctx context.Context, boardID, email string, since int64) (*rooms.Waiter, error) {
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return nil, errClosed
	case h.waits.byUser[email] >= h.opts.MaxWaitsPerUser:
		h.mu.Unlock()
		return nil, waitCapError(board.ERATELIMIT, fmt.Sprintf("Too many waiting pulls: at most %d per person. Pull without wait, or stop another.", h.opts.MaxWaitsPerUser))
	case h.waits.total >= h.opts.MaxWaits:
		h.mu.Unlock()
		return nil, waitCapError(board.EUNAVAILABLE, "The server holds as many waiting pulls as it takes; pull without wait, or retry shortly.")
	}
	if h.waits.byUser == nil {
		h.waits.byUser = map[string]int{}
	}
	h.waits.total++
	h.waits.byUser[email]++
	h.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.waits.total--
			if h.waits.byUser[email]--; h.waits.byUser[email] == 0 {
				delete(h.waits.byUser, email)
			}
		})
	}
	w, err := retry(ctx, h, boardID, func(r *rooms.Room) (*rooms.Waiter, error) {
		return r.Wait(ctx, rooms.WaitFor{Since: since, Email: email, OnStop: release})
	})
	if err != nil {
		release()
		return nil, err
	}
	return w, nil
}

func waitCapError(code, msg string) error {
	e := board.Errorf(code, "%s", msg)
	e.Field = "wait"
	e.RetryAfter = 5
	return e
}

// Waits returns how many long polls the hub holds.
func (h *Hub) Waits() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waits.total
}
