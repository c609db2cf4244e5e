package rooms

import (
	"sync/atomic"
	"time"
)

// Stage timing: where one push's changes message spends its time on its
// way from the socket that brought the push to the sockets of the room's
// subscribers (issue 26: a slow second has to be split into its stages
// before anyone can say whose fault it is). It is off unless
// Options.Stages is set; the load tool turns it on through the server's
// -pprof listener (cmd/corkboard, docs/benchmarks.md).

// MessageStages is one fanned-out changes message's timeline. Times are
// wall-clock Unix nanoseconds, so that another process on the machine (the
// load tool) can line them up with its own send and receive times.
type MessageStages struct {
	Board   string `json:"board"`
	Version int64  `json:"version"`
	// Pushes is how many pushes the message's commit carried.
	Pushes int `json:"pushes"`
	// Received is when the room was asked to apply the push (the live
	// transport had read and decoded it).
	Received int64 `json:"received"`
	// CommitStart and Committed bracket the store's write (bbolt: the
	// transaction and its fsync). Between Received and CommitStart the
	// push waited for the commit before it.
	CommitStart int64 `json:"commitStart"`
	Committed   int64 `json:"committed"`
	// Encoded is when the message was encoded and handed to the loop;
	// Taken when the loop took the commit.
	Encoded int64 `json:"encoded"`
	Taken   int64 `json:"taken"`
	// HandedOver is when every shard had the message in its queue (the
	// loop waits for a shard whose queue is full).
	HandedOver int64 `json:"handedOver"`
	// Shards is how many shards sent it; FirstStart and LastStart are
	// when the first and the last of them began; Done when the last
	// finished.
	Shards     int   `json:"shards"`
	FirstStart int64 `json:"firstStart"`
	LastStart  int64 `json:"lastStart"`
	Done       int64 `json:"done"`
	// SlowestShardNs is the longest one shard took from its start to its
	// end; SlowestSendNs the longest one Sink.Send took (a socket write,
	// or the queueing of a socket that would block).
	SlowestShardNs int64 `json:"slowestShardNs"`
	SlowestSendNs  int64 `json:"slowestSendNs"`
}

// StageRecorder takes the timelines of fanned-out changes messages. It is
// called from a shard's goroutine (the last to finish a message) and must
// not block.
type StageRecorder interface {
	RecordStages(s MessageStages)
}

// msgTrace is a message's timeline while it is being fanned out. The loop
// fills the first half; the shards update the rest with atomics, and
// whoever finishes last (the loop's own hand-over counts as one) records
// it.
type msgTrace struct {
	rec     StageRecorder
	s       MessageStages // written by the loop before the hand-over
	pending atomic.Int32
	handed  atomic.Int64

	firstStart, lastStart, done atomic.Int64
	slowestShard, slowestSend   atomic.Int64
}

// wallNanos is the wall clock in Unix nanoseconds.
func wallNanos() int64 { return time.Now().UnixNano() }

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// storeMin lowers a to v if a is unset (0) or larger.
func storeMin(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if old != 0 && old <= v || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// beginHandOver arms the trace for shards parts; the loop calls
// endHandOver once every part is in a shard's queue.
func (t *msgTrace) beginHandOver(shards int) {
	t.s.Shards = shards
	t.pending.Store(int32(shards) + 1)
}

func (t *msgTrace) endHandOver() {
	t.handed.Store(wallNanos())
	t.finishOne()
}

// shardDone records one shard's part: it began at start, ended at end,
// and its slowest Send took slowestSend.
func (t *msgTrace) shardDone(start, end, slowestSend int64) {
	storeMin(&t.firstStart, start)
	storeMax(&t.lastStart, start)
	storeMax(&t.done, end)
	storeMax(&t.slowestShard, end-start)
	storeMax(&t.slowestSend, slowestSend)
	t.finishOne()
}

// finishOne counts one part finished and records the timeline after the
// last.
func (t *msgTrace) finishOne() {
	if t.pending.Add(-1) != 0 {
		return
	}
	s := t.s
	s.HandedOver = t.handed.Load()
	s.FirstStart, s.LastStart, s.Done = t.firstStart.Load(), t.lastStart.Load(), t.done.Load()
	s.SlowestShardNs, s.SlowestSendNs = t.slowestShard.Load(), t.slowestSend.Load()
	t.rec.RecordStages(s)
}

// traceCommit starts the timelines of a commit's messages (commit's
// goroutine, after encoding them).
func (r *Room) traceCommit(c *commit) {
	if r.opts.Stages == nil {
		return
	}
	encoded := wallNanos()
	for i, m := range c.msgs {
		if m == nil {
			continue
		}
		m.trace = &msgTrace{rec: r.opts.Stages, s: MessageStages{
			Board: r.id, Version: m.Version, Pushes: len(c.reqs), Received: c.reqs[i].received,
			CommitStart: c.started, Committed: c.committed, Encoded: encoded,
		}}
	}
}
