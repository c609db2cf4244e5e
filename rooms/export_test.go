package rooms

// FanOutPart is how many subscribers share a fan-out shard before another
// is opened.
const FanOutPart = fanOutPart

// ShardOf returns the fan-out shard that sends to s (1-based; 0 while s
// has been sent nothing), asked of r's loop, which owns it.
func ShardOf(r *Room, s *Subscriber) int {
	c := make(chan int, 1)
	if !r.onLoop(func() { c <- int(s.shard) }) {
		return -1
	}
	return <-c
}

// VersionReads reports how many shared version reads r made, and how many
// calls wait for the next one (not yet started).
func VersionReads(r *Room) (reads int64, waiting int) {
	c := &r.confirm
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next != nil {
		waiting = c.next.waiters
	}
	return c.reads, waiting
}
