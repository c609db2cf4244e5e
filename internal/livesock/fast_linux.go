package livesock

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// fastEngine is the fast implementation's shared part: the poller (nil
// where epoll cannot be had; its connections then keep a reader goroutine
// each, as plain ones do).
type fastEngine struct {
	p   *poller
	log *slog.Logger
}

func newFastEngine(log *slog.Logger) *fastEngine {
	p, err := newPoller(log.With(slog.String("component", "livesock poller")))
	if err != nil {
		log.Warn("live: no epoll; one reader goroutine per connection", slog.Any("err", err))
	}
	return &fastEngine{p: p, log: log}
}

func (f *fastEngine) close() error {
	if f.p != nil {
		f.p.close()
	}
	return nil
}

func (f *fastEngine) polled() int {
	if f.p == nil {
		return 0
	}
	return f.p.len()
}

// pingFrame is an empty ping (RFC 6455 section 5.5.2), as a server sends it;
// a constant, so that no connection can change what the others send.
const pingFrame = "\x89\x00"

// closeWait bounds the close handshake: how long a connection that sent
// its close frame waits for the client's before it closes the socket (as
// coder/websocket's Close waits).
const closeWait = 5 * time.Second

// fastConn is the fast implementation of Conn, with no WebSocket library
// underneath: upgrade answers the handshake, socketWriter sends the
// server's frames (straight to the socket when it has room), frameReader
// reads the client's, and the connection answers pings and does the close
// handshake itself. With a poller its socket is read only when it has
// something, so an idle connection holds no goroutine and, besides the
// socket, only this object (docs/architecture.md, "The socket engine").
type fastConn struct {
	// out is first and held by value: Send (the fan-out, once per
	// subscriber) then touches one object's cache lines, not two.
	out socketWriter
	h   Handler
	// With a poller the connection's socket is sock, taken out of Go's
	// net package (sock_linux.go), and sock.poller is set; without one it
	// stays the net.Conn the writer holds (out.conn), read by a goroutine
	// of its own.
	sock sock
	// rd is the client's frames; only the goroutine reading (Read's, then
	// one burst at a time, or serve) touches it.
	rd frameReader
	// ahead is what net/http had read past the request, read first (nil
	// when nothing was).
	ahead *[]byte
	// closing is the close code and reason, set once (Close,
	// StopReading), and the close handshake's timer.
	closing atomic.Pointer[closeState]

	// bursts counts the arms: the store before each arm and the poller's
	// load after the event order one burst's reads of rd before the
	// next's for the race detector (epoll orders them, but it cannot see
	// that).
	bursts atomic.Uint32
	// flags are flagStopped, flagCloseSent and flagEnded: one word, as an
	// idle connection is kept small.
	flags atomic.Uint32
}

const (
	flagStopped   = 1 << iota // StopReading was called
	flagCloseSent             // the close frame is written (or being written)
	flagEnded                 // end ran
)

// has reports whether flag is set.
func (c *fastConn) has(flag uint32) bool { return c.flags.Load()&flag != 0 }

// set sets flag and reports whether it was set already.
func (c *fastConn) set(flag uint32) (was bool) { return c.flags.Or(flag)&flag != 0 }

// closeState is how a connection is to be closed.
type closeState struct {
	code   int
	reason string
	// timer ends a connection whose client does not answer its close
	// frame (nil until the frame is sent).
	timer atomic.Pointer[time.Timer]
}

func (f *fastEngine) accept(w http.ResponseWriter, r *http.Request, h Handler, opts Options) (Conn, error) {
	opts = opts.withDefaults()
	conn, ahead, err := upgrade(w, r, opts.OriginPatterns, f.log)
	if err != nil {
		return nil, err
	}
	c := &fastConn{h: h}
	if len(ahead) > 0 {
		c.ahead = &ahead
	}
	c.rd.limit = opts.ReadLimit
	c.out.init(opts.QueueSize, opts.WriteTimeout, c.writerEnded)
	c.sock.fd = -1
	if f.p != nil && !f.p.isClosed() {
		fd, err := takeSocket(conn)
		if err != nil {
			// Out of descriptors for the dup, most likely: the connection
			// works, with a reader goroutine of its own.
			f.log.Warn("live: the socket stays in Go's net package", slog.Any("err", err))
		} else {
			c.sock.fd = fd
			c.out.conn, c.out.direct = &c.sock, c.sock.writeNB
			// The poller entry is made before the caller can start the
			// writer (Send, Ping, Close), which may end the connection
			// from then on.
			c.sock.poller = f.p
			f.p.register(c)
			return c, nil
		}
	}
	c.out.attach(conn)
	return c, nil
}

func (c *fastConn) Send(frame []byte) bool { return c.out.sendFrame(frame) }

func (c *fastConn) WriteNow(frames ...[]byte) error { return c.out.writeNow(frames...) }

// Ping never waits: written at once when the socket has room, else ahead of
// the frames waiting.
func (c *fastConn) Ping() { c.out.sendControl([]byte(pingFrame)) }

// Read: with a poller, the connection keeps no goroutine while it is idle;
// the poller starts one when the client sends something. Without one the
// connection keeps a reader goroutine.
func (c *fastConn) Read() {
	if ahead := c.ahead; ahead != nil {
		c.ahead = nil
		if !c.consume(*ahead) {
			return
		}
	}
	if c.sock.poller != nil {
		c.readBurst() // what came with the upgrade, then the socket is armed
		return
	}
	go c.serve()
}

// readBufs are the reads' buffers, shared: an idle connection holds none.
var readBufs = sync.Pool{New: func() any { return new([4096]byte) }}

// readBurst runs when the connection's socket has something to read (the
// poller's event, or right after opening): it reads what is there without
// waiting, handles each whole message and control frame, and arms the
// socket again once the socket holds nothing more.
func (c *fastConn) readBurst() {
	buf := readBufs.Get().(*[4096]byte)
	defer readBufs.Put(buf)
	for {
		n, err := c.sock.readNB(buf[:])
		if n > 0 && !c.consume(buf[:n]) {
			return
		}
		switch {
		case errors.Is(err, errWouldBlock):
			c.bursts.Add(1)
			if !c.sock.poller.arm(c) {
				c.end() // the socket is closed already
			}
			return
		case err != nil || n == 0: // n == 0: the client's end
			c.end()
			return
		}
	}
}

// serve is the reader goroutine of a connection without a poller.
func (c *fastConn) serve() {
	buf := make([]byte, 4096)
	for {
		n, err := c.out.conn.(net.Conn).Read(buf)
		if n > 0 && !c.consume(buf[:n]) {
			return
		}
		if err != nil {
			c.end()
			return
		}
	}
}

// consume handles what the socket gave: each whole message goes to the
// handler, pings are answered, pongs reported, a close frame answered. It
// reports false when the connection is over, or reading stopped.
func (c *fastConn) consume(p []byte) bool {
	for len(p) > 0 {
		if c.has(flagEnded) {
			return false
		}
		n, kind, payload, rerr := c.rd.next(p)
		p = p[n:]
		if rerr != nil {
			c.closeWith(rerr.code, rerr.reason)
			return false
		}
		if !c.handle(kind, payload) {
			return false
		}
		if c.has(flagStopped) {
			code, reason := c.closeCode()
			c.closeWith(code, reason)
			return false
		}
	}
	return true
}

// handle acts on one thing the reader found; false when the connection is
// over.
func (c *fastConn) handle(kind frameKind, payload []byte) bool {
	switch kind {
	case gotMessage:
		// Once the close frame is sent, the client's messages are read
		// only to reach its close frame.
		if !c.has(flagCloseSent) {
			c.h.Message(payload)
		}
	case gotPing:
		if !c.has(flagCloseSent) && c.h.Control() {
			c.out.sendControl(controlFrame(opPong, payload))
		}
	case gotPong:
		if c.h.Control() {
			c.h.Pong()
		}
	case gotClose:
		// The client's close: answered with its own code and reason
		// (none when it gave none), unless ours went first; then the
		// handshake is over.
		code, reason := closeNoStatus, ""
		if len(payload) >= 2 {
			code, reason = int(payload[0])<<8|int(payload[1]), string(payload[2:])
		}
		c.closeWith(code, reason)
		c.end()
		return false
	case gotRefused:
		c.end()
		return false
	}
	return true
}

// closeWith sends a close frame with code and reason, unless one was sent,
// and ends the connection (at once after a protocol error or a stop, when
// nothing more is read). What is queued is dropped; a frame begun on the
// wire is finished first.
func (c *fastConn) closeWith(code int, reason string) {
	if !c.set(flagCloseSent) {
		c.out.stop()
		_ = c.out.writeControl(controlFrame(opClose, closePayload(code, reason)))
	}
	c.end()
}

func (c *fastConn) setCode(code int, reason string) {
	c.closing.CompareAndSwap(nil, &closeState{code: code, reason: reason})
}

// closeCode is the code and reason set first (none: 1005, no code).
func (c *fastConn) closeCode() (int, string) {
	if s := c.closing.Load(); s != nil {
		return s.code, s.reason
	}
	return closeNoStatus, ""
}

// StopReading: nothing more is read after the call that made it (it is
// made from the handler's callbacks, on the reading goroutine), and the
// connection is closed with code.
func (c *fastConn) StopReading(code int, reason string) {
	c.setCode(code, reason)
	c.set(flagStopped)
}

func (c *fastConn) Close(code int, reason string) {
	c.setCode(code, reason)
	c.out.drop()
}

func (c *fastConn) CloseNow() { c.end() }

// writerEnded is the socket writer's end: a failed write ends the
// connection at once; a close (Close) sends the close frame with its code
// and waits for the client's (the reader ends the connection when it
// comes, or closeWait does).
func (c *fastConn) writerEnded(err error) {
	if err != nil || c.set(flagCloseSent) {
		c.end()
		return
	}
	code, reason := c.closeCode()
	if c.out.writeControl(controlFrame(opClose, closePayload(code, reason))) != nil {
		c.end()
		return
	}
	// The handshake's bound; end stops it, and if end ran already the
	// timer's end does nothing.
	if s := c.closing.Load(); s != nil {
		s.timer.Store(time.AfterFunc(closeWait, c.end))
		if c.has(flagEnded) {
			s.timer.Load().Stop()
		}
	}
}

// end lets go of the connection, once: the poller's entry, the writer
// (later frames are ignored), the socket; then the handler hears of it.
// Whoever saw the connection end calls it (the reader, the writer,
// CloseNow, the close handshake's timer).
func (c *fastConn) end() {
	if c.set(flagEnded) {
		return
	}
	if c.sock.poller != nil {
		c.sock.poller.forget(c)
	}
	c.out.stop()
	if s := c.closing.Load(); s != nil {
		if t := s.timer.Load(); t != nil {
			t.Stop()
		}
	}
	if conn, ok := c.out.conn.(net.Conn); ok {
		_ = conn.Close()
	} else {
		c.sock.close()
	}
	c.h.Ended()
}
