package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Probes tell a node how current its listener is, without a round trip
// per question (docs/scale-out.md, "Pulls from memory"). The bus sends
// itself a NOTIFY on a channel of its own, which its listening connection
// also LISTENs to, and notes the time it sent it. PostgreSQL hands a
// listener the notifications of different transactions in the order they
// committed (they enter one queue under a database-wide lock at commit),
// so when a probe sent at ts comes back, every notification whose
// transaction committed before ts has been read and handed to receive.
// Probes only run while someone asks (Current), so an idle node sends
// none.

// monoOrigin anchors mono: time.Since of a time.Time read at start uses the
// monotonic clock alone, one cheap read.
var monoOrigin = time.Now()

// mono is the monotonic clock in nanoseconds since monoOrigin, never 0.
func mono() int64 { return int64(time.Since(monoOrigin)) + 1 }

// monoAt is mono at t, a time.Now reading the caller already made (a pull
// reads the clock anyway): no second clock read. A t without a monotonic
// reading (Round(0) strips it; a test's clock never had one) is not
// trusted, since wall time may jump: the clock is read instead.
func monoAt(t time.Time) int64 {
	if t.Round(0) == t {
		return mono()
	}
	return int64(t.Sub(monoOrigin)) + 1
}

// probeSlots is how many probes may be on their way at once: more are
// forgotten (a probe that comes back unknown counts for nothing).
const probeSlots = 256

// probes is a bus's probe state.
type probes struct {
	channel string // this bus's own channel

	demand atomic.Int64  // mono of the last question; the sender runs while recent
	wake   chan struct{} // buffered 1: a question after a quiet while

	// since is mono when the current connection LISTENed (0 while none):
	// only probes sent after it count. at is the send time of the latest
	// probe that came back on it (0: none yet).
	since atomic.Int64
	at    atomic.Int64

	mu                   sync.Mutex
	seq                  uint64
	sent                 [probeSlots]sentProbe
	returnedC            chan struct{} // closed and replaced whenever a probe comes back (WaitProbe)
	sentCount, backCount atomic.Int64
}

type sentProbe struct {
	seq uint64
	at  int64
}

func (p *probes) init(channel string) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	p.channel = channel + "_probe_" + hex.EncodeToString(b[:])
	p.wake = make(chan struct{}, 1)
	p.returnedC = make(chan struct{})
}

// listening: the listener's connection LISTENs from now on.
func (p *probes) listening() {
	p.at.Store(0)
	p.since.Store(mono())
}

// lost: the listener's connection is gone; nothing is current until a
// probe comes back on the next one.
func (p *probes) lost() {
	p.since.Store(0)
	p.at.Store(0)
}

// next numbers a probe about to be sent and notes when.
func (p *probes) next() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	p.sent[p.seq%probeSlots] = sentProbe{seq: p.seq, at: mono()}
	p.sentCount.Add(1)
	return p.seq
}

// returned takes a probe the listener read. Called by the listener's
// goroutine, after it handed on every notification read before.
func (p *probes) returned(payload string) {
	seq, err := strconv.ParseUint(payload, 10, 64)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.sent[seq%probeSlots]
	since := p.since.Load()
	if sp.seq != seq || since == 0 || sp.at < since {
		return
	}
	if sp.at > p.at.Load() {
		p.at.Store(sp.at)
	}
	p.backCount.Add(1)
	close(p.returnedC)
	p.returnedC = make(chan struct{})
}

// Current reports whether a probe sent less than within ago has come back
// on the listener's current connection: then every note committed more
// than within ago has been handed to receive. It also keeps the probes
// going for BusOptions.ProbeFor. Cheap: one monotonic clock read and a few
// atomic loads (a store a few times a second).
func (b *Bus) Current(reading time.Time, within time.Duration) bool {
	p := &b.probes
	now := monoAt(reading)
	if last := p.demand.Load(); now-last > int64(b.opts.ProbeFor/8) {
		p.demand.Store(now)
		// Every stored question wakes the sender (a few times a second at
		// most): one that only woke it after a quiet ProbeFor could miss a
		// sender that read the old demand just before this store and went
		// to sleep, and with questions every ProbeFor/8 none would wake it.
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	at := p.at.Load()
	return at != 0 && now-at < int64(within)
}

// WaitProbe asks for probes and waits until one sent after the call has
// come back (tests: a node that has caught up with its listener).
func (b *Bus) WaitProbe(ctx context.Context) error {
	p := &b.probes
	start := mono()
	for {
		p.mu.Lock()
		c := p.returnedC
		p.mu.Unlock()
		if p.at.Load() > start {
			return nil
		}
		b.Current(time.Now(), 0)
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Probes returns how many probes were sent and how many came back and
// counted (tests and the load figures: what probes cost PostgreSQL).
func (b *Bus) Probes() (sent, back int64) {
	return b.probes.sentCount.Load(), b.probes.backCount.Load()
}

// maxProbesInFlight bounds the probes being sent at once: a slow NOTIFY
// (a busy server) does not hold the next one back, so probes keep coming
// back every ProbeEvery while each takes longer than that; past the bound
// the server is too slow for probes to help.
const maxProbesInFlight = 4

// sendProbes is the probe sender: every ProbeEvery while questions come,
// asleep otherwise. Each probe is sent by a goroutine of its own.
func (b *Bus) sendProbes() {
	p := &b.probes
	slots := make(chan struct{}, maxProbesInFlight)
	var sending sync.WaitGroup
	defer sending.Wait()
	t := time.NewTicker(b.opts.ProbeEvery)
	defer t.Stop()
	for {
		for mono()-p.demand.Load() > int64(b.opts.ProbeFor) {
			select {
			case <-p.wake: // and look at the demand again: the wake may be an old one
			case <-b.ctx.Done():
				return
			}
		}
		if p.since.Load() != 0 {
			// Not while the listener is away: it would not hear it.
			select {
			case slots <- struct{}{}:
				sending.Go(func() {
					b.sendProbe()
					<-slots
				})
			default:
			}
		}
		select {
		case <-t.C:
		case <-b.ctx.Done():
			return
		}
	}
}

// sendProbe sends one probe. Its time is taken before the NOTIFY leaves,
// so it is no later than the probe's commit.
func (b *Bus) sendProbe() {
	seq := b.probes.next()
	ctx, cancel := b.s.call(b.ctx)
	defer cancel()
	if _, err := b.s.pool.Exec(ctx, notifySQL, b.probes.channel, strconv.FormatUint(seq, 10)); err != nil && b.ctx.Err() == nil {
		b.log.Debug("probe the node bus", slog.Any("err", err))
	}
}
