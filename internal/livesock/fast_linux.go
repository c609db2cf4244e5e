package livesock

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// fastEngine is the fast implementation's shared part: the poller (nil
// where epoll cannot be had; its connections then keep a reader goroutine
// each, as plain ones do).
type fastEngine struct {
	p *poller
}

func newFastEngine(log *slog.Logger) *fastEngine {
	p, err := newPoller(log.With(slog.String("component", "livesock poller")))
	if err != nil {
		log.Warn("live: no epoll; one reader goroutine per connection", slog.Any("err", err))
	}
	return &fastEngine{p: p}
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

// fastConn is the fast implementation of Conn. coder/websocket does the
// handshake, the reads, answers the client's pings and does the close; the
// frames the server sends go through socketWriter, straight to the socket
// when it has room; its reads go through filterConn, which takes the
// client's pongs out, so that the poller can tell when the library's Read
// will return without waiting (docs/architecture.md, "No goroutine per
// idle connection").
type fastConn struct {
	// out is first and held by value: Send (the fan-out, once per
	// subscriber) then touches one object's cache lines, not two.
	out    socketWriter
	h      Handler
	ws     *websocket.Conn
	rd     *filterConn
	poller *poller // nil: a reader goroutine instead
	// pollToken is the connection's token in the poller.
	pollToken uint64

	// The close code and reason, set once (Close, StopReading).
	cmu    sync.Mutex
	code   int
	reason string
	coded  bool

	ended atomic.Bool
}

func (f *fastEngine) accept(w http.ResponseWriter, r *http.Request, h Handler, opts Options) (Conn, error) {
	opts = opts.withDefaults()
	c := &fastConn{h: h}
	c.out.init(opts.QueueSize, opts.WriteTimeout, c.writerEnded)
	c.rd = &filterConn{f: pongFilter{pong: h.Pong, control: h.Control}}
	ws, err := websocket.Accept(&hijackGuard{ResponseWriter: w, w: &c.out, rd: c.rd}, r, &websocket.AcceptOptions{
		OriginPatterns: opts.OriginPatterns,
		// The filter takes the client's pongs out; one that reaches the
		// library anyway says the same.
		OnPongReceived: func(context.Context, []byte) { h.Pong() },
	})
	if err != nil {
		// Accept has answered the request.
		c.out.stop()
		return nil, err
	}
	c.ws = ws
	ws.SetReadLimit(opts.ReadLimit)
	// The poller entry is made before the caller can start the writer
	// (Send, Ping, Close), which may end the connection from then on.
	if f.p != nil && c.rd.raw != nil && !f.p.isClosed() {
		c.poller = f.p
		f.p.register(c)
	}
	return c, nil
}

func (c *fastConn) Send(frame []byte) bool { return c.out.sendFrame(frame) }

func (c *fastConn) WriteNow(frames ...[]byte) error { return c.out.writeNow(frames...) }

// Ping never waits: written at once when the socket has room, else ahead of
// the frames waiting, as the library's own control frames are.
func (c *fastConn) Ping() { c.out.sendControl([]byte(pingFrame)) }

// Read: with a poller, the connection keeps no goroutine while it is idle;
// the poller starts one when the client sends something. Without one (or
// over TLS) the connection keeps a reader goroutine.
func (c *fastConn) Read() {
	if c.poller != nil {
		c.readBurst() // what came with the upgrade, then the socket is armed
		return
	}
	go c.serve()
}

// readBurst runs when the connection's socket has something to read (the
// poller's event, or right after opening): it reads what is there without
// waiting, hands each whole message to the library's Read and handles it,
// and arms the socket again once nothing whole is left. The client's pongs
// never reach the library (filterConn), so an answered ping costs no
// goroutine beyond this burst.
func (c *fastConn) readBurst() {
	for {
		read, ok := c.rd.pollRead(c.readNB)
		if !ok {
			// The library is reading: that is its close handshake, and
			// whoever closes ends the connection.
			return
		}
		if !read {
			if !c.poller.arm(c) {
				c.end() // the socket is closed already
			}
			return
		}
		_, data, err := c.ws.Read(context.Background())
		if err != nil || c.rd.stopped.Load() || c.rd.cutShort() {
			c.closeReading()
			c.end()
			return
		}
		c.rd.messageRead()
		c.h.Message(data)
	}
}

// serve is the reader goroutine of a connection without a poller.
func (c *fastConn) serve() {
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil || c.rd.stopped.Load() || c.rd.cutShort() {
			// A message the library had buffered before reading stopped
			// is not handled, nor one the stream's end cut short.
			c.closeReading()
			c.end()
			return
		}
		c.h.Message(data)
	}
}

// closeReading closes the socket when its reader found it ended: with
// StopReading's code when reading was stopped (the close frame is written;
// the handshake reads nothing more).
func (c *fastConn) closeReading() {
	if c.rd.stopped.Load() {
		code, reason := c.closeCode()
		_ = c.ws.Close(websocket.StatusCode(code), reason)
	}
}

func (c *fastConn) setCode(code int, reason string) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if !c.coded {
		c.code, c.reason, c.coded = code, reason, true
	}
}

func (c *fastConn) closeCode() (int, string) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	return c.code, c.reason
}

// StopReading: the reading goroutine's next Read fails (filterConn answers
// errStopped), and it closes the connection with code.
func (c *fastConn) StopReading(code int, reason string) {
	c.setCode(code, reason)
	c.rd.stopped.Store(true)
}

func (c *fastConn) Close(code int, reason string) {
	c.setCode(code, reason)
	c.out.drop()
}

func (c *fastConn) CloseNow() { c.end() }

// writerEnded is the socket writer's end: a failed write ends the
// connection at once; a close (Close) is done with its code. Called on the
// writer goroutine, which may wait for the close handshake.
func (c *fastConn) writerEnded(err error) {
	if err != nil {
		_ = c.ws.CloseNow()
	} else {
		code, reason := c.closeCode()
		_ = c.ws.Close(websocket.StatusCode(code), reason)
	}
	// Without a reader goroutine nobody else would see the socket closed.
	c.end()
}

// end lets go of the connection, once: the poller's entry, the writer
// (later frames are ignored), the socket; then the handler hears of it.
// Whoever saw the connection end calls it (the burst whose Read failed,
// the writer, CloseNow).
func (c *fastConn) end() {
	if !c.ended.CompareAndSwap(false, true) {
		return
	}
	if c.poller != nil {
		c.poller.forget(c)
	}
	c.out.stop()
	_ = c.ws.CloseNow()
	c.h.Ended()
}
