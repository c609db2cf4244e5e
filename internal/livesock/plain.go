package livesock

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Defaults of Options' zero fields.
const (
	defaultQueueSize    = 256
	defaultWriteTimeout = 10 * time.Second
	defaultReadLimit    = 1 << 20
)

func (o Options) withDefaults() Options {
	if o.QueueSize <= 0 {
		o.QueueSize = defaultQueueSize
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = defaultReadLimit
	}
	return o
}

// plainConn is the plain implementation: coder/websocket's Conn as it is
// meant to be used. A reader goroutine per connection sits in Read; what
// Send is given waits in a bounded queue that a writer goroutine (started
// when the queue stops being empty, ended when it is empty again) writes
// with the library's Write, one deadline per message.
type plainConn struct {
	ws   *websocket.Conn
	rc   *readConn // the socket under ws
	h    Handler
	opts Options

	mu      sync.Mutex
	queue   [][]byte
	running bool // a writer goroutine runs
	closing bool // Close was called: nothing more is queued
	code    int
	reason  string

	// wmu serialises WriteNow's and the writer goroutine's messages, and
	// guards the message WriteNow is writing in fragments.
	wmu        sync.Mutex
	frag       io.WriteCloser
	fragCancel context.CancelFunc

	stopped atomic.Bool
	ended   atomic.Bool
}

func acceptPlain(w http.ResponseWriter, r *http.Request, h Handler, opts Options) (Conn, error) {
	opts = opts.withDefaults()
	sb := &smallBuffers{ResponseWriter: w}
	ws, err := websocket.Accept(sb, r, &websocket.AcceptOptions{
		OriginPatterns: opts.OriginPatterns,
		OnPingReceived: func(context.Context, []byte) bool { return h.Control() },
		OnPongReceived: func(context.Context, []byte) {
			if h.Control() {
				h.Pong()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(opts.ReadLimit)
	return &plainConn{ws: ws, h: h, opts: opts, rc: sb.conn}, nil
}

func (c *plainConn) Send(frame []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return true
	case len(c.queue) >= c.opts.QueueSize:
		return false
	}
	c.queue = append(c.queue, frame)
	c.kickLocked()
	return true
}

// kickLocked starts the writer goroutine unless it runs. Called with mu
// held.
func (c *plainConn) kickLocked() {
	if !c.running {
		c.running = true
		go c.drain()
	}
}

// drain is the writer goroutine: it writes the queue until it is empty,
// or closes the connection once Close was called.
func (c *plainConn) drain() {
	for {
		c.mu.Lock()
		if c.closing {
			c.queue = nil
			code, reason := c.code, c.reason
			c.mu.Unlock()
			_ = c.ws.Close(websocket.StatusCode(code), reason)
			c.end()
			return
		}
		if len(c.queue) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		f := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		if err := c.write(f); err != nil {
			c.end()
			return
		}
	}
}

func (c *plainConn) WriteNow(frames ...[]byte) error {
	for _, f := range frames {
		if err := c.write(f); err != nil {
			return err
		}
	}
	return nil
}

// write writes one prepared frame through the library: a whole message
// with Write, a fragment through the message's Writer, which lives from
// the first fragment to the last.
func (c *plainConn) write(f []byte) error {
	first, final, p, err := parseFrame(f)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if first && final && c.frag == nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.WriteTimeout)
		defer cancel()
		return c.ws.Write(ctx, websocket.MessageText, p)
	}
	switch {
	case first && c.frag != nil:
		return errors.New("livesock: a message begins before the last one ended")
	case first:
		ctx, cancel := context.WithCancel(context.Background())
		w, err := c.ws.Writer(ctx, websocket.MessageText)
		if err != nil {
			cancel()
			return err
		}
		c.frag, c.fragCancel = w, cancel
	case c.frag == nil:
		return errors.New("livesock: a continuation without its first fragment")
	}
	// The message's context lives across calls; the deadline is this
	// fragment's: past it the context ends, and the library closes the
	// connection.
	t := time.AfterFunc(c.opts.WriteTimeout, c.fragCancel)
	_, err = c.frag.Write(p)
	if err == nil && final {
		err = c.frag.Close()
	}
	t.Stop()
	if err != nil || final {
		c.fragCancel()
		c.frag, c.fragCancel = nil, nil
	}
	return err
}

func (c *plainConn) Ping() {
	go func() {
		// Ping waits for the pong (Handler.Pong hears it either way): the
		// context bounds the write and that wait.
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.WriteTimeout)
		defer cancel()
		_ = c.ws.Ping(ctx)
	}()
}

func (c *plainConn) Read() { go c.readLoop() }

// readLoop is the reader goroutine.
func (c *plainConn) readLoop() {
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil || c.stopped.Load() || c.rc.ended.Load() {
			// Not handled either: a message the stream's end cut short,
			// which the library hands on as if whole (readConn).
			break
		}
		c.h.Message(data)
		if c.stopped.Load() {
			// Read no further: a frame the library refuses after the one
			// that stopped reading would otherwise race its 1002 against
			// StopReading's code (FuzzClientBytes).
			break
		}
	}
	// A close under way (Close, StopReading) ends the connection when its
	// handshake is over; ending it here would cut the close frame off.
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if !closing {
		c.end()
	}
}

func (c *plainConn) StopReading(code int, reason string) {
	c.stopped.Store(true)
	c.Close(code, reason)
}

func (c *plainConn) Close(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	c.closing, c.code, c.reason = true, code, reason
	c.queue = nil
	c.kickLocked()
}

func (c *plainConn) CloseNow() { c.end() }

// end closes the socket and tells the handler, once.
func (c *plainConn) end() {
	if !c.ended.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	c.closing = true
	c.queue = nil
	c.mu.Unlock()
	_ = c.ws.CloseNow()
	c.h.Ended()
}

// Buffers coder/websocket keeps for a connection's lifetime, in place of
// net/http's 4 KiB each (most connections are idle, and 50,000 of them
// would hold 400 MB in these alone): a payload longer than the read buffer
// is read straight into the message, and a message longer than the write
// buffer is written past it.
const (
	liveReadBuffer  = 128
	liveWriteBuffer = 128
)

// smallBuffers hands coder/websocket small buffers of its own when it
// hijacks the connection, so that net/http's (and the request) are freed
// when the handler returns; conn is the connection it handed over.
type smallBuffers struct {
	http.ResponseWriter
	conn *readConn
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (s *smallBuffers) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hijack implements http.Hijacker.
func (s *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// A client may already have sent frames after its request, which
	// net/http has read ahead: they come first.
	ahead, _ := brw.Reader.Peek(brw.Reader.Buffered())
	s.conn = &readConn{Conn: c}
	if len(ahead) > 0 {
		s.conn.ahead = bytes.Clone(ahead)
	}
	return s.conn, bufio.NewReadWriter(bufio.NewReaderSize(s.conn, liveReadBuffer), bufio.NewWriterSize(s.conn, liveWriteBuffer)), nil
}

// readConn reads what net/http had read ahead, then the socket, and
// remembers whether a read failed. coder/websocket reads the socket only
// while a message is incomplete, and hands a fragmented message (or a
// frame whose header came but no payload) that the stream's end cut off
// as if it were whole where its reader takes that io.EOF for the
// message's end: ended tells readLoop not to handle it
// (FuzzClientBytes; fastread_linux.go's cutShort for the fast engine).
type readConn struct {
	net.Conn
	ahead []byte
	ended atomic.Bool
}

func (a *readConn) Read(p []byte) (int, error) {
	if len(a.ahead) > 0 {
		n := copy(p, a.ahead)
		a.ahead = a.ahead[n:]
		return n, nil
	}
	n, err := a.Conn.Read(p)
	if err != nil {
		a.ended.Store(true)
	}
	return n, err
}
