package transport_test

import (
	"strings"
	"testing"

	"corkboard/transport/livewire"

	"github.com/coder/websocket"
)

// mergePush is a live push message of one note edit based on baseVersion.
func mergePush(id string, content string, baseVersion int64) map[string]any {
	return map[string]any{"type": "push", "id": id, "push": map[string]any{"notes": map[string]any{"upserted": []any{
		map[string]any{"id": "n1", "content": content, "baseVersion": baseVersion},
	}}}}
}

// TestLiveMergeEvents: when two people's edits of the same line cross, the
// later push wins the line; its connection gets the merged row before its
// ack, and both are told what was overwritten and where it was logged.
func TestLiveMergeEvents(t *testing.T) {
	e := newEnv(t)
	alice := e.claim("alice@example.com", "b1")
	bob := e.invite(alice, "b1", "bob@example.com", "pro")
	ca, ha := e.connect(alice, "b1", "")
	cb, _ := e.connect(bob, "b1", "")
	readCount(t, ca, 2)

	send(t, ca, mergePush("p1", "title\nbody", 0))
	if m := readType(t, ca, livewire.TypeAck); m.ServerVersion != 1 {
		t.Fatalf("ack %+v, want version 1", m)
	}
	readType(t, cb, livewire.TypeChanges)

	// Both edit from version 1: Bob's edit of the body lands first, then
	// Alice's edit of the title and of the body.
	send(t, cb, mergePush("p2", "title\nbody by bob", 1))
	readType(t, cb, livewire.TypeAck)
	readType(t, ca, livewire.TypeChanges)
	send(t, ca, mergePush("p3", "Title\nbody by alice", 1))

	m := readMergedThenAck(t, ca, ha.You.ID)
	mb := readType(t, cb, livewire.TypeChanges)
	if mb.ServerVersion != 3 || len(mb.Events) != 1 || mb.Events[0].LogKey != m.Events[0].LogKey {
		t.Fatalf("bob got %+v, want the change at 3 with the same overlap", mb)
	}
	// Bob's lost line is one click away: in the entry the event names.
	entry := e.do("GET", "/api/boards/b1/log/"+mb.Events[0].LogKey, bob, nil)
	if entry.status != 200 || !strings.Contains(string(entry.body), "body by bob") {
		t.Fatalf("log entry %s: %d %s, want Bob's text", mb.Events[0].LogKey, entry.status, entry.body)
	}
	// A push that merged nothing is not sent back to its connection.
	send(t, cb, mergePush("p4", "Title\nbody by alice\nmore", 3))
	if a := read(t, cb); a.Type != livewire.TypeAck || a.ID != "p4" {
		t.Fatalf("bob got %+v, want only the ack of a push based on the current row", a)
	}
	if m := readType(t, ca, livewire.TypeChanges); len(m.Events) != 0 {
		t.Fatalf("alice got events %+v for a push with nothing to merge", m.Events)
	}
}

// readMergedThenAck reads what Alice's own connection (c, whose ID is
// connID) gets for her push p3 that crossed Bob's: the merged row with the
// overlap event, then the ack. It returns the change.
func readMergedThenAck(t *testing.T, c *websocket.Conn, connID string) liveMsg {
	t.Helper()
	m := read(t, c)
	if m.Type != livewire.TypeChanges || m.From != connID || m.ServerVersion != 3 || len(m.Notes) != 1 || m.Notes[0].Content != "Title\nbody by alice" {
		t.Fatalf("alice got %+v, want her merged row at 3 before the ack", m)
	}
	if len(m.Events) != 1 || m.Events[0].Kind != "overlap" || m.Events[0].Table != "note" || m.Events[0].ID != "n1" || m.Events[0].Version != 2 || m.Events[0].LogKey == "" {
		t.Fatalf("alice's change carries events %+v, want the overlap with Bob's version 2", m.Events)
	}
	if a := read(t, c); a.Type != livewire.TypeAck || a.ID != "p3" || a.ServerVersion != 3 {
		t.Fatalf("alice got %+v, want ack p3 at 3", a)
	}
	return m
}
