package rooms

import (
	"log/slog"
	"sync"
	"time"

	"corkboard/transport/livewire"
)

// The fan-out: the room's loop never touches a sink. It hands each message
// to shards, each a goroutine with its own ordered queue and its own part
// of the subscribers, and goes on; each shard sends to its subscribers'
// sinks in the order it was handed the messages.
//
// A subscriber stays on one shard for as long as it is in the room, so its
// sink is called from one goroutine, in order. Shards do not wait for each
// other: a shard whose goroutine is descheduled (or slow for any reason)
// delays only its own subscribers, and the others go on to the next
// message. Before shards, a message was split between goroutines that all
// had to finish before the next message began, so one descheduled thread
// held the whole board (issue 26: quiet seconds at 40-50 ms p99, then one
// at 796 ms).
//
// Sinks never wait for a peer (the live transport writes to a socket only
// when it can take the message at once and queues otherwise), so a slow
// socket costs its shard nothing; a full sink is reported to the loop,
// which drops its subscriber.

// fanOutBacklog is how many messages the loop may hand one shard before
// waiting for it: the fan-out is CPU work (non-blocking writes), so a
// backlog means the CPU is short, and the room slows down with it rather
// than queueing without bound. A shard stalled for a moment (up to this
// many messages) delays nobody else.
const fanOutBacklog = 64

// fanOutPart is the least number of subscribers worth a shard of their
// own: a room's subscribers share one shard up to this many, and a new
// shard is opened only when every open one has at least this many, so a
// small room wakes one goroutine per message.
const fanOutPart = 128

// fanOutShards is the most shards a room has. More shards than CPUs on
// purpose: a descheduled thread holds the one shard it was running, and
// the smaller the shards, the fewer subscribers wait with it (a room of
// 5,000 has 40 of 125).
const fanOutShards = 64

// fanJob is one message for some of the room's subscribers.
type fanJob struct {
	msg  *Message
	subs []*Subscriber // a snapshot: who was in the room (on this shard) when msg was made
}

// fanShard is one of the room's fan-out goroutines with its queue, made
// when a subscriber is first put on it.
type fanShard struct {
	c    chan fanJob
	size int // subscribers on the shard at the last count; the loop's
}

// fanOut is the room's fan-out: its shards, and how the loop learns of
// full sinks. Owned by the loop, except dropC and wg.
type fanOut struct {
	shards  []fanShard // at most fanOutShards, each with its goroutine
	dropC   chan *Subscriber
	wg      sync.WaitGroup // the shards' goroutines
	stopped bool
}

func newFanOut() fanOut { return fanOut{dropC: make(chan *Subscriber)} }

// broadcast sends msg to every subscriber but skip.
func (r *Room) broadcast(msg *Message, skip *Subscriber) {
	if len(r.subs) == 0 || len(r.subs) == 1 && r.subs[0] == skip {
		return
	}
	f := &r.fan
	parts := make([][]*Subscriber, len(f.shards), fanOutShards)
	for i := range parts {
		parts[i] = make([]*Subscriber, 0, f.shards[i].size)
	}
	var unplaced []*Subscriber
	for _, s := range r.subs {
		switch {
		case s.shard == 0:
			unplaced = append(unplaced, s)
		case s != skip:
			parts[s.shard-1] = append(parts[s.shard-1], s)
		}
	}
	for i := range parts {
		f.shards[i].size = len(parts[i])
	}
	if skip != nil && skip.shard != 0 {
		f.shards[skip.shard-1].size++
	}
	for _, s := range unplaced {
		r.place(s)
		if s != skip {
			for len(parts) < len(f.shards) {
				parts = append(parts, nil)
			}
			parts[s.shard-1] = append(parts[s.shard-1], s)
		}
	}
	t := msg.trace
	if t != nil {
		n := 0
		for _, p := range parts {
			if len(p) > 0 {
				n++
			}
		}
		t.beginHandOver(n)
	}
	for i, p := range parts {
		if len(p) > 0 {
			r.handOverTo(i, fanJob{msg: msg, subs: p})
		}
	}
	if t != nil {
		t.endHandOver()
	}
}

// deliver sends msg to s alone.
func (r *Room) deliver(s *Subscriber, msg *Message) {
	if s.shard == 0 {
		r.place(s)
	}
	r.handOverTo(int(s.shard-1), fanJob{msg: msg, subs: []*Subscriber{s}})
}

// handOver sends job's message to job's subscribers: each shard gets its
// part of them.
func (r *Room) handOver(job fanJob) {
	if len(job.subs) == 1 {
		r.deliver(job.subs[0], job.msg)
		return
	}
	var parts [][]*Subscriber
	for _, s := range job.subs {
		if s.shard == 0 {
			r.place(s)
		}
		for len(parts) < len(r.fan.shards) {
			parts = append(parts, nil)
		}
		parts[s.shard-1] = append(parts[s.shard-1], s)
	}
	for i, p := range parts {
		if len(p) > 0 {
			r.handOverTo(i, fanJob{msg: job.msg, subs: p})
		}
	}
}

// place puts s on a shard for as long as it is in the room: the smallest
// open one, unless every open one has fanOutPart subscribers and a shard
// is left to open. Sizes are counted again at each broadcast, so those
// who left since the last one still count until the next.
func (r *Room) place(s *Subscriber) {
	f := &r.fan
	best := -1
	for i := range f.shards {
		if best < 0 || f.shards[i].size < f.shards[best].size {
			best = i
		}
	}
	if best < 0 || f.shards[best].size >= fanOutPart && len(f.shards) < fanOutShards {
		best = len(f.shards)
		c := make(chan fanJob, fanOutBacklog)
		f.shards = append(f.shards, fanShard{c: c})
		f.wg.Add(1)
		go r.runShard(c)
	}
	f.shards[best].size++
	s.shard = int32(best + 1)
}

// handOverTo gives job to shard i, taking the shards' reports of full sinks
// meanwhile (one may be waiting to report one).
func (r *Room) handOverTo(i int, job fanJob) {
	c := r.fan.shards[i].c
	for {
		select {
		case c <- job:
			return
		case s := <-r.fan.dropC:
			r.dropped = append(r.dropped, s)
		}
	}
}

// runShard is a shard's goroutine: it sends each message to its
// subscribers' sinks in the order the loop handed them over and reports
// the full ones to the loop.
func (r *Room) runShard(c <-chan fanJob) {
	defer r.fan.wg.Done()
	var full []*Subscriber
	for job := range c {
		if job.msg.trace != nil {
			full = sendTimed(job, full)
		} else {
			for _, s := range job.subs {
				if !s.sink.Send(job.msg) {
					full = append(full, s)
				}
			}
		}
		for _, s := range full {
			r.fan.dropC <- s // the loop always takes it: in its select, in handOver or in stopFanOut
		}
		clear(full)
		full = full[:0]
	}
}

// sendTimed is the shard's sending of a traced message: the same sends,
// with the shard's start, end and slowest send added to the message's
// timeline. It returns full with the subscribers whose sinks were full
// appended.
func sendTimed(job fanJob, full []*Subscriber) []*Subscriber {
	start := time.Now()
	var slowest time.Duration
	last := start
	for _, s := range job.subs {
		ok := s.sink.Send(job.msg)
		t := time.Now()
		slowest = max(slowest, t.Sub(last))
		last = t
		if !ok {
			full = append(full, s)
		}
	}
	job.msg.trace.shardDone(start.UnixNano(), last.UnixNano(), int64(slowest))
	return full
}

// startFanOut prepares the room's fan-out; its shards start with their
// first subscriber.
func (r *Room) startFanOut() { r.fan = newFanOut() }

// stopFanOut lets the shards finish what they were handed and waits for
// them. Called by the loop only; calling it twice is safe.
func (r *Room) stopFanOut() {
	f := &r.fan
	if f.stopped {
		return
	}
	f.stopped = true
	for _, sh := range f.shards {
		close(sh.c)
	}
	done := make(chan struct{})
	go func() {
		f.wg.Wait()
		close(done)
	}()
	for {
		select {
		case s := <-f.dropC:
			r.dropped = append(r.dropped, s)
		case <-done:
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
