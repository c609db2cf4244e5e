package livesock

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// socketWriter writes a fast connection's frames: the messages the server
// sends, pings and pongs, and the close frame. Fan-out is where the
// server's CPU goes (docs/benchmarks.md):
//
//   - A message is framed once per push, not once per subscriber (the
//     caller hands Send a prepared frame), and the room's fan-out goroutine writes the
//     frame straight to every socket that has room for it, with one
//     non-blocking write each: no goroutine wakes, no timer, no lock of a
//     library per frame. This is what a Node relay does in its send loop.
//   - A socket that cannot take the whole frame at once (a slow or dead
//     client) gets the rest, and every later message, queued; a writer
//     goroutine writes the queue, waiting for the socket with a deadline.
//     The room never waits: a full queue makes Send report false and the
//     caller drops the connection.
//
// The writer goroutine exists only while there is something to write: it
// is started when the queue stops being empty (or the connection is to be
// closed) and ends when the queue is empty again. An idle connection
// costs no goroutine here, and most connections are idle.
//
// Frames must never interleave on the wire: whoever writes to the socket
// holds wmu, the close frame's writer too (writeControl); a frame begun by
// a non-blocking write is finished before anything else is written.
type socketWriter struct {
	conn socketConn // the connection's socket
	// direct writes as much of a frame as the socket takes without waiting
	// and returns how much that was (called with wmu held); nil where there
	// is no such write (a connection without a descriptor of its own, such
	// as TLS, or a platform without one; see directWriter): every frame is
	// then queued.
	direct func(p []byte) int
	// timeout bounds one wait for the socket.
	timeout time.Duration
	// spawn starts the writer goroutine (go f(); tests run it by hand).
	spawn func(f func())
	// ended is called by the writer goroutine when a write failed (err)
	// or when the connection is to be closed (nil), after stop: the
	// connection then closes its socket (at once, or with its close code).
	ended func(err error)

	wmu sync.Mutex // held by whoever writes to conn

	qmu     sync.Mutex // guards the fields below
	queue   [][]byte   // frames waiting, in order
	max     int32      // frames the queue may hold (set once, by init)
	partial bool       // queue[0] is the rest of a frame already begun on the wire
	running bool       // a writer goroutine runs (or is about to)
	dropped bool       // close the socket once the frame begun is written
	closed  bool
}

// socketConn is what the writer needs of a socket: a net.Conn's writes
// with a deadline (a sock's, without a poller the net.Conn).
type socketConn interface {
	Write(p []byte) (int, error)
	SetWriteDeadline(t time.Time) error
}

func newSocketWriter(max int, timeout time.Duration, ended func(err error)) *socketWriter {
	w := &socketWriter{}
	w.init(max, timeout, ended)
	return w
}

// init sets up a writer in place (a fastConn holds its writer by value).
func (w *socketWriter) init(max int, timeout time.Duration, ended func(err error)) {
	w.max, w.timeout, w.ended, w.spawn = int32(min(max, 1<<31-1)), timeout, ended, func(f func()) { go f() }
}

// drop makes the writer goroutine end the connection (ended(nil)) once the
// frame being written is finished; what is queued is not written.
func (w *socketWriter) drop() {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if w.closed {
		return
	}
	w.dropped = true
	w.kickLocked()
}

func (w *socketWriter) sendFrame(f []byte) bool {
	w.qmu.Lock()
	if w.closed {
		w.qmu.Unlock()
		return true // the connection is ending; nothing more is written
	}
	// TryLock: wmu is held while a write waits for the socket, and the room
	// must not wait with it.
	if len(w.queue) > 0 || w.direct == nil || !w.wmu.TryLock() {
		ok := w.enqueueLocked(f)
		w.qmu.Unlock()
		return ok
	}
	w.qmu.Unlock()
	if n := w.direct(f); n < len(f) {
		// The socket is full: the rest goes first in the queue (frames
		// queued meanwhile follow it), and the writer waits for the socket.
		// A frame begun on the wire is kept even if the writer was stopped
		// meanwhile: the close frame must not land inside it.
		w.qmu.Lock()
		if n > 0 || !w.closed {
			w.queue = slices.Insert(w.queue, 0, f[n:])
			w.partial = n > 0
			w.kickLocked()
		}
		w.qmu.Unlock()
	}
	w.wmu.Unlock()
	return true
}

// sendControl sends a control frame (the keeper's ping) without waiting:
// straight to the socket when nothing is queued, else ahead of the queued
// messages (after a frame begun on the wire), as RFC 6455 lets control
// frames go. It is not counted against the queue's bound (the keeper has
// at most one ping outstanding per connection), but a pong (answering the
// client's ping) is not queued past it: a client that pings and does not
// read gets no more answers, not a queue that grows.
func (w *socketWriter) sendControl(f []byte) {
	w.qmu.Lock()
	if w.closed || f[0]&0x0f == opPong && len(w.queue) >= int(w.max) {
		w.qmu.Unlock()
		return
	}
	if len(w.queue) == 0 {
		w.qmu.Unlock()
		w.sendFrame(f)
		return
	}
	at := 0
	if w.partial {
		at = 1
	}
	w.queue = slices.Insert(w.queue, at, f)
	w.kickLocked()
	w.qmu.Unlock()
}

// enqueueLocked queues f for the writer goroutine; false when the queue is
// full. Called with qmu held.
func (w *socketWriter) enqueueLocked(f []byte) bool {
	if len(w.queue) >= int(w.max) {
		return false
	}
	w.queue = append(w.queue, f)
	w.kickLocked()
	return true
}

// kickLocked starts the writer goroutine unless it runs or the writer is
// stopped. Called with qmu held.
func (w *socketWriter) kickLocked() {
	if w.running || w.closed {
		return
	}
	w.running = true
	w.spawn(w.drain)
}

// drain is the writer goroutine: it writes the queue until it is empty,
// then ends. A connection dropped meanwhile is closed once the batch being
// written is done: what is still queued is discarded (the client pulls on
// reconnecting) so that the close frame is not stuck behind it.
func (w *socketWriter) drain() {
	for {
		w.qmu.Lock()
		switch {
		case w.closed:
			w.running = false
			w.qmu.Unlock()
			return
		case w.dropped:
			w.qmu.Unlock()
			w.stop()
			w.ended(nil)
			return
		case len(w.queue) == 0:
			w.running = false
			w.qmu.Unlock()
			return
		}
		w.qmu.Unlock()
		if err := w.flush(); err != nil {
			w.stop()
			w.ended(err)
			return
		}
	}
}

// writeNow writes frames, waiting for the socket up to the timeout for
// each writeChunk bytes (hello and the catch-up).
func (w *socketWriter) writeNow(frames ...[]byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.writeLocked(frames)
}

// writeLocked writes frames, then clears the deadline so that later
// non-blocking writes are not refused. Called with wmu held.
//
// The deadline bounds each writeChunk bytes (a frame larger than that gets
// one deadline of its own), not the whole queue: a client that reads
// steadily but slowly is not cut for having a long queue.
func (w *socketWriter) writeLocked(frames [][]byte) error {
	var err error
	for len(frames) > 0 && err == nil {
		n, size := 0, 0
		for n < len(frames) && (n == 0 || size+len(frames[n]) <= writeChunk) {
			size += len(frames[n])
			n++
		}
		if err = w.conn.SetWriteDeadline(time.Now().Add(w.timeout)); err == nil {
			// One writev on a net.Conn; a socket taken out of Go's net
			// package gets a write(2) a frame (net.Buffers writev only
			// for net's own): this path is a slow client's backlog.
			bufs := net.Buffers(frames[:n])
			_, err = bufs.WriteTo(w.conn)
		}
		frames = frames[n:]
	}
	if derr := w.conn.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// writeChunk is how many bytes of queued frames one write deadline covers.
const writeChunk = 256 << 10

// flush writes everything queued, waiting for the socket.
func (w *socketWriter) flush() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	for {
		w.qmu.Lock()
		frames := w.queue
		w.queue, w.partial = nil, false
		w.qmu.Unlock()
		if len(frames) == 0 {
			return nil
		}
		if err := w.writeLocked(frames); err != nil {
			return err
		}
	}
}

// finishPartialLocked writes the rest of a frame begun on the wire, so that
// a control frame can follow it. Called with wmu held.
func (w *socketWriter) finishPartialLocked() error {
	w.qmu.Lock()
	if !w.partial || len(w.queue) == 0 {
		w.qmu.Unlock()
		return nil
	}
	rest := w.queue[0]
	w.queue = w.queue[1:]
	w.partial = false
	w.qmu.Unlock()
	return w.writeLocked([][]byte{rest})
}

// stop discards what is queued and ends the writer goroutine after the
// batch it is writing; later Sends are ignored. The rest of a frame begun
// on the wire is kept: the next control frame (the close) finishes it
// first. Calling it twice is safe.
func (w *socketWriter) stop() {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	if w.partial {
		w.queue = w.queue[:1]
	} else {
		w.queue = nil
	}
}

// attach makes c the writer's connection.
func (w *socketWriter) attach(c net.Conn) {
	w.conn = c
	w.direct = directWriter(c)
}

// writeControl writes one whole control frame (the close) now, after the
// rest of a frame begun on the wire, waiting for the socket up to the
// timeout. Anything else would be written in pieces between which the
// room's frames could land, so it is refused.
func (w *socketWriter) writeControl(f []byte) error {
	if !wholeControlFrame(f) {
		return errors.New("livesock: writeControl takes one whole control frame")
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if err := w.finishPartialLocked(); err != nil {
		return fmt.Errorf("finish a message before a control frame: %w", err)
	}
	return w.writeLocked([][]byte{f})
}

// wholeControlFrame reports whether p is exactly one unmasked control frame
// (close, ping or pong; RFC 6455 section 5.5).
func wholeControlFrame(p []byte) bool {
	return len(p) >= 2 &&
		p[0]&0x80 != 0 && p[0]&0x0f >= 0x8 && // FIN, control opcode
		p[1]&0x80 == 0 && int(p[1]&0x7f) <= 125 && // unmasked, short
		len(p) == 2+int(p[1]&0x7f)
}
