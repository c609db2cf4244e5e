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
