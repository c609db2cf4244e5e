package transport_test

import (
	"strings"
	"testing"
)

// A page cannot see WebSocket pings, so it checks the connection with a
// ping message: the server answers pong, echoing the id (at most 128
// characters, as for push), behind what was
// already queued, and the connection stays usable.
func TestLivePingIsAnsweredWithPong(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	c, _ := e.connect(owner, "b1", "")
	defer c.CloseNow()

	send(t, c, map[string]any{"type": "ping"})
	if m := read(t, c); m.Type != "pong" || m.ID != "" {
		t.Fatalf("got %+v, want a pong without id", m)
	}
	send(t, c, map[string]any{"type": "ping", "id": "p7"})
	if m := read(t, c); m.Type != "pong" || m.ID != "p7" {
		t.Fatalf("got %+v, want pong p7", m)
	}

	for _, tc := range []struct {
		name, msg, field string
	}{
		{"IDTooLong", `{"type":"ping","id":"` + strings.Repeat("x", 129) + `"}`, "id"},
		{"UnknownType", `{"type":"pong"}`, "type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send(t, c, []byte(tc.msg))
			if m := read(t, c); m.Type != "error" || m.Status != 400 || m.Field != tc.field {
				t.Fatalf("got %+v, want error 400 on %s", m, tc.field)
			}
		})
	}
	// Still open: a ping after the errors is answered.
	send(t, c, map[string]any{"type": "ping", "id": "again"})
	if m := read(t, c); m.Type != "pong" || m.ID != "again" {
		t.Fatalf("got %+v, want pong again", m)
	}
}
