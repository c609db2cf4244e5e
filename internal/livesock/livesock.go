// Package livesock is the live channel's socket engine: it upgrades an HTTP
// request to a WebSocket connection, sends prepared frames without
// waiting, reads the client's messages and closes with a code. The live
// handler (transport) sees only the seam (Engine, Conn, Handler); there are
// two implementations behind it (docs/architecture.md, "The socket
// engine"):
//
//   - plain: coder/websocket as it is meant to be used, its writes, and
//     one reader goroutine per connection; every platform, and TLS.
//   - fast (Linux, without TLS): no WebSocket library: its own handshake,
//     frame reader and close; frames written straight to the socket with
//     a non-blocking write(2); the socket taken out of Go's net package
//     and one epoll poller per engine, so that an idle connection holds
//     no goroutine and under 300 bytes of its own.
//
// One test suite (suite_test.go) runs against both.
package livesock

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Handler is what a connection calls back. Message, Control and Pong run on
// the goroutine reading the connection, one call at a time; Ended runs
// once, on whichever goroutine saw the connection end.
type Handler interface {
	// Message handles one whole client message.
	Message(data []byte)
	// Control is asked for each ping or pong frame the client sends (each
	// costs a message of a budget): false drops the frame, a ping is then
	// not answered.
	Control() bool
	// Pong says the client answered a ping.
	Pong()
	// Ended says the connection is over: its socket is closed and nothing
	// more will be called. It is called for every connection Accept
	// returned, whoever ended it.
	Ended()
}

// Conn is one live connection.
type Conn interface {
	// Send sends a prepared frame (TextFrame) without waiting: at once when
	// the socket takes it, else queued for a writer goroutine that waits
	// for the socket with a deadline. It reports false when QueueSize
	// frames wait already: the client is too slow, and the caller drops it.
	// Once the connection is closing it does nothing and reports true.
	Send(frame []byte) bool
	// WriteNow writes prepared frames (TextFrame, or the DataFrame
	// fragments of one message over several calls), waiting for the socket
	// up to WriteTimeout for each piece: for what goes before anything
	// Send is given (a hello, a catch-up).
	WriteNow(frames ...[]byte) error
	// Ping sends a WebSocket ping without waiting; the pong reaches
	// Handler.Pong.
	Ping()
	// Read starts reading the client's messages (Handler.Message). Call it
	// once, from the goroutine that accepted: it may read what is there
	// already before it returns.
	Read()
	// StopReading stops reading (the kernel's buffer fills and the client
	// has to wait) and closes the connection with code and reason. Called
	// from Handler's callbacks.
	StopReading(code int, reason string)
	// Close closes with code and reason without waiting: what is queued is
	// dropped (a frame begun on the wire is finished first), and the close
	// handshake runs on the connection's writer goroutine.
	Close(code int, reason string)
	// CloseNow closes the socket at once, without a close frame.
	CloseNow()
}

// Options are what Accept needs to know about the connection.
type Options struct {
	// OriginPatterns are the hosts, besides the request's own, whose pages
	// may open a connection (coder/websocket's AcceptOptions).
	OriginPatterns []string
	// ReadLimit bounds one client message; a longer one closes the
	// connection with 1009.
	ReadLimit int64
	// QueueSize is how many frames may wait for the socket (Send).
	QueueSize int
	// WriteTimeout bounds one wait for the socket.
	WriteTimeout time.Duration
}

// Kind names an implementation.
type Kind string

// The implementations: Auto is fast where it can be (Linux, a connection
// that is not TLS) and plain elsewhere.
const (
	Auto  Kind = ""
	Plain Kind = "plain"
	Fast  Kind = "fast"
)

// ErrClosed is Accept's answer once the engine is closed.
var ErrClosed = errors.New("livesock: engine closed")

// Engine accepts live connections. The server owns one; Close stops it.
type Engine struct {
	kind Kind
	log  *slog.Logger

	// fast is started on first use: a server that never upgrades a
	// connection costs no poller.
	fastOnce sync.Once
	fast     atomic.Pointer[fastEngine]

	mu     sync.Mutex
	closed bool
}

// New returns an engine of the given kind. Fast where the platform has no
// fast implementation (anything but Linux) is ErrUnsupported.
func New(kind Kind, log *slog.Logger) (*Engine, error) {
	if log == nil {
		log = slog.Default()
	}
	switch kind {
	case Auto, Plain:
	case Fast:
		if runtime.GOOS != "linux" {
			return nil, errors.ErrUnsupported
		}
	default:
		return nil, errors.New("livesock: unknown kind " + string(kind))
	}
	return &Engine{kind: kind, log: log}, nil
}

// Kind reports which implementation a plain (not TLS) connection gets.
func (e *Engine) Kind() Kind {
	if e.kind == Auto {
		if runtime.GOOS == "linux" {
			return Fast
		}
		return Plain
	}
	return e.kind
}

// Accept upgrades the request to a WebSocket connection calling h. On an
// error the request has been answered.
func (e *Engine) Accept(w http.ResponseWriter, r *http.Request, h Handler, opts Options) (Conn, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return nil, ErrClosed
	}
	if e.Kind() == Plain || (e.kind == Auto && r.TLS != nil) {
		return acceptPlain(w, r, h, opts)
	}
	e.fastOnce.Do(func() { e.fast.Store(newFastEngine(e.log)) })
	f := e.fast.Load()
	if f == nil { // closed meanwhile
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return nil, ErrClosed
	}
	return f.accept(w, r, h, opts)
}

// Close stops the engine: later Accepts are refused, the poller (if one
// was started) stops, and the connections it still holds are closed at
// once. Safe to call twice.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.fastOnce.Do(func() {}) // none is started after this
	if f := e.fast.Load(); f != nil {
		return f.close()
	}
	return nil
}

// Polled is how many connections the engine's poller holds (0 without
// one); for tests and metrics.
func (e *Engine) Polled() int {
	if f := e.fast.Load(); f != nil {
		return f.polled()
	}
	return 0
}

// TextFrame frames p as one unmasked, unfragmented text message
// (RFC 6455 section 5.2), as a server sends it: what Send takes.
func TextFrame(p []byte) []byte { return DataFrame(true, true, p) }

// DataFrame is one fragment of a text message (RFC 6455, 5.4): the
// first has the text opcode and the others the continuation one, and the
// last has FIN set; a message of one fragment is TextFrame.
func DataFrame(first, final bool, p []byte) []byte {
	var f []byte
	switch n := len(p); {
	case n <= 125:
		f = make([]byte, 2, 2+n)
		f[1] = byte(n)
	case n <= 0xffff:
		f = make([]byte, 4, 4+n)
		f[1] = 126
		binary.BigEndian.PutUint16(f[2:], uint16(n))
	default:
		f = make([]byte, 10, 10+n)
		f[1] = 127
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	if first {
		f[0] = 0x1 // opcode text; continuation is 0x0
	}
	if final {
		f[0] |= 0x80 // FIN
	}
	return append(f, p...)
}

// parseFrame splits a frame made by DataFrame into what it says: whether
// it begins a message, whether it ends one, and its payload.
func parseFrame(f []byte) (first, final bool, payload []byte, err error) {
	if len(f) < 2 || f[1]&0x80 != 0 || f[0]&0x70 != 0 {
		return false, false, nil, errors.New("livesock: not a server data frame")
	}
	op := f[0] & 0x0f
	if op != 0x1 && op != 0x0 {
		return false, false, nil, errors.New("livesock: not a server data frame")
	}
	hdr, n := 2, uint64(f[1]&0x7f)
	switch n {
	case 126:
		if len(f) < 4 {
			return false, false, nil, errors.New("livesock: frame cut short")
		}
		hdr, n = 4, uint64(binary.BigEndian.Uint16(f[2:]))
	case 127:
		if len(f) < 10 {
			return false, false, nil, errors.New("livesock: frame cut short")
		}
		hdr, n = 10, binary.BigEndian.Uint64(f[2:])
	}
	if uint64(len(f)-hdr) != n {
		return false, false, nil, errors.New("livesock: frame length does not match")
	}
	return op == 0x1, f[0]&0x80 != 0, f[hdr:], nil
}
