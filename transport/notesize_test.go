package transport_test

import (
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/transport/livewire"
)

func noteByID(ns []board.Note, id string) board.Note {
	for _, n := range ns {
		if n.ID == id {
			return n
		}
	}
	return board.Note{}
}

// TestNoteSizeRoundTrip: a note's w and h go everywhere the note goes
// (live message, pull, a restart, a live push), and a note without them
// is answered without them, as the spec's clients expect.
func TestNoteSizeRoundTrip(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	c, _ := e.connect(s, "b1", "")

	body := `{"notes":{"upserted":[{"id":"sized","x":1,"y":2,"w":300,"h":180.5},{"id":"plain","x":3,"y":4}]}}`
	if status, res := e.push(s, "b1", body); status != 200 {
		t.Fatalf("push: %d %v", status, res)
	}
	m := readType(t, c, livewire.TypeChanges)
	if n := noteByID(m.Notes, "sized"); len(m.Notes) != 2 || n.W != 300 || n.H != 180.5 {
		t.Fatalf("live message notes %+v, want sized at 300×180.5", m.Notes)
	}
	raw := e.do("GET", "/api/boards/b1/sync?since=0", s, nil)
	if !strings.Contains(string(raw.body), `"y":2,"w":300,"h":180.5,"color"`) {
		t.Fatalf("pull answer %s: want w and h after y", raw.body)
	}
	plain := string(raw.body)
	plain = plain[strings.Index(plain, `"id":"plain"`):]
	if plain = plain[:strings.IndexByte(plain, '}')]; strings.Contains(plain, `"w"`) || strings.Contains(plain, `"h"`) {
		t.Fatalf("pull answer %s: the note without a size must not carry w or h", raw.body)
	}

	e.restart()
	ch := e.pull(s, "b1", 0)
	if sized := noteByID(ch.Notes, "sized"); len(ch.Notes) != 2 || sized.W != 300 || sized.H != 180.5 || noteByID(ch.Notes, "plain").W != 0 {
		t.Fatalf("pull after restart %+v, want the size kept", ch.Notes)
	}

	c, _ = e.connect(s, "b1", "")
	send(t, c, map[string]any{"type": "push", "id": "p1", "push": map[string]any{"notes": map[string]any{"upserted": []any{
		map[string]any{"id": "plain", "x": 3, "y": 4, "w": 120, "h": 80},
	}}}})
	if m := readType(t, c, livewire.TypeAck); m.ID != "p1" {
		t.Fatalf("got %+v, want ack p1", m)
	}
	if ch := e.pull(s, "b1", ch.ServerVersion); len(ch.Notes) != 1 || ch.Notes[0].W != 120 || ch.Notes[0].H != 80 {
		t.Fatalf("after a live resize %+v, want plain at 120×80", ch.Notes)
	}
}
