package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"corkboard/transport/livewire"

	"github.com/coder/websocket"
)

// relay is one server kind the live workload can drive: Corkboard's live
// channel or y-websocket. The engine owns pacing, counting and timing; a
// relay only dials and speaks its protocol.
type relay interface {
	// Name names the server in reports.
	Name() string
	// PID is the server's process, 0 when unknown.
	PID() int
	// Rooms makes n rooms and returns their names.
	Rooms(ctx context.Context, n int) ([]string, error)
	// DialReceiver connects a subscriber to room; the returned loop reads
	// until ctx ends or the connection does, reporting to r.
	DialReceiver(ctx context.Context, room string, r *receiver) (loop func(ctx context.Context) error, err error)
	// DialWriter connects writer w to room. Acknowledgements (and failures)
	// of its pushes go to e.ack, from any goroutine.
	DialWriter(ctx context.Context, room string, w int, e *engine) (pusher, error)
}

// pusher sends pushes for one writer.
type pusher interface {
	// Push sends push seq of the run; sentNs is its send time on the run's
	// clock. It must not wait for the acknowledgement.
	Push(ctx context.Context, seq int64, sentNs int64) error
	// Close ends the writer's connection.
	Close()
}

// errBusy is a push not sent because the writer already had its maximum
// of pushes in flight: the server is not keeping up with the rate.
var errBusy = errors.New("writer busy: too many pushes in flight")

// receiver is one subscriber's tally. Its loop is the only writer of lat;
// the counters are read by the engine while the run goes on.
type receiver struct {
	e    *engine
	room int
	lat  []time.Duration // push→receive latencies
	seqs []int32         // the push of each latency, for the timeline
	seen []uint64        // bitset of seqs received; nil when too big to keep

	got  atomic.Int64 // pushes received
	msgs atomic.Int64 // every message, for settling
	dup  atomic.Int64 // pushes received twice

	closeCode int
	err       error
	// connected: the handshake succeeded; ended: the read loop ended
	// before the run did (err says how).
	connected bool
	ended     bool
}

// Workload is one live run's shape.
type Workload struct {
	Boards   int
	Conns    int
	Writers  int
	Rate     float64 // pushes per second, all writers together
	Duration time.Duration
	// DialConcurrency bounds handshakes in flight.
	DialConcurrency int
	// ConnectTimeout bounds the whole connect phase.
	ConnectTimeout time.Duration
	// SettleMax bounds the wait for the join messages to die down before
	// the pushes start.
	SettleMax time.Duration
	// Drain bounds the wait for the last deliveries after the last push.
	Drain time.Duration
}

// engine runs one live workload against one relay.
type engine struct {
	wl    Workload
	rel   relay
	start time.Time // the run's clock: marker times are time.Since(start)

	perWriter int64
	sentNs    []atomic.Int64 // by seq; 0 = not sent
	ackedBy   []atomic.Int64 // acknowledged pushes by room
	sent      atomic.Int64
	acked     atomic.Int64
	failed    atomic.Int64

	// versions is each push's version as its ack gave it (Corkboard's
	// live pushes), for the timeline; 0 when unknown.
	versions []atomic.Int64
	// diag is where the server tells more than /proc (timeline.go).
	diag diagSource

	mu      sync.Mutex
	ackLat  []time.Duration
	errs    int64
	samples []string
	acks    []atomic.Bool // by seq: acknowledged once
}

func newEngine(rel relay, wl Workload) *engine {
	perWriter := max(int64(wl.Rate/float64(wl.Writers)*wl.Duration.Seconds()), 1)
	total := perWriter * int64(wl.Writers)
	return &engine{
		wl:        wl,
		rel:       rel,
		start:     time.Now(),
		perWriter: perWriter,
		sentNs:    make([]atomic.Int64, total),
		ackedBy:   make([]atomic.Int64, wl.Boards),
		acks:      make([]atomic.Bool, total),
		versions:  make([]atomic.Int64, total),
	}
}

// now is the run's clock.
func (e *engine) now() int64 { return int64(time.Since(e.start)) }

// seqOf is writer w's k-th push: seqs interleave writers.
func (e *engine) seqOf(w int, k int64) int64 { return k*int64(e.wl.Writers) + int64(w) }

// roomOfWriter is the room writer w pushes to.
func (e *engine) roomOfWriter(w int) int { return w % e.wl.Boards }

// sentAt returns push seq's send time on the run's clock, ok false for a
// seq that this run never sent.
func (e *engine) sentAt(seq int64) (int64, bool) {
	if seq < 0 || seq >= int64(len(e.sentNs)) {
		return 0, false
	}
	v := e.sentNs[seq].Load()
	return v, v != 0
}

// ack records the answer to push seq: err nil for an acknowledgement.
func (e *engine) ack(seq int64, err error) {
	if seq < 0 || seq >= int64(len(e.acks)) || e.acks[seq].Swap(true) {
		e.error(fmt.Errorf("answer for unknown or already answered push %d", seq))
		return
	}
	if err != nil {
		e.failed.Add(1)
		e.error(fmt.Errorf("push %d: %w", seq, err))
		return
	}
	sent, _ := e.sentAt(seq)
	lat := time.Duration(e.now() - sent)
	e.ackedBy[e.roomOfWriter(int(seq%int64(e.wl.Writers)))].Add(1)
	e.acked.Add(1)
	e.mu.Lock()
	e.ackLat = append(e.ackLat, lat)
	e.mu.Unlock()
}

// ackVersion records the answer to push seq with the version the server
// gave it.
func (e *engine) ackVersion(seq, version int64) {
	if seq >= 0 && seq < int64(len(e.versions)) {
		e.versions[seq].Store(version)
	}
	e.ack(seq, nil)
}

// error counts a failure and keeps the first few for the report.
func (e *engine) error(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs++
	if len(e.samples) < 5 {
		e.samples = append(e.samples, err.Error())
	}
}

// run connects, settles, pushes, drains and tallies.
func (e *engine) run(ctx context.Context, pid int) (*RunResult, error) {
	wl := e.wl
	res := &RunResult{
		Target: e.rel.Name(), Boards: wl.Boards, Conns: wl.Conns, Writers: wl.Writers,
		RatePerS: wl.Rate, DurationS: wl.Duration.Seconds(),
	}
	probe := newProber(pid)
	res.Server = probe.stats()
	probe.sample(&res.Server.Idle)

	rooms, err := e.rel.Rooms(ctx, wl.Boards)
	if err != nil {
		return nil, err
	}

	// Connections live until the run's end; readCtx ends their loops.
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	var loops sync.WaitGroup

	// Connect the subscribers, DialConcurrency at a time.
	connectStart := time.Now()
	connectCtx, cancelConnect := context.WithTimeout(ctx, wl.ConnectTimeout)
	recvs := make([]*receiver, wl.Conns)
	// Telling duplicates apart costs a bit per push per subscriber: kept
	// up to 256 MiB of bits.
	keepSeen := int64(len(e.sentNs))*int64(wl.Conns) <= 1<<31
	sem := make(chan struct{}, max(wl.DialConcurrency, 1))
	var dials sync.WaitGroup
	var connected, cutOff atomic.Int64
	for i := range recvs {
		r := &receiver{e: e, room: i % wl.Boards}
		if keepSeen {
			r.seen = make([]uint64, (len(e.sentNs)+63)/64)
		}
		recvs[i] = r
		select {
		case sem <- struct{}{}:
		case <-connectCtx.Done():
			r.err = connectCtx.Err()
			cutOff.Add(1)
			continue
		}
		dials.Add(1)
		go func() {
			defer dials.Done()
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(connectCtx, 15*time.Second)
			loop, err := e.rel.DialReceiver(dctx, rooms[r.room], r)
			cancel()
			if err != nil {
				r.err = err
				if connectCtx.Err() != nil {
					// Not the server refusing: the tool's bound on the
					// whole connect phase (-connect-timeout) ran out.
					cutOff.Add(1)
					return
				}
				e.error(fmt.Errorf("connect: %w", err))
				return
			}
			r.connected = true
			connected.Add(1)
			loops.Add(1)
			go func() {
				defer loops.Done()
				r.err = loop(readCtx)
			}()
		}()
	}
	dials.Wait()
	cancelConnect()
	res.Connected = int(connected.Load())
	res.ConnectCutOff = cutOff.Load()
	if res.ConnectCutOff > 0 {
		res.ConnectTimeoutS = wl.ConnectTimeout.Seconds()
	}
	res.ConnectS = time.Since(connectStart).Seconds()

	writers := make([]pusher, wl.Writers)
	for w := range writers {
		p, err := e.rel.DialWriter(ctx, rooms[e.roomOfWriter(w)], w, e)
		if err != nil {
			for _, p := range writers[:w] {
				p.Close()
			}
			stopReading()
			loops.Wait()
			return nil, fmt.Errorf("writer %d: %w", w, err)
		}
		writers[w] = p
	}
	defer func() {
		for _, p := range writers {
			p.Close()
		}
	}()

	// Every join is announced to everyone already there: let that storm
	// pass before timing anything.
	settle(ctx, func() int64 {
		var n int64
		for _, r := range recvs {
			n += r.msgs.Load()
		}
		return n
	}, 300*time.Millisecond, wl.SettleMax)
	probe.sample(&res.Server.Held)

	// Push for Duration at Rate, spread evenly over the writers.
	cpu0 := probe.cpuTimes()
	writeStart := time.Now()
	tl := startTimeline(pid)
	var wg sync.WaitGroup
	interval := time.Duration(float64(wl.Writers) / wl.Rate * float64(time.Second))
	for w, p := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.writeLoop(ctx, w, p, writeStart.Add(time.Duration(w)*interval/time.Duration(wl.Writers)), interval)
		}()
	}
	wg.Wait()
	writeEnd := time.Now()

	// Drain: every push answered and every subscriber has what it should.
	// Only connected subscribers count: one the connect phase never
	// reached is reported as cut off, not as missing deliveries.
	expected := func() int64 {
		var n int64
		for _, r := range recvs {
			if r.connected {
				n += e.ackedBy[r.room].Load()
			}
		}
		return n
	}
	delivered := func() int64 {
		var n int64
		for _, r := range recvs {
			n += r.got.Load()
		}
		return n
	}
	waitUntil(ctx, wl.Drain, func() bool {
		return e.acked.Load()+e.failed.Load() == e.sent.Load() && delivered() >= expected()
	})
	windowEnd := time.Now()
	secs := tl.end()
	cpu1 := probe.cpuTimes()
	probe.sample(&res.Server.After)

	stopReading()
	for _, p := range writers {
		p.Close()
	}
	loops.Wait()

	var lat []time.Duration
	bySeq := make([][]time.Duration, len(e.sentNs))
	for _, r := range recvs {
		lat = append(lat, r.lat...)
		for i, seq := range r.seqs {
			if seq >= 0 {
				bySeq[seq] = append(bySeq[seq], r.lat[i])
			}
		}
		res.Duplicates += r.dup.Load()
		if r.closeCode == livewire.CloseResync {
			res.Drops++
		}
		// A subscriber the server cut (or that failed) is counted by how
		// it ended, so a missing delivery is never silent.
		if r.connected && r.ended {
			if res.EndedEarly == nil {
				res.EndedEarly = map[string]int64{}
			}
			res.EndedEarly[endReason(r)]++
		}
		if r.connected && r.got.Load() == 0 && e.ackedBy[r.room].Load() > 0 {
			res.NoDelivery++
		}
	}
	res.PushesSent = e.sent.Load()
	res.PushesAcked = e.acked.Load()
	// The last push goes out one interval before the duration is over.
	res.PushesPerS = float64(res.PushesAcked) / max(writeEnd.Sub(writeStart), wl.Duration).Seconds()
	res.Expected = expected()
	res.Delivered = delivered()
	res.Missing = max(res.Expected-res.Delivered, 0)
	res.WindowS = windowEnd.Sub(writeStart).Seconds()
	res.Timeline = buildTimeline(ctx, deliveries{start: writeStart, sentNs: e.sentAt, version: func(seq int64) int64 { return e.versions[seq].Load() }, bySeq: bySeq}, secs, e.diag, e.start)
	s := summarize(lat)
	res.Latency = &s
	e.mu.Lock()
	a := summarize(e.ackLat)
	res.AckLatency = &a
	res.Errors = e.errs
	res.ErrorSamples = e.samples
	e.mu.Unlock()
	res.setCPU(cpu0, cpu1, res.Delivered)
	return res, nil
}

// writeLoop sends writer w's pushes: the k-th at first + k·interval,
// perWriter of them, and never past the duration (plus one interval of
// slack for a late start).
func (e *engine) writeLoop(ctx context.Context, w int, p pusher, first time.Time, interval time.Duration) {
	deadline := first.Add(e.wl.Duration + interval)
	for k := int64(0); k < e.perWriter; k++ {
		at := first.Add(time.Duration(k) * interval)
		if at.After(deadline) {
			return
		}
		if d := time.Until(at); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		seq := e.seqOf(w, k)
		sent := e.now()
		e.sentNs[seq].Store(sent)
		err := p.Push(ctx, seq, sent)
		if errors.Is(err, errBusy) {
			e.sentNs[seq].Store(0)
			e.error(err)
			continue
		}
		e.sent.Add(1)
		if err != nil {
			e.acks[seq].Store(true)
			e.failed.Add(1)
			e.error(fmt.Errorf("push %d: %w", seq, err))
		}
	}
}

// settle waits until count has not moved for quiet, at most max.
func settle(ctx context.Context, count func() int64, quiet, max time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	tick := time.NewTicker(quiet / 3)
	defer tick.Stop()
	last, still := count(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n := count(); n != last {
			last, still = n, 0
		} else if still++; still >= 3 {
			return
		}
	}
}

// waitUntil polls done every 10 ms for at most max.
func waitUntil(ctx context.Context, max time.Duration, done func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// record is a receiver's delivery of push seq, sent at sentNs; a push
// already received is counted as a duplicate only.
func (r *receiver) record(seq, sentNs int64) {
	if r.seen != nil && seq >= 0 && seq < int64(len(r.seen))*64 {
		w, bit := seq/64, uint64(1)<<(seq%64)
		if r.seen[w]&bit != 0 {
			r.dup.Add(1)
			return
		}
		r.seen[w] |= bit
	}
	r.lat = append(r.lat, time.Duration(r.e.now()-sentNs))
	if seq >= 0 && seq < int64(len(r.e.sentNs)) {
		r.seqs = append(r.seqs, int32(seq))
	} else {
		r.seqs = append(r.seqs, -1)
	}
	r.got.Add(1)
}

// endErr turns a read loop's end into its result: nil for the run's own
// end, the close code remembered for drops.
func (r *receiver) endErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	r.closeCode = int(websocket.CloseStatus(err))
	r.ended = true
	return err
}

// endReason names how a subscriber ended early: its close code, or the
// error when the server sent none (the socket was cut).
func endReason(r *receiver) string {
	if r.closeCode > 0 {
		return fmt.Sprintf("close %d", r.closeCode)
	}
	if r.err == nil {
		return "ended"
	}
	msg := r.err.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return "no close frame: " + msg
}

// readLoop is a subscriber's read loop on conn, for a relay's DialReceiver:
// every message counts for settling, then handle (the relay's protocol)
// records the deliveries it holds. data is valid only during the call.
func (r *receiver) readLoop(conn *websocket.Conn, handle func(data []byte)) func(context.Context) error {
	return func(ctx context.Context) error {
		stop := closeOnDone(ctx, conn)
		defer stop()
		var buf []byte
		for range maxMessagesPerConn {
			data, err := readMessage(conn, &buf)
			if err != nil {
				return r.endErr(ctx, err)
			}
			r.msgs.Add(1)
			handle(data)
		}
		return errTooManyMessages
	}
}

// ackSocket is a writer's connection whose answers (acknowledgements, and
// whatever else the server sends) one goroutine reads until Close.
type ackSocket struct {
	conn      *websocket.Conn
	done      chan struct{}
	closeOnce sync.Once
}

// newAckSocket starts reading conn, calling handle on every message, until
// the connection ends.
func newAckSocket(conn *websocket.Conn, handle func(data []byte)) *ackSocket {
	s := &ackSocket{conn: conn, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		ctx := context.Background() // ended by Close closing the connection
		for range maxMessagesPerConn {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			handle(data)
		}
	}()
	return s
}

// Close closes the connection and waits for its reader; it is safe twice.
func (s *ackSocket) Close() {
	s.closeOnce.Do(func() {
		s.conn.CloseNow()
		<-s.done
	})
}

// closeOnDone closes conn when ctx ends. Reads then use a context that never
// ends: coder/websocket registers a context.AfterFunc on every Read whose
// context can end, a cost per message that 50,000 messages a second make
// the tool pay (and take from the server's share of the CPUs).
func closeOnDone(ctx context.Context, conn *websocket.Conn) (stop func()) {
	unregister := context.AfterFunc(ctx, func() { conn.CloseNow() })
	return func() {
		unregister()
		conn.CloseNow()
	}
}

// maxMessagesPerConn bounds a connection's read loop besides the run's
// deadline: far more than any run delivers.
const maxMessagesPerConn = 1 << 30

var errTooManyMessages = errors.New("connection read its maximum number of messages")

// maxMessage bounds one received message (hello with 1,000 others present
// is about 80 KB).
const maxMessage = 4 << 20

// readMessage reads the next message into *buf, reused from call to call:
// a subscriber's loop allocates nothing per message. The data is valid
// until the next call.
func readMessage(conn *websocket.Conn, buf *[]byte) ([]byte, error) {
	_, r, err := conn.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer((*buf)[:0])
	if _, err := b.ReadFrom(io.LimitReader(r, maxMessage)); err != nil {
		return nil, err
	}
	*buf = b.Bytes()
	return *buf, nil
}
