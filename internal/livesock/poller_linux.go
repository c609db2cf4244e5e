package livesock

import (
	"errors"
	"log/slog"
	"sync"
	"syscall"
)

// poller waits for every idle fast connection's socket to become readable
// with one epoll instance and one goroutine per engine, instead of one
// goroutine per connection blocked in the WebSocket library's Read (4 KiB
// of stack each, and as much again of garbage collector headroom: most of
// what an idle connection cost; docs/benchmarks.md, "Idle connections"). A
// connection is registered one-shot: when its socket has something, the
// poller starts a goroutine (readBurst) that reads what there is, hands
// whole messages to the library, and arms the socket again.
//
// The socket stays in Go's own poller too (an fd may be in several epoll
// sets): the library's reads and the writer's waits go through it as
// before. Events carry a token, never the descriptor's number, which a
// closed socket's successor may reuse; a closed descriptor leaves the
// epoll set by itself. Token 0 is the poller's own wake-up pipe.
type poller struct {
	log  *slog.Logger
	epfd int
	wake [2]int // a pipe: a byte written to wake[1] stops run
	done chan struct{}

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
	p := &poller{log: log, epfd: epfd, conns: map[uint64]*fastConn{}, done: make(chan struct{})}
	if err := syscall.Pipe2(p.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		return nil, err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p.wake[0], &ev); err != nil {
		p.closeFDs()
		return nil, err
	}
	go p.run()
	return p, nil
}

func (p *poller) closeFDs() {
	syscall.Close(p.epfd)
	syscall.Close(p.wake[0])
	syscall.Close(p.wake[1])
}

// register gives c a token; its socket is armed by the first arm.
func (p *poller) register(c *fastConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	c.pollToken = p.next
	p.conns[c.pollToken] = c
}

// forget drops c's token: an event already taken for it is ignored.
func (p *poller) forget(c *fastConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c.pollToken)
}

// arm asks for one event when c's socket has something to read (or is
// closed or failed); false when the socket is closed already, or the
// poller is.
func (p *poller) arm(c *fastConn) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false
	}
	var cerr error
	err := c.raw.Control(func(fd uintptr) {
		ev := syscall.EpollEvent{
			Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT,
			Fd:     int32(uint32(c.pollToken)),
			Pad:    int32(uint32(c.pollToken >> 32)),
		}
		cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_MOD, int(fd), &ev)
		if errors.Is(cerr, syscall.ENOENT) {
			cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
		}
	})
	return err == nil && cerr == nil
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
		n, err := syscall.EpollWait(p.epfd, events, -1)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			p.log.Error("live poller: epoll_wait failed; closing the connections it held", slog.Any("err", err))
			p.stop()
			return
		}
		p.mu.RLock()
		for _, ev := range events[:n] {
			tok := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if tok == 0 {
				p.mu.RUnlock()
				p.stop()
				return
			}
			if c := p.conns[tok]; c != nil {
				go c.readBurst()
			}
		}
		p.mu.RUnlock()
	}
}

// stop marks the poller closed, closes its descriptors and closes every
// connection it still held at once. On run's goroutine.
func (p *poller) stop() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*fastConn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	p.closeFDs()
	for _, c := range conns {
		c.CloseNow()
	}
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

// readNB reads what c's socket holds without waiting: errWouldBlock when
// it holds nothing.
func (c *fastConn) readNB(p []byte) (n int, err error) {
	rerr := c.raw.Read(func(fd uintptr) bool {
		n, err = syscall.Read(int(fd), p)
		return true // never wait in Go's poller: ours said there is something
	})
	if n < 0 {
		n = 0
	}
	if errors.Is(err, syscall.EAGAIN) {
		err = errWouldBlock
	}
	if rerr != nil {
		err = rerr
	}
	return n, err
}
