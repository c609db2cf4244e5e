package livesock

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sock is a polled fast connection's socket, taken out of Go's net
// package: a descriptor of its own (a duplicate, after which the
// net.Conn is closed), read and written with non-blocking system calls,
// with waits for room to write in the poller's second epoll set. What an
// idle connection no longer holds is net's netFD, its two addresses and
// the runtime's poll descriptor: about a third of what it held besides
// the WebSocket state (docs/benchmarks.md, "Socket engines").
//
// The descriptor's number is only used under mu's read lock, and close
// takes the write lock, so no system call can reach a descriptor that was
// closed and whose number went to another connection: what Go's netFD
// reference count did. The system calls under the read lock never wait.
type sock struct {
	mu sync.RWMutex
	fd int // -1 once closed
	// poller and token are the poller holding the socket and its token
	// there (poller.register).
	poller *poller
	token  uint64

	// deadline is the writes' deadline (UnixNano; 0: none).
	deadline atomic.Int64
	// wake is signalled when the socket has room (the poller) or is
	// closed; made by the first write that has to wait.
	wake atomic.Pointer[chan struct{}]
}

// takeSocket duplicates conn's descriptor (close-on-exec; the duplicate
// shares the socket's non-blocking mode) and closes conn, which takes the
// original out of Go's poller. On an error conn is left as it was.
func takeSocket(conn net.Conn) (int, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1, errors.New("livesock: no descriptor")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if errno != 0 {
			derr = errno
			return
		}
		fd = int(r)
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, os.NewSyscallError("fcntl", derr)
	}
	// Closing the original only drops Go's hold on the socket: the
	// duplicate keeps it open (no shutdown is sent).
	_ = conn.Close()
	return fd, nil
}

// do runs f with the descriptor under the read lock; false once closed.
func (s *sock) do(f func(fd int)) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.fd < 0 {
		return false
	}
	f(s.fd)
	return true
}

// readNB reads what the socket holds without waiting: errWouldBlock when
// it holds nothing; 0 and no error at the stream's end.
func (s *sock) readNB(p []byte) (n int, err error) {
	if !s.do(func(fd int) { n, err = syscall.Read(fd, p) }) {
		return 0, net.ErrClosed
	}
	if n < 0 {
		n = 0
	}
	if errors.Is(err, syscall.EAGAIN) {
		err = errWouldBlock
	}
	return n, err
}

// writeNB writes what the socket buffer has room for, without waiting:
// the socket writer's direct write (directWriter's, for a net.Conn).
func (s *sock) writeNB(p []byte) (n int) {
	s.do(func(fd int) {
		for n < len(p) {
			k, err := syscall.Write(fd, p[n:])
			if err != nil || k <= 0 {
				break // EAGAIN: the socket buffer is full; else the writer meets the error
			}
			n += k
		}
	})
	return n
}

// Write writes all of p, waiting for room up to the deadline.
func (s *sock) Write(p []byte) (int, error) {
	n := 0
	for {
		var err error
		if !s.do(func(fd int) {
			for n < len(p) {
				var k int
				k, err = syscall.Write(fd, p[n:])
				if err != nil || k <= 0 {
					return
				}
				n += k
			}
		}) {
			return n, net.ErrClosed
		}
		if n == len(p) {
			return n, nil
		}
		if err != nil && !errors.Is(err, syscall.EAGAIN) {
			return n, os.NewSyscallError("write", err)
		}
		if err := s.waitWritable(); err != nil {
			return n, err
		}
	}
}

// SetWriteDeadline sets Write's deadline (the zero time: none).
func (s *sock) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		s.deadline.Store(0)
	} else {
		s.deadline.Store(t.UnixNano())
	}
	return nil
}

// waitWritable waits until the socket has room, it is closed or the
// deadline passes (os.ErrDeadlineExceeded, as net's).
func (s *sock) waitWritable() error {
	ch := s.wake.Load()
	if ch == nil {
		c := make(chan struct{}, 1)
		if !s.wake.CompareAndSwap(nil, &c) {
			ch = s.wake.Load()
		} else {
			ch = &c
		}
	}
	wait := time.Duration(-1)
	if d := s.deadline.Load(); d != 0 {
		wait = time.Until(time.Unix(0, d))
		if wait <= 0 {
			return os.ErrDeadlineExceeded
		}
	}
	if !s.poller.armWrite(s) {
		return net.ErrClosed
	}
	if wait < 0 {
		<-*ch
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-*ch:
		return nil
	case <-t.C:
		return os.ErrDeadlineExceeded
	}
}

// signal wakes a write waiting for room (or for the close).
func (s *sock) signal() {
	if ch := s.wake.Load(); ch != nil {
		select {
		case *ch <- struct{}{}:
		default:
		}
	}
}

// close closes the descriptor once; a waiting write wakes and finds it
// closed.
func (s *sock) close() {
	s.mu.Lock()
	if s.fd >= 0 {
		_ = syscall.Close(s.fd)
		s.fd = -1
	}
	s.mu.Unlock()
	s.signal()
}
