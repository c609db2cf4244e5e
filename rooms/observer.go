package rooms

import (
	"time"

	"corkboard/persist"
)

// Observer is told what rooms do, for metrics. cmd/corkboard hands one to
// every room through Options.Observer; rooms know nothing of how it counts.
// Its methods are called from rooms' goroutines (the committer, the loop,
// the callers of Pull), concurrently for different rooms, so they must be
// safe for concurrent use and must not block.
type Observer interface {
	// Committed reports one store call that applied a batch of pushes:
	// how many pushes it carried, how long the store took (the durable
	// write, fsync included), and err when the whole call failed.
	Committed(pushes int, took time.Duration, err error)
	// Pulled reports one pull: whether it read the store (false: answered
	// from the room's version in memory, and then took is 0, not
	// measured), how long the read took, and its error.
	Pulled(took time.Duration, fromStore bool, err error)
	// SubscriberDropped reports a subscriber dropped because its queue was
	// full (livewire.CloseResync, 4008).
	SubscriberDropped()
	// Merged reports what one store call's merges did (docs/sync.md, "How
	// a push is merged"): rows merged against their base, rows whose base
	// was no longer kept (replaced whole), overlaps of lines and revived
	// rows. Called only when one of them is not zero.
	Merged(rows, fallbacks, overlaps, revived int)
}

// observeMerges adds up the merges of one store call's pushes and reports
// them.
func observeMerges(o Observer, applied []persist.Applied) {
	var rows, fallbacks, overlaps, revived int
	for _, a := range applied {
		rows += a.Merged
		fallbacks += a.Fallbacks
		for _, e := range a.Events {
			switch e.Kind {
			case persist.MergeOverlap:
				overlaps++
			case persist.MergeRevived:
				revived++
			}
		}
	}
	if rows+fallbacks+overlaps+revived > 0 {
		o.Merged(rows, fallbacks, overlaps, revived)
	}
}

// nopObserver is the Observer of a room that was given none.
type nopObserver struct{}

func (nopObserver) Committed(int, time.Duration, error) {}
func (nopObserver) Pulled(time.Duration, bool, error)   {}
func (nopObserver) SubscriberDropped()                  {}
func (nopObserver) Merged(int, int, int, int)           {}
