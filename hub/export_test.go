package hub

import "time"

// StopIdleOfForTest stops the rooms idle since before cutoff of the boards
// pick accepts: a test decides which rooms look idle, and when.
func (h *Hub) StopIdleOfForTest(cutoff time.Time, pick func(boardID string) bool) int {
	return h.stopIdle(cutoff, pick)
}
