package pullstream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"corkboard/board"
)

// Defaults of the large-read gate (transport.Config; docs/sync.md, "Large reads").
const (
	// DefaultLargeReadsPerUser is how many large reads one person may
	// have sent at once.
	DefaultLargeReadsPerUser = 4
	// DefaultLargeReads is how many large reads the server sends at once.
	DefaultLargeReads = 16
	// DefaultLargeReadWait is how long a large read waits for one of the
	// server's slots before 503.
	DefaultLargeReadWait = 5 * time.Second
)

// Retry-After of the gate's refusals, in seconds.
const (
	largeReadUserRetry   = 2
	largeReadServerRetry = 5
)

// Gate bounds the pulls and live catch-ups whose answer is larger
// than LargeReadBuffer that are being sent at once: perUser per person
// (past it 429 at once), and len(slots) in all (past it, after waiting up
// to wait for a slot, 503). A streamed answer costs a buffer, not its
// size, but it keeps a store read open and the CPU busy for as long as it
// runs; the gate keeps a burst of full pulls of huge boards from taking
// the server.
type Gate struct {
	perUser int
	wait    time.Duration
	slots   chan struct{}

	mu    sync.Mutex
	users map[string]int
}

func NewGate(perUser, total int, wait time.Duration) *Gate {
	g := &Gate{perUser: perUser, wait: wait, users: map[string]int{}}
	if g.perUser <= 0 {
		g.perUser = DefaultLargeReadsPerUser
	}
	if g.wait <= 0 {
		g.wait = DefaultLargeReadWait
	}
	n := total
	if n <= 0 {
		n = DefaultLargeReads
	}
	g.slots = make(chan struct{}, n)
	return g
}

// Acquire takes a slot for email's large read, or answers ERATELIMIT
// (the person's cap) or EUNAVAILABLE (the server's, after the wait), both
// with RetryAfter, or ctx's error. The caller calls release once done.
func (g *Gate) Acquire(ctx context.Context, email string) (release func(), err error) {
	g.mu.Lock()
	if g.users[email] >= g.perUser {
		g.mu.Unlock()
		return nil, &board.Error{Code: board.ERATELIMIT, RetryAfter: largeReadUserRetry,
			Message: fmt.Sprintf("Too many large reads at once: at most %d per person. Try again when one has finished.", g.perUser)}
	}
	g.users[email]++
	g.mu.Unlock()
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			g.leave(email)
			return nil, &board.Error{Code: board.EUNAVAILABLE, RetryAfter: largeReadServerRetry,
				Message: "Too many large reads at once on this server; try again shortly."}
		case <-ctx.Done():
			g.leave(email)
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-g.slots
			g.leave(email)
		})
	}, nil
}

func (g *Gate) leave(email string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users[email]--; g.users[email] <= 0 {
		delete(g.users, email)
	}
}
