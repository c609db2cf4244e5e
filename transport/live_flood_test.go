package transport_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/transport/livewire"
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
			if got := websocket.CloseStatus(err); got != livewire.CloseTooManyMessages {
				t.Fatalf("%s: closed with %d (%v), want %d", what, got, err, livewire.CloseTooManyMessages)
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
		if got := websocket.CloseStatus(err); got != livewire.CloseTooManyMessages {
			t.Fatalf("closed with %d (%v), want %d", got, err, livewire.CloseTooManyMessages)
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
}

// flood is one flooding client of the benchmark below: it opens a live
// socket, reads and counts (answered) what it is sent, and writes msg as
// fast as the socket takes it (sent: into the kernel's buffers, read by
// the server or not); when the server closes the socket it opens another
// at once, as an attacker would, until ctx ends.
func flood(ctx context.Context, url, session string, msg []byte, sent, answered, dials *atomic.Int64) {
	h := http.Header{"Cookie": {"session=" + session}}
	for ctx.Err() == nil {
		c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
		dials.Add(1)
		if err != nil {
			continue // refused (a cap) or ending: try again
		}
		go func() {
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				answered.Add(1)
			}
		}()
		for c.Write(ctx, websocket.MessageText, msg) == nil {
			sent.Add(1)
		}
		c.CloseNow()
	}
}

// BenchmarkPullUnderFlood is another person's no-change pull (GET /sync,
// over HTTP) while one person's 16 sockets flood the server with pings
// and invalid messages, side by side in one run: "quiet" (no flood),
// "unbudgeted" (budgets so large no flood meets them: the server before
// issue 21) and "budgeted" (the default budgets: each flooding socket is
// closed with 4029 and opened again at once). It reports the pull's p50
// and p99, and a second: the flood's messages written, the messages the
// server sent the flooders (answers, joins and leaves of their sockets)
// and the sockets they opened. The flooders run in this process: their
// own CPU is part of what the pull competes with.
//
//	go test -run '^$' -bench PullUnderFlood -benchtime 2000x ./transport/
func BenchmarkPullUnderFlood(b *testing.B) {
	unlimited := hub.Options{ConnMessageRate: 1e9, ConnMessageBurst: 1e9, UserMessageRate: 1e9, UserMessageBurst: 1e9}
	for _, bc := range []struct {
		name  string
		opts  hub.Options
		flood bool
	}{
		{"quiet", hub.Options{}, false},
		{"unbudgeted", unlimited, true},
		{"budgeted", hub.Options{}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b, withHub(bc.opts), withLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
			alice := e.claim("alice@example.com", "b1")
			bob := e.invite(alice, "b1", "bob@example.com", "pro")
			e.pushOK(alice, "b1", notePush(board.Note{ID: "n1"}))
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var sent, answered, dials atomic.Int64
			if bc.flood {
				url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/api/boards/b1/live"
				for i := range 16 {
					msg := []byte(`{"type":"ping","id":"x"}`)
					if i%2 == 1 {
						msg = []byte(`{"type":"nope"}`)
					}
					wg.Go(func() { flood(ctx, url, alice, msg, &sent, &answered, &dials) })
				}
			}
			req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/api/boards/b1/sync?since=1", nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Cookie", "session="+bob)
			client := &http.Client{}
			took := make([]time.Duration, 0, b.N)
			start := time.Now()
			for b.Loop() {
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("pull: %d", res.StatusCode)
				}
				took = append(took, time.Since(t0))
			}
			elapsed := time.Since(start)
			cancel()
			wg.Wait()
			slices.Sort(took)
			at := func(p float64) float64 {
				return float64(took[min(len(took)-1, int(float64(len(took))*p))].Microseconds()) / 1000
			}
			b.ReportMetric(at(0.5), "pull-p50-ms")
			b.ReportMetric(at(0.99), "pull-p99-ms")
			b.ReportMetric(float64(sent.Load())/elapsed.Seconds(), "flood-sent/s")
			b.ReportMetric(float64(answered.Load())/elapsed.Seconds(), "flood-answers/s")
			b.ReportMetric(float64(dials.Load())/elapsed.Seconds(), "flood-dials/s")
		})
	}
}
