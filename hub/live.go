package hub

import (
	"context"
	"fmt"
	"sync"
	"time"

	"corkboard/board"
	"corkboard/ratelimit"
	"corkboard/rooms"
)

// Defaults of the live connection caps and the per-person push budget.
const (
	// DefaultMaxConnsPerUserBoard bounds one person's sockets on one board:
	// a person with many tabs and devices open, not 1,500 (each socket's
	// joins and leaves go to every other socket on the board).
	DefaultMaxConnsPerUserBoard = 20
	// DefaultMaxConnsPerUser bounds one person's sockets on the server.
	DefaultMaxConnsPerUser = 100
	// DefaultMaxConns bounds the sockets of the whole server
	// (docs/benchmarks.md measures 10,000).
	DefaultMaxConns = 10_000
	// DefaultUserPushRate and DefaultUserPushBurst bound the pushes of one
	// person over all of their sockets: 30 a second, 60 at once.
	DefaultUserPushRate  = 30
	DefaultUserPushBurst = 60
	// DefaultConnMessageRate and DefaultConnMessageBurst bound every
	// message a live connection sends (pushes, pointers, editing, pings,
	// invalid ones, WebSocket pings and pongs): 100 a second, 200 at once.
	// The browser client sends at most 20 pointers a second, an editing
	// message when an editor opens or closes and a ping every 25 s; a
	// client pushing over the socket adds at most 10 pushes a second (the
	// push budget): a third of the rate at most.
	DefaultConnMessageRate  = 100
	DefaultConnMessageBurst = 200
	// DefaultUserMessageRate and DefaultUserMessageBurst bound the messages
	// of one person over all their connections on this node: 300 a second,
	// 600 at once (fifteen tabs moving pointers at full speed together).
	DefaultUserMessageRate  = 300
	DefaultUserMessageBurst = 600
)

// liveUser is one person's live connections, push budget and message
// budget.
type liveUser struct {
	conns    int
	boards   map[string]int
	pushes   *ratelimit.Bucket
	messages *ratelimit.Bucket
}

// Lease is one admitted live connection: a slot under the caps, held
// until Release. Build it with Admit.
type Lease struct {
	h              *Hub
	boardID, email string
	pushes         *ratelimit.Bucket
	// messages is the connection's message budget, userMessages the
	// person's (AllowMessage).
	messages, userMessages *ratelimit.Bucket
	once                   sync.Once
}

// Admit reserves a live connection for email on boardID within the caps
// (Options.MaxConnsPerUserBoard, MaxConnsPerUser, MaxConns). Call it
// before upgrading the connection, so a refused client costs no socket.
// ERATELIMIT past a person's caps, EUNAVAILABLE past the server's. The lease must be released when the connection ends.
func (h *Hub) Admit(boardID, email string) (*Lease, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A closed hub still admits: Subscribe then refuses, and the
	// connection is closed going-away like every other.
	u := h.users[email]
	switch {
	case u != nil && u.boards[boardID] >= h.opts.MaxConnsPerUserBoard:
		return nil, capError(board.ERATELIMIT, fmt.Sprintf("Too many live connections to this board: at most %d per person. Close another tab or window first.", h.opts.MaxConnsPerUserBoard))
	case u != nil && u.conns >= h.opts.MaxConnsPerUser:
		return nil, capError(board.ERATELIMIT, fmt.Sprintf("Too many live connections: at most %d per person. Close another tab or window first.", h.opts.MaxConnsPerUser))
	case h.conns >= h.opts.MaxConns:
		return nil, capError(board.EUNAVAILABLE, "The server has as many live connections as it takes; try again shortly.")
	}
	if u == nil {
		u = &liveUser{
			boards:   map[string]int{},
			pushes:   ratelimit.NewBucket(h.opts.UserPushRate, h.opts.UserPushBurst),
			messages: ratelimit.NewBucket(h.opts.UserMessageRate, h.opts.UserMessageBurst),
		}
		h.users[email] = u
	}
	u.conns++
	u.boards[boardID]++
	h.conns++
	return &Lease{
		h: h, boardID: boardID, email: email, pushes: u.pushes,
		messages:     ratelimit.NewBucket(h.opts.ConnMessageRate, h.opts.ConnMessageBurst),
		userMessages: u.messages,
	}, nil
}

// AllowMessage spends one message of the connection's budget
// (Options.ConnMessageRate) and then one of the person's, shared by all of
// their connections on this node (Options.UserMessageRate). ERATELIMIT,
// naming the budget, when either is spent; a refusal spends nothing. Every
// message a connection receives is counted, whatever it is, so that no
// kind of message (an invalid one, a ping) can be sent faster than the
// budget: the live transport closes a connection past it.
func (l *Lease) AllowMessage() error {
	now := l.h.opts.Now()
	if _, ok := l.messages.Allow(now); !ok {
		return board.Errorf(board.ERATELIMIT, "Too many messages on this connection: at most %g a second (%d at once).", l.messages.PerSecond(), l.messages.Burst())
	}
	if _, ok := l.userMessages.Allow(now); !ok {
		l.messages.Undo()
		return board.Errorf(board.ERATELIMIT, "Too many messages from your connections together: at most %g a second (%d at once).", l.userMessages.PerSecond(), l.userMessages.Burst())
	}
	return nil
}

func capError(code, msg string) error {
	e := board.Errorf(code, "%s", msg)
	e.RetryAfter = 5
	return e
}

// Release gives the slot back. Safe to call twice.
func (l *Lease) Release() {
	l.once.Do(func() {
		h := l.h
		h.mu.Lock()
		defer h.mu.Unlock()
		h.conns--
		u := h.users[l.email]
		u.conns--
		if u.boards[l.boardID]--; u.boards[l.boardID] == 0 {
			delete(u.boards, l.boardID)
		}
		// The person's entry (and push budget) stays until the janitor
		// finds it unused and its budget full again, so that reconnecting
		// does not refill it.
	})
}

// Subscribe joins the leased board's room for the connection (see
// Hub.Subscribe); the subscriber spends the person's push budget.
func (l *Lease) Subscribe(ctx context.Context, connID string, sink rooms.Sink) (*rooms.Subscriber, rooms.Welcome, error) {
	return l.h.subscribe(ctx, l.boardID, rooms.Member{ConnID: connID, Email: l.email, Sink: sink, UserPushes: l.pushes})
}

// SubscribeHidden is Subscribe for a connection left out of presence
// (rooms.Member.Hidden): a read-only link's.
func (l *Lease) SubscribeHidden(ctx context.Context, connID string, sink rooms.Sink) (*rooms.Subscriber, rooms.Welcome, error) {
	return l.h.subscribe(ctx, l.boardID, rooms.Member{ConnID: connID, Email: l.email, Sink: sink, UserPushes: l.pushes, Hidden: true})
}

// Conns returns how many live connections are admitted.
func (h *Hub) Conns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns
}

// forgetIdleUsers drops the entries of people with no connection whose
// push and message budgets have refilled: nothing is lost by forgetting
// them.
func (h *Hub) forgetIdleUsers(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for email, u := range h.users {
		if u.conns == 0 && u.pushes.Full(now) && u.messages.Full(now) {
			delete(h.users, email)
		}
	}
}
