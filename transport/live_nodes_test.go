package transport_test

import (
	"context"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/transport/livewire"
)

// TestLiveHelloNeverBelowTheClient: with several nodes, a room's version
// may lag the store's (another node committed and its note has not come).
// A client that saw the later versions there and reconnects here with
// ?since=3 must get a hello of at least 3, never the room's stale 1, and
// nothing to catch up on.
func TestLiveHelloNeverBelowTheClient(t *testing.T) {
	// One node of several (a bus), whose slow recheck is too slow to help.
	e := newEnv(t, withHub(hub.Options{Bus: hub.NewLocalBus().End(), NodeID: "a", PollEvery: time.Hour}))
	alice := e.claim("alice@example.com", "b1")
	if status, body := e.push(alice, "b1", notePush(board.Note{ID: "n1", Content: "here"})); status != 200 || version(t, body) != 1 {
		t.Fatalf("push: %d %v", status, body)
	}
	c, hello := e.connect(alice, "b1", "?since=1")
	if hello.ServerVersion != 1 {
		t.Fatalf("hello at %d, want 1", hello.ServerVersion)
	}
	c.CloseNow()
	// Another node's commits, versions 2 and 3: in the store, no note.
	for _, id := range []string{"n2", "n3"} {
		p := notePush(board.Note{ID: id, Content: "elsewhere"})
		if _, err := e.db.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: &p}}); err != nil {
			t.Fatal(err)
		}
	}
	c, hello = e.connect(alice, "b1", "?since=3")
	if hello.ServerVersion < 3 {
		t.Fatalf("hello at %d for a client at 3: a version below the client's", hello.ServerVersion)
	}
	// A client behind gets the other node's changes: in its catch-up, or,
	// when it joined before the room caught up (the pull above told the
	// room), in the room's catch-up right after. Either way, in order.
	c.CloseNow()
	c, hello = e.connect(alice, "b1", "?since=1")
	seen, at := map[string]bool{}, int64(1)
	if hello.ServerVersion < 1 {
		t.Fatalf("hello at %d for a client at 1", hello.ServerVersion)
	}
	for at < 3 {
		m := readType(t, c, livewire.TypeChanges)
		if m.Since > at {
			t.Fatalf("changes since %d while the client is at %d: a gap", m.Since, at)
		}
		for _, n := range m.Notes {
			seen[n.ID] = true
		}
		at = max(at, m.ServerVersion)
	}
	if !seen["n2"] || !seen["n3"] {
		t.Fatalf("the client behind got %v, want n2 and n3", seen)
	}
}
