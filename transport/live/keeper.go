package live

import (
	"sync"
	"sync/atomic"
	"time"

	"corkboard/transport/livewire"
)

// keeper is one goroutine per channel, instead of a pinger and a session
// watcher per connection: it pings every live connection every
// livePingEvery, cuts a connection whose peer has not answered within
// livePingTimeout (a dead peer TCP has not noticed yet), and drops a
// connection whose session has ended (logout or expiry; the socket closes
// with 4001) within a tick. A connection is first pinged livePingEvery
// after it opened (not amid the joins of a busy board), so the pings are
// spread as the connections' openings were. It runs only while there are
// live connections. The zero value is ready.
type keeper struct {
	// every, timeout and tick are the ping period, the wait for a pong and
	// the keeper's step; zero means the defaults (tests shorten them).
	every, timeout, tick time.Duration

	pings atomic.Int64 // pings sent, for tests

	mu      sync.Mutex
	conns   []*liveConn
	running bool
}

// keeperTick is the keeper's step: how late a logout may close a socket.
const keeperTick = time.Second

func (k *keeper) durations() (every, timeout, tick time.Duration) {
	every, timeout, tick = k.every, k.timeout, k.tick
	if every <= 0 {
		every = livePingEvery
	}
	if timeout <= 0 {
		timeout = livePingTimeout
	}
	if tick <= 0 {
		tick = keeperTick
	}
	return every, timeout, tick
}

// add starts keeping lc (after it joined its room).
func (k *keeper) add(lc *liveConn) {
	every, _, _ := k.durations()
	k.mu.Lock()
	defer k.mu.Unlock()
	lc.keepIdx = len(k.conns)
	lc.nextPing = time.Now().Add(every)
	k.conns = append(k.conns, lc)
	if !k.running {
		k.running = true
		go k.run()
	}
}

// remove stops keeping lc; safe for a connection never added or removed
// twice.
func (k *keeper) remove(lc *liveConn) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := lc.keepIdx
	if i < 0 || i >= len(k.conns) || k.conns[i] != lc {
		return
	}
	last := len(k.conns) - 1
	k.conns[i] = k.conns[last]
	k.conns[i].keepIdx = i
	k.conns[last] = nil
	k.conns = k.conns[:last]
	lc.keepIdx = -1
}

// run is the keeper's goroutine; it ends when no connection is left.
func (k *keeper) run() {
	every, timeout, tick := k.durations()
	t := time.NewTicker(tick)
	defer t.Stop()
	var dead []*liveConn
	for {
		<-t.C
		now := time.Now()
		k.mu.Lock()
		if len(k.conns) == 0 {
			k.running = false
			k.mu.Unlock()
			return
		}
		for _, lc := range k.conns {
			k.visit(lc, now, every, timeout, &dead)
		}
		k.mu.Unlock()
		// Closing a socket may wait (for the library's goroutines): not
		// under the lock, and not on the keeper's goroutine.
		for i, lc := range dead {
			go lc.conn.CloseNow() // the engine calls Ended
			dead[i] = nil
		}
		dead = dead[:0]
	}
}

// visit is one tick of one connection. Called with k.mu held.
func (k *keeper) visit(lc *liveConn, now time.Time, every, timeout time.Duration, dead *[]*liveConn) {
	if lc.link && !lc.sessionEnded && !lc.ch.opts.Now().Before(lc.linkEnds) {
		// The read-only link it was opened with has expired (a revoked
		// one is kicked at once): closed with 4003, as on revocation.
		lc.sessionEnded = true
		lc.sub.Drop(livewire.CloseForbidden, "the read-only link has expired")
	}
	if lc.watch != nil && !lc.sessionEnded {
		select {
		case <-lc.watch.Ended():
			lc.sessionEnded = true
			// Drop does not wait: the connection's writer closes the
			// socket with 4001.
			lc.sub.Drop(livewire.CloseSessionEnded, "session ended: log in again")
		default:
		}
	}
	if !lc.pingSent.IsZero() {
		if lc.ponged.Load() {
			lc.pingSent = time.Time{}
		} else if now.Sub(lc.pingSent) >= timeout {
			lc.pingSent = time.Time{}
			*dead = append(*dead, lc)
			return
		}
	}
	if lc.pingSent.IsZero() && !now.Before(lc.nextPing) {
		lc.ponged.Store(false)
		lc.pingSent = now
		lc.nextPing = now.Add(every)
		// Never waits (livesock.Conn.Ping).
		lc.conn.Ping()
		k.pings.Add(1)
	}
}

// SetPings shortens the keeper's ping period, pong timeout and step
// (tests); call it before the first connection.
func (ch *Channel) SetPings(every, timeout, tick time.Duration) {
	ch.keeper.mu.Lock()
	defer ch.keeper.mu.Unlock()
	ch.keeper.every, ch.keeper.timeout, ch.keeper.tick = every, timeout, tick
}

// PingsSent returns how many pings the keeper has sent.
func (ch *Channel) PingsSent() int64 { return ch.keeper.pings.Load() }
