package rooms

import (
	"encoding/json"
	"hash/fnv"

	"corkboard/persist"
	"corkboard/transport/livewire"
)

// The room builds the live protocol's messages (package livewire holds
// their shapes) from its own values; these are its encoders.

// wireEvents converts a push's merge events; nil when none.
func wireEvents(evs []persist.MergeEvent) []livewire.Event {
	if len(evs) == 0 {
		return nil
	}
	out := make([]livewire.Event, len(evs))
	for i, e := range evs {
		out[i] = livewire.Event{Kind: e.Kind, Table: e.Table, ID: e.ID, Version: e.Version, LogKey: e.LogKey}
	}
	return out
}

// encodePushChanges encodes the changes message of one applied push, with
// what its merges overwrote, from version since (-1: the version before
// the push's; lower when it carries folded header-only changes too).
func encodePushChanges(a persist.Applied, from string, since int64) ([]byte, error) {
	if since < 0 {
		since = a.Version - 1
	}
	return json.Marshal(livewire.ChangesMessage{Type: livewire.TypeChanges, From: from, Since: since, Changes: a.Changes, Events: wireEvents(a.Events)})
}

// mustEncode encodes messages the room builds from its own values, which
// cannot fail to encode (no channels, no NaN: coordinates are checked).
func mustEncode(v any) *Message {
	b, err := json.Marshal(v)
	if err != nil {
		panic("rooms: encode message: " + err.Error())
	}
	return NewMessage(b)
}

// palette holds colours readable on a light board, for presence.
var palette = []string{
	"#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080",
	"#f032e6", "#9a6324", "#800000", "#808000", "#000075", "#469990",
}

// ColorFor returns the presence colour of an e-mail address: the same
// address always gets the same colour, on every server.
func ColorFor(email string) string {
	h := fnv.New32a()
	h.Write([]byte(email))
	return palette[h.Sum32()%uint32(len(palette))]
}
