package rowmerge

import (
	"encoding/json"

	"corkboard/board"
)

// Encode returns the JSON a store keeps for row: json.Marshal(row), byte
// for byte. For a note or item without extra fields that is its own
// MarshalJSON's output, which json.Marshal would only scan and copy once
// more (compacting and escaping what encoding/json wrote compact and
// escaped already): four times the cost of the encoding itself for a
// 1 KB note. Extra fields hold the client's JSON, which json.Marshal does
// change (it escapes <, > and & in it), so those rows take it.
func Encode[T any](row *T) ([]byte, error) {
	switch r := any(row).(type) {
	case *board.Note:
		if len(r.Extra) == 0 {
			return r.MarshalJSON()
		}
	case *board.TrackerItem:
		if len(r.Extra) == 0 {
			return r.MarshalJSON()
		}
	}
	return json.Marshal(row)
}
