package rowmerge

import "corkboard/board"

// StoredRows is board.SettleRights' view of a store's rows: note and
// frame give the JSON of a live row as stored (nil when there is none or
// it is a tombstone), each store reading it its own way in the push's
// transaction.
func StoredRows(note, frame func(id string) ([]byte, error)) board.StoredRows {
	return board.StoredRows{
		Note: func(id string) (board.Note, bool, error) {
			var n board.Note
			js, err := note(id)
			if err != nil || js == nil {
				return n, false, err
			}
			return n, true, decode(js, &n)
		},
		Frame: func(id string) (board.Frame, bool, error) {
			var f board.Frame
			js, err := frame(id)
			if err != nil || js == nil {
				return f, false, err
			}
			return f, true, decode(js, &f)
		},
	}
}
