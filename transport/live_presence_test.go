package transport_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// TestLivePresence: over the socket, who is here, following, view? and
// summon as docs/live-protocol.md says, with every bad field refused by
// name and the socket kept.
func TestLivePresence(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	guest := e.invite(owner, "b1", "guest@example.com", "pro")
	co, ho := e.connect(owner, "b1", "")
	cg, hg := e.connect(guest, "b1", "")
	if hg.PresentCount != 1 || hg.PresentMore || len(hg.Present) != 1 || hg.Present[0].ID != ho.You.ID {
		t.Fatalf("guest's hello: %d present of %d (more %v), want the owner", len(hg.Present), hg.PresentCount, hg.PresentMore)
	}
	readCount(t, co, 2)
	readCount(t, cg, 2)

	t.Run("Who", func(t *testing.T) { livePresenceWho(t, cg, ho.You.ID) })
	t.Run("Follow", func(t *testing.T) { livePresenceFollow(t, co, cg, ho.You.ID) })
	t.Run("Summon", func(t *testing.T) { livePresenceSummon(t, co, cg, ho.You.ID) })
	t.Run("BadMessages", func(t *testing.T) { livePresenceBadMessages(t, cg, hg.You.ID) })
	t.Run("FollowEndsWhenTheFollowedLeaves", func(t *testing.T) {
		send(t, cg, map[string]any{"type": "follow", "id": ho.You.ID})
		readType(t, cg, livewire.TypeView)
		co.Close(websocket.StatusNormalClosure, "")
		if m := readType(t, cg, livewire.TypeFollow); m.ID != "" || m.Ended != ho.You.ID {
			t.Fatalf("guest got %+v, want its follow ended by the owner", m)
		}
		if m := readLeft(t, cg, ho.You.ID); m.Count != 1 {
			t.Fatalf("guest got %+v, want the owner's leave and a count of 1", m)
		}
	})
}

// livePresenceWho: the guest's who, at the edges of its limit and with the
// default one, lists the owner and ends.
func livePresenceWho(t *testing.T, cg *websocket.Conn, ownerID string) {
	for _, limit := range []int{1, rooms.MaxWhoLimit} {
		send(t, cg, map[string]any{"type": "who", "after": "", "limit": limit})
		if m := readType(t, cg, livewire.TypeWho); len(m.Present) != 1 || m.Present[0].ID != ownerID || m.Present[0].Email != "owner@example.com" || m.Next != "" {
			t.Fatalf("who limit %d: %+v, want the owner and the end", limit, m)
		}
	}
	send(t, cg, map[string]any{"type": "who"}) // the default limit
	if m := readType(t, cg, livewire.TypeWho); len(m.Present) != 1 {
		t.Fatalf("who: %+v, want the owner", m)
	}
}

// livePresenceFollow: following the owner sends their view, and view?
// sends it once after the follow ends.
func livePresenceFollow(t *testing.T, co, cg *websocket.Conn, ownerID string) {
	send(t, co, map[string]any{"type": "view", "x": 100, "y": -50, "zoom": 0.75})
	send(t, cg, map[string]any{"type": "follow", "id": ownerID})
	if m := readType(t, cg, livewire.TypeView); m.ID != ownerID || m.Email != "owner@example.com" || m.X != 100 || m.Y != -50 || m.Zoom != 0.75 {
		t.Fatalf("guest got %+v, want the owner's view", m)
	}
	send(t, cg, map[string]any{"type": "follow", "id": ""})
	send(t, cg, map[string]any{"type": "view?", "id": ownerID})
	if m := readType(t, cg, livewire.TypeView); m.ID != ownerID || m.X != 100 {
		t.Fatalf("view?: %+v, want the owner's view", m)
	}
	send(t, co, map[string]any{"type": "active"})
}

// livePresenceSummon: the owner's summon reaches the guest; the guest may
// not summon.
func livePresenceSummon(t *testing.T, co, cg *websocket.Conn, ownerID string) {
	send(t, co, map[string]any{"type": "summon", "x": 1, "y": 2, "zoom": 3})
	if m := readType(t, cg, livewire.TypeSummon); m.ID != ownerID || m.Email != "owner@example.com" || m.X != 1 || m.Y != 2 || m.Zoom != 3 {
		t.Fatalf("guest got %+v, want the owner's summon", m)
	}
	send(t, cg, map[string]any{"type": "summon", "x": 1, "y": 2, "zoom": 3})
	if m := readType(t, cg, livewire.TypeError); m.Status != 403 || m.Field != "type" {
		t.Fatalf("guest's summon: %+v, want 403 on type", m)
	}
}

// livePresenceBadMessages: each bad who, view, follow, view? and summon
// is refused naming its field.
func livePresenceBadMessages(t *testing.T, cg *websocket.Conn, guestID string) {
	for _, tc := range []struct {
		name, msg string
		status    int
		field     string
	}{
		{"WhoLimitZero", `{"type":"who","limit":0}`, 400, "limit"},
		{"WhoLimitPast", fmt.Sprintf(`{"type":"who","limit":%d}`, rooms.MaxWhoLimit+1), 400, "limit"},
		{"WhoAfterTooLong", `{"type":"who","after":"` + strings.Repeat("a", 65) + `"}`, 400, "after"},
		{"ViewWithoutZoom", `{"type":"view","x":1,"y":2}`, 400, "zoom"},
		{"ViewZoomZero", `{"type":"view","x":1,"y":2,"zoom":0}`, 400, "zoom"},
		{"ViewZoomPast", `{"type":"view","x":1,"y":2,"zoom":100.5}`, 400, "zoom"},
		{"ViewOffBoard", `{"type":"view","x":1e10,"y":2,"zoom":1}`, 400, "x"},
		{"FollowNobody", `{"type":"follow","id":"nobody"}`, 404, "id"},
		{"FollowSelf", `{"type":"follow","id":"` + guestID + `"}`, 400, "id"},
		{"ViewOnceWithoutID", `{"type":"view?"}`, 400, "id"},
		{"SummonWithoutX", `{"type":"summon","y":2,"zoom":1}`, 400, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send(t, cg, []byte(tc.msg))
			if m := readType(t, cg, livewire.TypeError); m.Status != tc.status || m.Field != tc.field || m.Error == "" {
				t.Fatalf("got %+v, want %d on %s", m, tc.status, tc.field)
			}
		})
	}
}
