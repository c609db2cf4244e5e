package transport_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// refusedThenClosed sends a push over c and reads until the server closes
// c: the push must not be acknowledged (an error answer, or none, is fine).
// It returns the close code.
func refusedThenClosed(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	b, err := json.Marshal(pushMsg{Type: "push", ID: "late", Push: notePush(board.Note{ID: "late"})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveWait)
	defer cancel()
	// The server may have closed its side already; then the write fails,
	// which refuses the push just as well.
	_ = c.Write(ctx, websocket.MessageText, b)
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatal("the server did not close the connection")
			}
			return websocket.CloseStatus(err)
		}
		var m liveMsg
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if m.Type == livewire.TypeAck {
			t.Fatalf("a push after the session ended was applied: %+v", m)
		}
		if m.Type == livewire.TypeError && m.Status != http.StatusUnauthorized {
			t.Fatalf("push after the session ended got %+v, want 401", m)
		}
	}
}

// TestLiveLogoutClosesSocket: logging out closes the sockets opened with
// that session at once (4001), a push sent over one is not applied, and
// the user's other sessions keep their sockets.
func TestLiveLogoutClosesSocket(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	other := e.login("owner@example.com")
	c1, _ := e.connect(owner, "b1", "")
	c2, _ := e.connect(owner, "b1", "")
	co, _ := e.connect(other, "b1", "")
	readCount(t, c1, 3)

	e.do("GET", "/api/auth/logout", owner, nil).wantStatus(t, http.StatusOK)
	if code := refusedThenClosed(t, c1); code != livewire.CloseSessionEnded {
		t.Fatalf("socket closed with %d after logout, want %d", code, livewire.CloseSessionEnded)
	}
	if code := closeStatus(t, c2); code != livewire.CloseSessionEnded {
		t.Fatalf("second socket closed with %d after logout, want %d", code, livewire.CloseSessionEnded)
	}
	if ch := e.pull(other, "b1", 0); ch.ServerVersion != 0 {
		t.Fatalf("board at version %d after the refused push, want 0", ch.ServerVersion)
	}
	// The other session's socket is still live.
	send(t, co, pushMsg{Type: "push", ID: "p1", Push: notePush(board.Note{ID: "n1"})})
	if m := readType(t, co, livewire.TypeAck); m.ServerVersion != 1 {
		t.Fatalf("other session's push: %+v", m)
	}
	// The dead session cannot open a new one.
	if _, res, err := e.dial(owner, "b1", "", ""); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial after logout: err=%v res=%v, want 401", err, res)
	}
}

// TestLiveSessionExpiryClosesSocket: a session that expires while its socket
// is open gets the socket closed with 4001, whether the sweep finds it or a
// push over the socket does; nothing is applied.
func TestLiveSessionExpiryClosesSocket(t *testing.T) {
	const day = 24 * time.Hour
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		// age moves the clock (and uses session between moves) until it
		// has just expired.
		age func(e *env, session string)
		// notice makes the server notice: the sweep, or a push.
		bySweep bool
	}{
		{"IdleSweep", func(e *env, _ string) { e.clock.Advance(15 * day) }, true},
		{"IdlePush", func(e *env, _ string) { e.clock.Advance(15 * day) }, false},
		{"AbsoluteCapSweep", func(e *env, session string) {
			for range 6 { // used every 14 days: never idle
				e.clock.Advance(14 * day)
				e.do("GET", "/api/auth/me", session, nil).wantStatus(e.tb, http.StatusOK)
			}
			e.clock.Advance(6 * day) // 90 days after login
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, withClock(t0))
			owner := e.claim("owner@example.com", "b1")
			c, _ := e.connect(owner, "b1", "")
			tt.age(e, owner)
			var code websocket.StatusCode
			if tt.bySweep {
				if err := e.auth.Sweep(context.Background()); err != nil {
					t.Fatal(err)
				}
				code = closeStatus(t, c)
			} else {
				code = refusedThenClosed(t, c)
			}
			if code != livewire.CloseSessionEnded {
				t.Fatalf("socket closed with %d, want %d", code, livewire.CloseSessionEnded)
			}
			if v, err := e.db.CurrentVersion(context.Background(), "b1"); err != nil || v != 0 {
				t.Fatalf("board version %d (%v), want 0", v, err)
			}
		})
	}
}

// TestLiveSessionStillLiveKeepsSocket: the sweep leaves a live session's
// socket alone.
func TestLiveSessionStillLiveKeepsSocket(t *testing.T) {
	e := newEnv(t, withClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	owner := e.claim("owner@example.com", "b1")
	c, _ := e.connect(owner, "b1", "")
	e.clock.Advance(15*24*time.Hour - time.Second)
	if err := e.auth.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	send(t, c, pushMsg{Type: "push", ID: "p1", Push: notePush(board.Note{ID: "n1"})})
	if m := read(t, c); m.Type != livewire.TypeAck {
		t.Fatalf("got %+v, want the ack", m)
	}
}
