package hub

import "time"

// StopIdleOfForTest stops the rooms idle since before cutoff of the boards
// pick accepts: a test decides which rooms look idle, and when.
func (h *Hub) StopIdleOfForTest(cutoff time.Time, pick func(boardID string) bool) int {
	return h.stopIdle(cutoff, pick)
}

// PackForTest packs notes of pointer moves by the given connections and
// e-mails into payloads of at most limit bytes, and returns the payloads.
func PackForTest(node string, conns, emails []string, limit int) [][]byte {
	ns := make([]note, len(conns))
	for i := range conns {
		ns[i] = note{K: kindPointer, Board: "b", Conn: conns[i], Email: emails[i], X: 1.5, Y: -2}
	}
	return pack(envelope{Node: node}, ns, limit)
}
