package live

import (
	"encoding/json"
	"testing"

	"corkboard/transport/livewire"
)

// TestPresenceMessage: what a read-only link's socket is not sent is told
// from a room message's first bytes, as every livewire message encodes.
func TestPresenceMessage(t *testing.T) {
	enc := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	p := livewire.Presence{ID: "c1", Email: "ada@example.com", Color: "#e6194b"}
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"join", enc(livewire.PresenceMessage{Type: livewire.TypeJoin, Presence: p}), true},
		{"leave", enc(livewire.PresenceMessage{Type: livewire.TypeLeave, Presence: p}), true},
		{"pointer", enc(livewire.PointerMessage{Type: livewire.TypePointer, Presence: p, X: 1, Y: 2}), true},
		{"editing", enc(livewire.EditingMessage{Type: livewire.TypeEditing, Presence: p, NoteID: "n"}), true},
		{"presence batch", []byte(`{"type":"presence","joined":[]}`), true},
		{"view", []byte(`{"type":"view","id":"c1"}`), true},
		{"summon", []byte(`{"type":"summon","id":"c1"}`), true},
		{"who", []byte(`{"type":"who","present":[]}`), true},
		{"changes", []byte(`{"type":"changes","since":1}`), false},
		{"error", enc(livewire.ErrorMessage{Type: livewire.TypeError, Status: 403, Error: "no"}), false},
		{"pong", []byte(`{"type":"pong"}`), false},
		{"a type that starts like one", []byte(`{"type":"joined"}`), false},
		{"a type that starts like one, again", []byte(`{"type":"whole"}`), false},
		{"not an object", []byte(`[1]`), false},
		{"empty", nil, false},
	} {
		if got := presenceMessage(tc.data); got != tc.want {
			t.Errorf("%s (%s): %v, want %v", tc.name, tc.data, got, tc.want)
		}
	}
}
