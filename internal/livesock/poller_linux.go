package livesock

import (
	"errors"
	"log/slog"
	"sync"
	"syscall"
)

// poller waits for every idle fast connection's socket to become readable
// with one epoll instance and one goroutine per engine, instead of one
// goroutine per connection blocked in a read (4 KiB of stack each, and as
// much again of garbage collector headroom: most of what an idle
// connection cost; docs/benchmarks.md, "Idle connections"). A connection
// is registered one-shot: when its socket has something, the poller starts
// a goroutine (readBurst) that reads what there is, handles each whole
// message and control frame, and arms the socket again. A second epoll set
// and goroutine wake the writers that wait for room (sock.waitWritable),
// also one-shot.
//
// The sockets are not in Go's own poller (sock_linux.go). Events carry a
// token, never the descriptor's number, which a closed socket's successor
// may reuse; a closed descriptor leaves both epoll sets by itself. Token 0
// is the poller's own wake-up pipe.
type poller struct {
	log  *slog.Logger
	epfd int
	// wepfd is the second epoll set: sockets whose writer waits for room
	// (sock.waitWritable), one-shot too; runWrites wakes the writer.
	wepfd int
	wake  [2]int // a pipe: a byte written to wake[1] stops run and runWrites
	done  chan struct{}
	wdone chan struct{}

	// mu guards conns and next, and closed: once set, epfd is not used
	// (arm answers false) and run closes it.
	mu     sync.RWMutex
	conns  map[uint64]*fastConn
	next   uint64
	closed bool
}

// newPoller starts a poller; an error where epoll cannot be had.
func newPoller(log *slog.Logger) (*poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wepfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		syscall.Close(epfd)
		return nil, err
	}
	p := &poller{log: log, epfd: epfd, wepfd: wepfd, conns: map[uint64]*fastConn{}, done: make(chan struct{}), wdone: make(chan struct{})}
	if err := syscall.Pipe2(p.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		syscall.Close(wepfd)
		return nil, err
	}
	for _, e := range []int{epfd, wepfd} {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN}
		if err := syscall.EpollCtl(e, syscall.EPOLL_CTL_ADD, p.wake[0], &ev); err != nil {
			p.closeFDs()
			return nil, err
		}
	}
	go p.run()
	go p.runWrites()
	return p, nil
}

func (p *poller) closeFDs() {
	syscall.Close(p.epfd)
	syscall.Close(p.wepfd)
	syscall.Close(p.wake[0])
	syscall.Close(p.wake[1])
}

// register gives c a token; its socket is armed by the first arm.
func (p *poller) register(c *fastConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	c.sock.token = p.next
	p.conns[c.sock.token] = c
}

// forget drops c's token: an event already taken for it is ignored.
func (p *poller) forget(c *fastConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c.sock.token)
}

// arm asks for one event when c's socket has something to read (or is
// closed or failed); false when the socket is closed already, or the
// poller is.
func (p *poller) arm(c *fastConn) bool {
	return p.ctl(p.epfd, &c.sock, syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLONESHOT)
}

// armWrite asks for one event when s has room to write (or is closed or
// failed), for its waiting writer; false when the socket is closed
// already, or the poller is.
func (p *poller) armWrite(s *sock) bool {
	return p.ctl(p.wepfd, s, syscall.EPOLLOUT|syscall.EPOLLONESHOT)
}

// ctl registers (or re-arms) s in the epoll set epfd under its
// connection's token.
func (p *poller) ctl(epfd int, s *sock, events uint32) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false
	}
	tok := s.token
	var err error
	ok := s.do(func(fd int) {
		ev := syscall.EpollEvent{Events: events}
		setToken(&ev, tok)
		err = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_MOD, fd, &ev)
		if errors.Is(err, syscall.ENOENT) {
			err = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev)
		}
	})
	return ok && err == nil
}

// run is the poller's goroutine (it blocks in epoll_wait on a thread of
// its own, as os/signal's does). It ends when close wakes it, or when
// epoll_wait fails, which a valid epoll descriptor never does: then the
// connections it holds are closed (they would wait forever) and later
// connections keep a reader goroutine each.
func (p *poller) run() {
	defer close(p.done)
	events := make([]syscall.EpollEvent, 256)
	for {
		woken, err := p.dispatch(p.epfd, events, func(c *fastConn) {
			c.bursts.Load() // see fastConn.bursts
			go c.readBurst()
		})
		if err != nil {
			p.log.Error("live poller: epoll_wait failed; closing the connections it held", slog.Any("err", err))
		}
		if err != nil || woken {
			p.stop()
			return
		}
	}
}

// runWrites is the second epoll set's goroutine: it wakes the writers
// waiting for room. It ends when the wake-up pipe is readable.
func (p *poller) runWrites() {
	defer close(p.wdone)
	events := make([]syscall.EpollEvent, 64)
	for {
		woken, err := p.dispatch(p.wepfd, events, func(c *fastConn) { c.sock.signal() })
		if err != nil {
			// Never for a valid epoll descriptor: writers that wait for
			// room meet their deadlines from now on, and their
			// connections end.
			p.log.Error("live poller: epoll_wait failed for writes", slog.Any("err", err))
		}
		if err != nil || woken {
			return
		}
	}
}

// dispatch waits for the events of one epoll set and calls fn for the
// connection each names (under the read lock, so fn must not wait);
// woken reports the wake-up pipe's token: the set's goroutine is to end.
func (p *poller) dispatch(epfd int, events []syscall.EpollEvent, fn func(*fastConn)) (woken bool, err error) {
	n, err := epollWait(epfd, events)
	if err != nil {
		return false, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, ev := range events[:n] {
		tok := tokenOf(&ev)
		if tok == 0 {
			return true, nil
		}
		if c := p.conns[tok]; c != nil {
			fn(c)
		}
	}
	return false, nil
}

// stop marks the poller closed, closes every connection it still held at
// once, waits for runWrites and closes the descriptors. On run's
// goroutine.
func (p *poller) stop() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*fastConn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	_, _ = syscall.Write(p.wake[1], []byte{0}) // runWrites too, if run failed
	for _, c := range conns {
		c.CloseNow()
	}
	<-p.wdone
	p.closeFDs()
}

// close stops the poller and waits for it; safe to call twice.
func (p *poller) close() {
	// Under the lock: stop closes the pipe only after it set closed.
	p.mu.RLock()
	if !p.closed {
		_, _ = syscall.Write(p.wake[1], []byte{0})
	}
	p.mu.RUnlock()
	<-p.done
}

// isClosed reports whether the poller stopped.
func (p *poller) isClosed() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.closed
}

// len is how many connections the poller holds.
func (p *poller) len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.conns)
}

// errWouldBlock is readNB's answer when the socket holds nothing more.
var errWouldBlock = errors.New("livesock: nothing to read yet")

// epollWait waits for events on epfd with no timeout, again when a signal
// interrupts it.
func epollWait(epfd int, events []syscall.EpollEvent) (int, error) {
	for {
		n, err := syscall.EpollWait(epfd, events, -1)
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}

// setToken puts a connection's 64-bit token in an event's data (the Fd
// and Pad halves of epoll_data), where tokenOf reads it back: sockets are
// found by token, never by descriptor number, which the kernel reuses.
func setToken(ev *syscall.EpollEvent, tok uint64) {
	ev.Fd, ev.Pad = int32(uint32(tok)), int32(uint32(tok>>32))
}

// tokenOf is the token setToken put in ev.
func tokenOf(ev *syscall.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}
