package persist

import (
	"time"

	"corkboard/board"
)

// TimerChange is what a push does to its board's timer (board.Push.Timer).
type TimerChange struct {
	// Set is true when the push changes the timer; Timer is then the
	// board's new timer (nil: none).
	Set   bool
	Timer *board.Timer
}

// SettleTimer applies p's timer action, if it has one, to b's timer at
// now, the clock of the push's transaction: so that every node computes
// endsAt from one clock, and two actions at once apply one after the
// other. A push whose action changes nothing (board.ApplyTimer answers the
// timer it was given) has no TimerChange: alone, it keeps the version.
// Its error is the push's own answer (EINVALID, ECONFLICT): the push is
// refused whole.
func SettleTimer(b *board.Board, p *board.Push, now time.Time) (TimerChange, error) {
	if p.Timer == nil {
		return TimerChange{}, nil
	}
	if err := p.Timer.CheckPhase(b.Phases); err != nil {
		return TimerChange{}, err
	}
	next, err := board.ApplyTimer(b.Timer, *p.Timer, now, p.Timer.By)
	if err != nil || next == b.Timer {
		return TimerChange{}, err
	}
	return TimerChange{Set: true, Timer: next}, nil
}
