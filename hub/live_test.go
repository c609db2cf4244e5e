package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist/persisttest"
	"corkboard/rooms"
	"corkboard/rooms/roomstest"
)

func TestAdmitCaps(t *testing.T) {
	db, c, _ := persisttest.Open(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	h := hub.New(db, hub.Options{Now: c.Now, SweepEvery: -1, MaxConnsPerUserBoard: 2, MaxConnsPerUser: 3, MaxConns: 4})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	var leases []*hub.Lease
	steps := []struct {
		email, board string
		code         string // "" admitted
		msg          string
	}{
		{"a@example.com", "b1", "", ""},
		{"a@example.com", "b1", "", ""},
		{"a@example.com", "b1", board.ERATELIMIT, "at most 2 per person"},
		{"a@example.com", "b2", "", ""},
		{"a@example.com", "b3", board.ERATELIMIT, "at most 3 per person"},
		{"b@example.com", "b1", "", ""},
		{"c@example.com", "b1", board.EUNAVAILABLE, "live connections"},
	}
	for i, s := range steps {
		l, err := h.Admit(s.board, s.email)
		if board.ErrorCode(err) != s.code && !(s.code == "" && err == nil) {
			t.Fatalf("step %d (%s on %s): err=%v, want code %q", i+1, s.email, s.board, err, s.code)
		}
		if s.code != "" {
			if !strings.Contains(board.ErrorMessage(err), s.msg) {
				t.Fatalf("step %d: message %q, want %q in it", i+1, board.ErrorMessage(err), s.msg)
			}
			continue
		}
		leases = append(leases, l)
	}
	if got := h.Conns(); got != 4 {
		t.Fatalf("Conns=%d, want 4", got)
	}
	leases[0].Release()
	leases[0].Release() // twice is safe
	if got := h.Conns(); got != 3 {
		t.Fatalf("Conns after a release=%d, want 3", got)
	}
	if _, err := h.Admit("b1", "a@example.com"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}

// TestSubscribeHoldsAdmission: Hub.Subscribe counts against the caps until
// the subscriber leaves.
func TestSubscribeHoldsAdmission(t *testing.T) {
	db, c, _ := persisttest.Open(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), "b1")
	h := hub.New(db, hub.Options{Now: c.Now, SweepEvery: -1, MaxConnsPerUserBoard: 1})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	ctx := context.Background()
	s, _, err := h.Subscribe(ctx, "b1", "A", "a@example.com", roomstest.NewQueue(16))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Subscribe(ctx, "b1", "B", "a@example.com", roomstest.NewQueue(16)); board.ErrorCode(err) != board.ERATELIMIT {
		t.Fatalf("second subscription: err=%v, want ERATELIMIT", err)
	}
	s.Leave()
	s2, _, err := h.Subscribe(ctx, "b1", "C", "a@example.com", roomstest.NewQueue(16))
	if err != nil {
		t.Fatalf("after Leave: %v", err)
	}
	s2.Leave()
	if got := h.Conns(); got != 0 {
		t.Fatalf("Conns=%d after every Leave, want 0", got)
	}
}

// TestPushBudgets: a connection's budget and the person's shared one; a
// refusal spends nothing; budgets refill with the clock.
func TestPushBudgets(t *testing.T) {
	db, c, _ := persisttest.Open(t, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), "b1", "b2")
	h := hub.New(db, hub.Options{Now: c.Now, SweepEvery: -1, IdleTimeout: time.Hour,
		Room: rooms.Options{PushRate: 1, PushBurst: 3}, UserPushRate: 2, UserPushBurst: 5})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	ctx := context.Background()
	sub := func(boardID, id, email string) *rooms.Subscriber {
		s, _, err := h.Subscribe(ctx, boardID, id, email, roomstest.NewQueue(256))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Leave)
		return s
	}
	a1, a2, b := sub("b1", "A1", "a@example.com"), sub("b2", "A2", "a@example.com"), sub("b1", "B", "b@example.com")
	// allowed counts how many of n pushes s may make now.
	allowed := func(s *rooms.Subscriber, n int) (ok int, last error) {
		for range n {
			if err := s.AllowPush(); err != nil {
				last = err
				if board.ErrorCode(err) != board.ERATELIMIT {
					t.Fatalf("AllowPush: %v, want ERATELIMIT", err)
				}
				continue
			}
			ok++
		}
		return ok, last
	}
	if ok, err := allowed(a1, 10); ok != 3 || !strings.Contains(board.ErrorMessage(err), "on this connection") {
		t.Fatalf("a1: %d allowed (%v), want 3 then the connection's refusal", ok, err)
	}
	// a's other connection (another board) shares the person's 5.
	if ok, err := allowed(a2, 10); ok != 2 || !strings.Contains(board.ErrorMessage(err), "connections together") {
		t.Fatalf("a2: %d allowed (%v), want 2 then the person's refusal", ok, err)
	}
	// Another person has their own budgets.
	if ok, _ := allowed(b, 10); ok != 3 {
		t.Fatalf("b: %d allowed, want 3", ok)
	}
	// One second refills a1's connection by 1 and a's person budget by 2;
	// a2's refusals spent nothing of its own 3, so it takes the 2nd.
	c.Advance(time.Second)
	if ok, _ := allowed(a1, 10); ok != 1 {
		t.Fatalf("a1 after 1s: %d allowed, want 1", ok)
	}
	if ok, _ := allowed(a2, 10); ok != 1 {
		t.Fatalf("a2 after 1s: %d allowed, want 1", ok)
	}
	_, err := allowed(a2, 1)
	if e, ok := err.(*board.Error); !ok || e.RetryAfter < 1 {
		t.Fatalf("refusal %#v, want ERATELIMIT with RetryAfter ≥ 1", err)
	}
}
