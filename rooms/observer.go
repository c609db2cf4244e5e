package rooms

import "time"

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
	// full (CloseResync, 4008).
	SubscriberDropped()
}

// nopObserver is the Observer of a room that was given none.
type nopObserver struct{}

func (nopObserver) Committed(int, time.Duration, error) {}
func (nopObserver) Pulled(time.Duration, bool, error)   {}
func (nopObserver) SubscriberDropped()                  {}
