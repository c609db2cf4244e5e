package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/hub"
	"corkboard/rooms"
)

// frozenHub is a hub whose clock stands still (no budget refills during a
// test), with the given message budgets.
func frozenHub(connBurst, userBurst int) option {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	return withHub(hub.Options{
		Now:              func() time.Time { return t0 },
		ConnMessageBurst: connBurst,
		UserMessageBurst: userBurst,
	})
}

// wantClosedTooMany reads until the server closes c and fails unless the
// code is 4029; no answer may come before the close.
func wantClosedTooMany(t *testing.T, c *websocket.Conn, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveWait)
	defer cancel()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("%s: the server did not close the connection", what)
			}
			if got := websocket.CloseStatus(err); got != rooms.CloseTooManyMessages {
				t.Fatalf("%s: closed with %d (%v), want %d", what, got, err, rooms.CloseTooManyMessages)
			}
			return
		}
		if s := string(data); strings.Contains(s, `"pong"`) || strings.Contains(s, `"error"`) {
			t.Fatalf("%s: answered %s, want the connection closed", what, s)
		}
	}
}

// TestLiveMessageBudgetPerConnection: every message a connection sends
// spends its budget, whatever its kind, invalid ones included: the budget
// passes, one more closes the connection with 4029, unanswered.
func TestLiveMessageBudgetPerConnection(t *testing.T) {
	const budget = 6
	for _, tc := range []struct {
		name   string
		msg    string
		answer string // the type of its answer; "" none
	}{
		{"Ping", `{"type":"ping","id":"p"}`, "pong"},
		{"UnknownType", `{"type":"nope"}`, "error"},
		{"Malformed", `{"type":`, "error"},
		{"NotJSON", "\x00\x01", "error"},
		{"Pointer", `{"type":"pointer","x":1,"y":2}`, ""},
		{"Editing", `{"type":"editing","noteId":"n1"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, frozenHub(budget, 1000))
			owner := e.claim("owner@example.com", "b1")
			c, _ := e.connect(owner, "b1", "")
			defer c.CloseNow()
			for range budget - 1 {
				send(t, c, []byte(tc.msg))
				if tc.answer != "" {
					readType(t, c, tc.answer)
				}
			}
			// The last of the budget: a ping, whose pong says every message
			// so far was taken and the connection is open.
			send(t, c, map[string]any{"type": "ping", "id": "last"})
			if m := readType(t, c, "pong"); m.ID != "last" {
				t.Fatalf("pong %+v, want id last", m)
			}
			send(t, c, []byte(tc.msg))
			wantClosedTooMany(t, c, "message "+fmt.Sprint(budget+1))
		})
	}
}

// TestLiveMessageBudgetCountsWebSocketPings: WebSocket ping frames (each
// costs the server a pong) spend the same budget.
func TestLiveMessageBudgetCountsWebSocketPings(t *testing.T) {
	const budget = 5
	e := newEnv(t, frozenHub(budget, 1000))
	owner := e.claim("owner@example.com", "b1")
	c, _ := e.connect(owner, "b1", "")
	defer c.CloseNow()
	// Ping waits for its pong, which a reader must take: the reader's last
	// error is the close.
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				closed <- err
				return
			}
		}
	}()
	for i := range budget {
		ctx, cancel := context.WithTimeout(context.Background(), liveWait)
		err := c.Ping(ctx)
		cancel()
		if err != nil {
			t.Fatalf("ping %d of %d: %v", i+1, budget, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveWait)
	defer cancel()
	if err := c.Ping(ctx); err == nil {
		t.Fatalf("ping %d was answered", budget+1)
	}
	select {
	case err := <-closed:
		if got := websocket.CloseStatus(err); got != rooms.CloseTooManyMessages {
			t.Fatalf("closed with %d (%v), want %d", got, err, rooms.CloseTooManyMessages)
		}
	case <-ctx.Done():
		t.Fatal("the server did not close the connection")
	}
}

// TestLiveMessageBudgetPerPerson: one person's 16 connections share one
// budget: together they pass it, then each one's next message closes it
// with 4029. Another person's connection on the same board is unaffected:
// its pings are answered and it stays open.
func TestLiveMessageBudgetPerPerson(t *testing.T) {
	const conns, perConn, userBudget = 16, 3, 16*3 + 2
	e := newEnv(t, frozenHub(1000, userBudget))
	alice := e.claim("alice@example.com", "b1")
	bob := e.invite(alice, "b1", "bob@example.com", "pro")
	cb, _ := e.connect(bob, "b1", "")
	defer cb.CloseNow()
	cs := make([]*websocket.Conn, conns)
	for i := range cs {
		cs[i], _ = e.connect(alice, "b1", "")
		defer cs[i].CloseNow()
	}
	spent := 0
	for i, c := range cs {
		n := perConn
		if i == 0 {
			n += userBudget - conns*perConn // the rest of the budget
		}
		for j := range n {
			id := fmt.Sprintf("c%d-%d", i, j)
			send(t, c, map[string]any{"type": "ping", "id": id})
			if m := readType(t, c, "pong"); m.ID != id {
				t.Fatalf("pong %+v, want %s", m, id)
			}
			spent++
		}
	}
	if spent != userBudget {
		t.Fatalf("spent %d, want %d", spent, userBudget)
	}
	for i, c := range cs {
		send(t, c, []byte(`{"type":"nope"}`))
		wantClosedTooMany(t, c, fmt.Sprintf("alice's connection %d past her budget", i))
	}
	// Bob has his own budget: his pings are answered.
	for j := range 10 {
		id := fmt.Sprintf("bob-%d", j)
		send(t, cb, map[string]any{"type": "ping", "id": id})
		if m := readType(t, cb, "pong"); m.ID != id {
			t.Fatalf("bob's pong %+v, want %s", m, id)
		}
	}
	// And REST is not counted: Alice still pulls.
	if got := e.pull(alice, "b1", 0); got == nil {
		t.Fatal("alice's pull failed")
	}
	_ = http.StatusOK
}
