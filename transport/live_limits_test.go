package transport_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// dialStatus dials and returns the HTTP status of a refused handshake and
// its JSON error body; it fails the test when the dial succeeds.
func (e *env) dialRefused(session, id string) (int, string, string) {
	e.tb.Helper()
	c, res, err := e.dial(session, id, "", "")
	if err == nil {
		c.CloseNow()
		e.tb.Fatalf("dial to %s succeeded, want it refused", id)
	}
	if res == nil {
		e.tb.Fatalf("dial to %s: %v, without an HTTP answer", id, err)
	}
	a := answer{status: res.StatusCode, header: res.Header}
	if res.Body != nil {
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, rerr := res.Body.Read(buf)
			sb.Write(buf[:n])
			if rerr != nil {
				break
			}
		}
		a.body = []byte(sb.String())
	}
	msg := a.wantError(e.tb, res.StatusCode, "")
	return res.StatusCode, msg, res.Header.Get("Retry-After")
}

// TestLiveConnectionCaps: the connection past a cap is refused before the
// upgrade with a clear status and message, and a closed connection's slot
// is free again once its handler has ended.
func TestLiveConnectionCaps(t *testing.T) {
	e := newEnv(t, withHub(hub.Options{MaxConnsPerUserBoard: 2, MaxConnsPerUser: 3, MaxConns: 5}))
	alice := e.claim("alice@example.com", "b1")
	e.claimAs(alice, "b2")
	e.claimAs(alice, "b3")
	bob := e.invite(alice, "b1", "bob@example.com", "pro")
	carol := e.invite(alice, "b1", "carol@example.com", "pro")

	c1, _ := e.connect(alice, "b1", "")
	e.connect(alice, "b1", "")
	status, msg, retry := e.dialRefused(alice, "b1")
	if status != http.StatusTooManyRequests || !strings.Contains(msg, "at most 2 per person") || retry == "" {
		t.Fatalf("third socket on one board: %d %q Retry-After %q, want 429 naming the per-board cap", status, msg, retry)
	}
	e.connect(alice, "b2", "")
	status, msg, _ = e.dialRefused(alice, "b3")
	if status != http.StatusTooManyRequests || !strings.Contains(msg, "at most 3 per person") {
		t.Fatalf("fourth socket of one person: %d %q, want 429 naming the per-person cap", status, msg)
	}
	e.connect(bob, "b1", "")
	e.connect(bob, "b1", "")
	status, msg, _ = e.dialRefused(carol, "b1")
	if status != http.StatusServiceUnavailable || !strings.Contains(msg, "live connections") {
		t.Fatalf("socket past the server's cap: %d %q, want 503", status, msg)
	}
	if got, want := e.hub.Conns(), 5; got != want {
		t.Fatalf("Conns=%d, want %d", got, want)
	}
	// Closing one frees its slot once the server has seen the close (the
	// handler returned at the upgrade; the connection's reader lets go).
	c1.Close(websocket.StatusNormalClosure, "")
	waitConns(t, e.hub, 4)
	e.connect(carol, "b1", "")
	status, _, _ = e.dialRefused(alice, "b3") // alice is at 2 now, but the server is full
	if status != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", status)
	}
}

// waitConns waits until the hub counts want live connections: a closed
// connection is let go by its own goroutine, after the close.
func waitConns(t *testing.T, h *hub.Hub, want int) {
	t.Helper()
	deadline := time.Now().Add(liveWait)
	for h.Conns() != want {
		if time.Now().After(deadline) {
			t.Fatalf("Conns=%d after %s, want %d", h.Conns(), liveWait, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLivePushRate: pushes over a connection's budget, or over the
// person's budget shared by their connections, get error 429 with a clear
// message, and nothing of them is applied. The hub's clock stands still,
// so no budget refills during the test.
func TestLivePushRate(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	e := newEnv(t, withHub(hub.Options{
		Now:           func() time.Time { return t0 },
		Room:          rooms.Options{PushBurst: 3},
		UserPushBurst: 5,
	}))
	owner := e.claim("owner@example.com", "b1")
	c1, _ := e.connect(owner, "b1", "")
	c2, _ := e.connect(owner, "b1", "")
	readCount(t, c1, 2)

	// pushAll sends n pushes over c (ids prefix+"a", prefix+"b", …) and
	// returns the answers to them in the order sent. (An error answer may
	// overtake the ack of an earlier push: the ack comes from the room
	// after the commit, the error from the connection at once.)
	pushAll := func(c *websocket.Conn, prefix string, n int) []liveMsg {
		for i := range n {
			id := prefix + string(rune('a'+i))
			send(t, c, pushMsg{Type: "push", ID: id, Push: notePush(board.Note{ID: id})})
		}
		byID := map[string]liveMsg{}
		for len(byID) < n {
			if m := read(t, c); m.Type == livewire.TypeAck || m.Type == livewire.TypeError {
				byID[m.ID] = m
			}
		}
		got := make([]liveMsg, n)
		for i := range n {
			got[i] = byID[prefix+string(rune('a'+i))]
		}
		return got
	}
	wantAnswers := func(got []liveMsg, acks int, msg string) {
		t.Helper()
		for i, m := range got {
			if i < acks {
				if m.Type != livewire.TypeAck {
					t.Fatalf("answer %d: %+v, want an ack", i+1, m)
				}
				continue
			}
			if m.Type != livewire.TypeError || m.Status != http.StatusTooManyRequests || !strings.Contains(m.Error, msg) || !strings.Contains(m.Error, "Nothing was applied") {
				t.Fatalf("answer %d: %+v, want error 429 %q", i+1, m, msg)
			}
		}
	}
	// The connection's own budget: 3 at once.
	wantAnswers(pushAll(c1, "x", 5), 3, "Too many pushes on this connection")
	// The person's budget, shared: 5 at once, 3 of them spent on c1.
	wantAnswers(pushAll(c2, "y", 4), 2, "Too many pushes from your connections together")
	if got, want := e.pull(owner, "b1", 0).ServerVersion, int64(5); got != want {
		t.Fatalf("board at version %d, want %d: refused pushes applied", got, want)
	}
	// REST pushes are not counted here.
	e.pushOK(owner, "b1", notePush(board.Note{ID: "rest"}))
}
