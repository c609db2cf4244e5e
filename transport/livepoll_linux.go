package transport

import (
	"errors"
	"log/slog"
	"sync"
	"syscall"
)

// livePoller waits for every idle live connection's socket to become
// readable with one epoll instance and one goroutine per process, instead
// of one goroutine per connection blocked in the WebSocket library's Read
// (4 KiB of stack each, and as much again of garbage collector headroom:
// most of what an idle connection cost; docs/benchmarks.md, "Idle
// connections"). A connection is registered one-shot: when its socket has
// something, the poller starts a goroutine (readBurst) that reads what
// there is, hands whole messages to the library, and arms the socket again.
//
// The socket stays in Go's own poller too (an fd may be in several epoll
// sets): the library's reads and the writer's waits go through it as
// before. Events carry a token, never the descriptor's number, which a
// closed socket's successor may reuse; a closed descriptor leaves the
// epoll set by itself.
type livePoller struct {
	epfd int

	mu    sync.Mutex
	conns map[uint64]*liveConn
	next  uint64
}

// sharedPoller is the process's poller, started on first use; nil where
// epoll cannot be had (the connections then keep a reader goroutine each).
var sharedPoller = sync.OnceValue(func() *livePoller {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		slog.Warn("live: no epoll; one reader goroutine per connection", slog.Any("err", err))
		return nil
	}
	p := &livePoller{epfd: epfd, conns: map[uint64]*liveConn{}}
	go p.run()
	return p
})

// register gives lc a token; its socket is armed by the first arm.
func (p *livePoller) register(lc *liveConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	lc.pollToken = p.next
	p.conns[lc.pollToken] = lc
}

// forget drops lc's token: an event already taken for it is ignored.
func (p *livePoller) forget(lc *liveConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, lc.pollToken)
}

// arm asks for one event when lc's socket has something to read (or is
// closed or failed); false when the socket is closed already.
func (p *livePoller) arm(lc *liveConn) bool {
	var cerr error
	err := lc.rd.raw.Control(func(fd uintptr) {
		ev := syscall.EpollEvent{
			Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT,
			Fd:     int32(uint32(lc.pollToken)),
			Pad:    int32(uint32(lc.pollToken >> 32)),
		}
		cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_MOD, int(fd), &ev)
		if errors.Is(cerr, syscall.ENOENT) {
			cerr = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
		}
	})
	return err == nil && cerr == nil
}

// run is the poller's goroutine (it blocks in epoll_wait on a thread of
// its own, as os/signal's does).
func (p *livePoller) run() {
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(p.epfd, events, -1)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			// Not expected on a valid epoll descriptor; the connections
			// registered would wait forever, so fail loudly.
			panic("transport: epoll_wait: " + err.Error())
		}
		p.mu.Lock()
		for _, ev := range events[:n] {
			tok := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if lc := p.conns[tok]; lc != nil {
				go lc.readBurst()
			}
		}
		p.mu.Unlock()
	}
}

// readNB reads what lc's socket holds without waiting: errWouldBlock when
// it holds nothing.
func (lc *liveConn) readNB(p []byte) (n int, err error) {
	rerr := lc.rd.raw.Read(func(fd uintptr) bool {
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
