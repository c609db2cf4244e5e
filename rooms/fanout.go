package rooms

import (
	"log/slog"
	"runtime"
	"slices"
	"sync"

	"corkboard/transport/livewire"
)

// fanOutBacklog is how many messages the loop may hand the fan-out
// goroutine before waiting for it: the fan-out is CPU work (non-blocking
// writes), so a backlog means the CPU is short, and the room slows down
// with it rather than queueing without bound.
const fanOutBacklog = 64

// fanJob is one message for some of the room's subscribers.
type fanJob struct {
	msg  *Message
	subs []*Subscriber // a snapshot: who was in the room when msg was made
	skip *Subscriber
}

// broadcast sends msg to every subscriber but skip.
func (r *Room) broadcast(msg *Message, skip *Subscriber) {
	if len(r.subs) == 0 || len(r.subs) == 1 && r.subs[0] == skip {
		return
	}
	r.handOver(fanJob{msg: msg, subs: slices.Clone(r.subs), skip: skip})
}

// deliver sends msg to s alone.
func (r *Room) deliver(s *Subscriber, msg *Message) {
	r.handOver(fanJob{msg: msg, subs: []*Subscriber{s}})
}

// handOver gives job to the fan-out goroutine, taking its reports of full
// sinks meanwhile (it may be waiting to report one).
func (r *Room) handOver(job fanJob) {
	for {
		select {
		case r.fanC <- job:
			return
		case s := <-r.dropC:
			r.dropped = append(r.dropped, s)
		}
	}
}

// fanOut is the room's fan-out goroutine: it sends each message to its
// subscribers' sinks, in the order the loop handed them over, so every
// subscriber gets its messages in order. Sinks never wait for a peer (the
// live transport writes to a socket only when it can take the message at
// once, and queues otherwise), so neither does the room; the loop itself
// never touches a sink. A full sink is reported to the loop, which drops
// its subscriber.
//
// Sending is a socket write per subscriber, so a message for many
// subscribers is split between goroutines, one per CPU: the last
// subscriber is reached sooner. Each sink is still called from one
// goroutine at a time and in order: the next message waits for every part.
func (r *Room) fanOut() {
	defer close(r.fanDone)
	for job := range r.fanC {
		for _, s := range job.send() {
			r.dropC <- s // the loop always takes it: in its select, in handOver or in stopFanOut
		}
	}
}

// send sends the job's message and returns the subscribers whose sinks were
// full.
func (j fanJob) send() []*Subscriber {
	parts := min(runtime.GOMAXPROCS(0), len(j.subs)/fanOutPart)
	if parts <= 1 {
		return sendAll(nil, j.subs, j.msg, j.skip)
	}
	size := (len(j.subs) + parts - 1) / parts
	full := make([][]*Subscriber, parts)
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { full[i] = sendAll(nil, j.subs[i*size:min((i+1)*size, len(j.subs))], j.msg, j.skip) })
	}
	full[0] = sendAll(nil, j.subs[:size], j.msg, j.skip)
	wg.Wait()
	return slices.Concat(full...)
}

// fanOutPart is the least number of subscribers worth a goroutine of their
// own in a fan-out.
const fanOutPart = 128

// sendAll sends msg to subs but skip and appends those whose sinks were full
// to full.
func sendAll(full, subs []*Subscriber, msg *Message, skip *Subscriber) []*Subscriber {
	for _, s := range subs {
		if s != skip && !s.sink.Send(msg) {
			full = append(full, s)
		}
	}
	return full
}

// stopFanOut lets the fan-out goroutine finish what it was handed and waits
// for it. Called by the loop only; calling it twice is safe.
func (r *Room) stopFanOut() {
	if r.fanStopped {
		return
	}
	r.fanStopped = true
	close(r.fanC)
	for {
		select {
		case s := <-r.dropC:
			r.dropped = append(r.dropped, s)
		case <-r.fanDone:
			return
		}
	}
}

// flushDropped drops the subscribers whose sinks were full. Telling the
// others that one left may fill more queues; the loop ends because each
// round removes a subscriber.
func (r *Room) flushDropped() {
	for i := 0; i < len(r.dropped); i++ {
		if s := r.dropped[i]; r.has(s) {
			r.log.Info("subscriber dropped: queue full", slog.String("conn", s.id), slog.String("email", s.email))
			r.opts.Observer.SubscriberDropped()
			r.remove(s, livewire.CloseResync, "resync: pull and reconnect")
		}
	}
	clear(r.dropped)
	r.dropped = r.dropped[:0]
}

func (r *Room) has(s *Subscriber) bool { return s.pos >= 0 }
