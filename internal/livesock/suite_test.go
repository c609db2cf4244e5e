package livesock_test

// The socket engine's suite: every test runs against each implementation
// (plain everywhere, fast on Linux), the way persist/storetest runs against
// both stores. The server side is an echo handler on the seam; the client
// is RFC 6455 written by hand over a plain TCP connection, so that each
// test decides exactly how the client's frames fall into TCP writes: one
// byte at a time, at random sizes, many messages in one write, split at
// every byte boundary, with pings and pongs in between, or cut off by a
// close or a reset.

import (
	"bytes"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/internal/livesock"
)

// engines are the implementations the suite runs against.
func engines() []livesock.Kind {
	if runtime.GOOS == "linux" {
		return []livesock.Kind{livesock.Plain, livesock.Fast}
	}
	return []livesock.Kind{livesock.Plain}
}

// forEachEngine runs test as a subtest per implementation.
func forEachEngine(t *testing.T, test func(t *testing.T, e *echoServer)) {
	for _, kind := range engines() {
		t.Run(string(kind), func(t *testing.T) { test(t, newEchoServer(t, kind, 0)) })
	}
}

// echoServer accepts connections on an engine and sends every message back
// (Send); the message "stop" makes it stop reading (StopReading, 4029).
type echoServer struct {
	kind   livesock.Kind
	engine *livesock.Engine
	srv    *httptest.Server
	queue  int

	mu    sync.Mutex
	conns []*echoConn

	accepted atomic.Int64
	ended    atomic.Int64
	received atomic.Int64 // messages handled, all connections
}

// echoConn is one connection's handler.
type echoConn struct {
	s        *echoServer
	conn     livesock.Conn
	ready    chan struct{} // conn is set
	mu       sync.Mutex
	got      []string
	controls atomic.Int64
	pongs    atomic.Int64
	ended    chan struct{}
	endOnce  sync.Once
	// refuse makes Control answer false.
	refuse atomic.Bool
}

func (c *echoConn) Message(data []byte) {
	<-c.ready
	c.s.received.Add(1)
	c.mu.Lock()
	c.got = append(c.got, string(data))
	c.mu.Unlock()
	if string(data) == "stop" {
		c.conn.StopReading(4029, "too many messages")
		return
	}
	c.conn.Send(livesock.TextFrame(data))
}

func (c *echoConn) Control() bool {
	c.controls.Add(1)
	return !c.refuse.Load()
}

func (c *echoConn) Pong() { c.pongs.Add(1) }

func (c *echoConn) Ended() {
	c.endOnce.Do(func() {
		c.s.ended.Add(1)
		close(c.ended)
	})
}

// newEchoServer starts an engine of kind behind an HTTP server; queue is
// the connections' QueueSize (0: the default). Both close when the test
// ends.
func newEchoServer(t testing.TB, kind livesock.Kind, queue int) *echoServer {
	t.Helper()
	e, err := livesock.New(kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{kind: kind, engine: e, queue: queue}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.srv.Close()
		if err := e.Close(); err != nil {
			t.Errorf("engine Close: %v", err)
		}
		// The clients are closed first (their cleanups ran before).
		deadline := time.Now().Add(suiteWait)
		for s.ended.Load() != s.accepted.Load() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if a, n := s.accepted.Load(), s.ended.Load(); a != n {
			t.Errorf("%d connections accepted, %d ended after Close", a, n)
		}
	})
	return s
}

func (s *echoServer) serve(w http.ResponseWriter, r *http.Request) {
	c := &echoConn{s: s, ready: make(chan struct{}), ended: make(chan struct{})}
	conn, err := s.engine.Accept(w, r, c, livesock.Options{QueueSize: s.queue, WriteTimeout: suiteWait})
	if err != nil {
		return
	}
	s.accepted.Add(1)
	c.conn = conn
	close(c.ready)
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	// A hello, as the live handler writes before anything else.
	if err := conn.WriteNow(livesock.TextFrame([]byte("hello"))); err != nil {
		conn.CloseNow()
		return
	}
	conn.Read()
}

// last is the connection accepted last.
func (s *echoServer) last(tb testing.TB) *echoConn {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		tb.Fatal("no connection accepted")
	}
	return s.conns[len(s.conns)-1]
}

// dial connects a raw client; it is closed when the test ends.
func (s *echoServer) dial(tb testing.TB) *rawClient {
	tb.Helper()
	c, err := rawDial(s.srv.Listener.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.conn.Close() })
	return c
}

// suiteWait bounds a failing test's waits.
const suiteWait = 10 * time.Second

// script is what a client sends: its bytes, and the echoes (in order) and
// WebSocket pongs it must be answered.
type script struct {
	stream  []byte
	echoes  []string
	wsPings []string
}

// newScript is messages whose frames have every length encoding and
// straddle the fast path's read-ahead bound (4 KiB), fragmented into one
// to four frames. big adds a message of about 90 KB (a 64-bit frame
// length); pongs puts unsolicited client pongs before the first message,
// between messages and between the fragments of a message (RFC 6455
// section 5.5.3 allows them anywhere a control frame may be); wsPings puts
// WebSocket pings (which the library answers) between messages, between
// fragments and after the last message.
func newScript(prefix string, big, pongs, wsPings bool) script {
	var s script
	wsPing := func() {
		if wsPings {
			p := fmt.Sprintf("wp%d", len(s.wsPings))
			s.stream = append(s.stream, clientFrame(true, opPing, []byte(p))...)
			s.wsPings = append(s.wsPings, p)
		}
	}
	pongN := 0
	pong := func() {
		if pongs {
			// Empty, short and the longest a control frame may be.
			s.stream = append(s.stream, clientFrame(true, opPong, bytes.Repeat([]byte{'p'}, []int{0, 7, 125}[pongN%3]))...)
			pongN++
		}
	}
	message := func(payload string, parts int) {
		for i, f := range textFrames([]byte(payload), parts) {
			if i > 0 {
				pong()
				if i == 2 {
					wsPing()
				}
			}
			s.stream = append(s.stream, f...)
		}
		s.echoes = append(s.echoes, payload)
	}
	pong()
	lengths := []int{0, 3, 60, 110, 150, 300, 700, 1500, 2600, 4200, 5000, 9000, 4500}
	for i, n := range lengths {
		id := fmt.Sprintf("%s-%d:", prefix, i)
		message(id+strings.Repeat(string(rune('a'+i%26)), n), 1+i%4)
		if i%2 == 1 {
			pong()
		}
		if i%4 == 0 {
			wsPing()
		}
	}
	if big {
		message(prefix+"-big:"+strings.Repeat("B", 90_000), 3)
	}
	pong()
	message(prefix+"-last", 1)
	wsPing()
	return s
}

// streamWrites are the ways a test cuts a client's stream into writes.
func streamWrites(rng *mrand.Rand) []struct {
	name  string
	big   bool
	sizes func(n int) []int
} {
	return []struct {
		name  string
		big   bool
		sizes func(n int) []int
	}{
		{"OneByte", false, func(n int) []int {
			s := make([]int, n)
			for i := range s {
				s[i] = 1
			}
			return s
		}},
		{"Random", true, func(n int) []int {
			var s []int
			for n > 0 {
				k := min(n, 1+rng.IntN(1500))
				s = append(s, k)
				n -= k
			}
			return s
		}},
		{"Coalesced", true, func(n int) []int { return []int{n} }},
	}
}

func newRand(t *testing.T) *mrand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("random write sizes: seed %d", seed)
	return mrand.New(mrand.NewPCG(seed, 0))
}

// TestSplitAndCoalesced: however the client's frames fall into TCP writes
// (a byte at a time, at random sizes, all in one write), fragmented or
// not, with WebSocket pings between and after messages and between
// fragments, every message is handled once and in order, and every ping
// answered.
func TestSplitAndCoalesced(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		for _, w := range streamWrites(newRand(t)) {
			t.Run(w.name, func(t *testing.T) {
				c := e.dial(t)
				s := newScript(w.name, w.big, false, true)
				if err := c.writeSizes(s.stream, w.sizes(len(s.stream))); err != nil {
					t.Fatal(err)
				}
				if err := c.wantEchoes(s.echoes); err != nil {
					t.Fatal(err)
				}
				// The last ping came after the last message: answered by
				// the time the echo of a message sent after it comes.
				if err := c.wantEchoes([]string{"after"}, clientFrame(true, opText, []byte("after"))); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(c.pongs, s.wsPings) {
					t.Fatalf("WebSocket pongs %q, want %q", c.pongs, s.wsPings)
				}
			})
		}
	})
}

// TestEveryBoundary: for every byte boundary of a stream of two messages
// (the first in two fragments, with a client pong and a ping between
// them), the bytes before it go in one write and the rest in another, and
// both messages are echoed each time.
func TestEveryBoundary(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		c := e.dial(t)
		for k := 1; ; k++ {
			a, b := fmt.Sprintf("a%d", k), fmt.Sprintf("b%d", k)
			fs := textFrames([]byte(a), 2)
			var stream []byte
			stream = append(stream, fs[0]...)
			stream = append(stream, clientFrame(true, opPong, []byte("between"))...)
			stream = append(stream, clientFrame(true, opPing, []byte("p"))...)
			stream = append(stream, fs[1]...)
			stream = append(stream, clientFrame(true, opPong, nil)...)
			stream = append(stream, clientFrame(true, opText, []byte(b))...)
			if k >= len(stream) {
				break
			}
			if err := c.writeSizes(stream, []int{k}); err != nil {
				t.Fatal(err)
			}
			if err := c.wantEchoes([]string{a, b}); err != nil {
				t.Fatalf("split at %d of %d: %v", k, len(stream), err)
			}
		}
		if got := e.last(t).pongs.Load(); got == 0 {
			t.Fatal("the handler heard of no pong")
		}
	})
}

// TestPongsAnywhere: unsolicited client pongs before, between and in the
// same writes as data frames, and between the fragments of a message,
// take nothing away: every message is echoed, each pong reaches the
// handler (and costs a control frame of its budget), the connection stays
// open, and once answered it holds what its implementation promises: no
// goroutine (fast), its reader only (plain).
func TestPongsAnywhere(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		for _, w := range streamWrites(newRand(t)) {
			t.Run(w.name, func(t *testing.T) {
				c := e.dial(t)
				s := newScript(w.name, w.big, true, false)
				if err := c.writeSizes(s.stream, w.sizes(len(s.stream))); err != nil {
					t.Fatal(err)
				}
				if err := c.wantEchoes(s.echoes); err != nil {
					t.Fatal(err)
				}
				ec := e.last(t)
				if n := bytes.Count(s.stream, []byte{0x80 | opPong}); ec.pongs.Load() == 0 || ec.controls.Load() < ec.pongs.Load() || n == 0 {
					t.Fatalf("%d pongs heard, %d control frames counted", ec.pongs.Load(), ec.controls.Load())
				}
				waitIdle(t, e)
				if err := c.wantEchoes([]string{"still open"}, clientFrame(true, opText, []byte("still open"))); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// TestServerPing: a ping the server sends is answered by the client, and
// the pong reaches the handler; a ping sent while a message waits in the
// queue does not cut it.
func TestServerPing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		c := e.dial(t)
		if err := c.wantEchoes([]string{"x"}, clientFrame(true, opText, []byte("x"))); err != nil {
			t.Fatal(err)
		}
		ec := e.last(t)
		for i := range 3 {
			ec.conn.Ping()
			ec.conn.Send(livesock.TextFrame(bytes.Repeat([]byte{'m'}, 100_000)))
			// next answers the ping as it reads.
			m, err := c.next()
			if err != nil || len(m) != 100_000 {
				t.Fatalf("ping %d: message of %d bytes, %v", i, len(m), err)
			}
			// The ping may come after the message (plain writes it from a
			// goroutine of its own): the client reads on until it is heard.
			eventually(t, func() string { return fmt.Sprintf("%d pongs heard", ec.pongs.Load()) }, func() bool {
				if err := c.wantEchoes([]string{"y"}, clientFrame(true, opText, []byte("y"))); err != nil {
					t.Fatal(err)
				}
				return ec.pongs.Load() > int64(i)
			})
		}
	})
}

// TestWriteNowFragments: a message written with WriteNow in fragments (a
// large catch-up) reaches the client as one message, before what Send is
// given afterwards.
func TestWriteNowFragments(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		c := e.dial(t)
		if err := c.wantEchoes([]string{"x"}, clientFrame(true, opText, []byte("x"))); err != nil {
			t.Fatal(err)
		}
		ec := e.last(t)
		parts := []string{strings.Repeat("a", 70_000), "b", "", strings.Repeat("c", 300)}
		for i, p := range parts {
			if err := ec.conn.WriteNow(livesock.DataFrame(i == 0, i == len(parts)-1, []byte(p))); err != nil {
				t.Fatal(err)
			}
		}
		ec.conn.Send(livesock.TextFrame([]byte("after")))
		for _, want := range []string{strings.Join(parts, ""), "after"} {
			m, err := c.next()
			if err != nil || string(m) != want {
				t.Fatalf("message of %d bytes (%v), want %d bytes", len(m), err, len(want))
			}
		}
	})
}

// TestSlowConsumer: a client that reads nothing gets its socket and then
// the queue filled; Send then reports false, never waiting, and a Close
// with 4008 reaches the client after the frame it had begun, whatever the
// queue held.
func TestSlowConsumer(t *testing.T) {
	for _, kind := range engines() {
		t.Run(string(kind), func(t *testing.T) {
			const queue = 4
			e := newEchoServer(t, kind, queue)
			c := e.dial(t)
			if err := c.wantEchoes([]string{"x"}, clientFrame(true, opText, []byte("x"))); err != nil {
				t.Fatal(err)
			}
			ec := e.last(t)
			frame := livesock.TextFrame(bytes.Repeat([]byte{'s'}, 64<<10))
			refused := -1
			for i := range 10_000 {
				start := time.Now()
				ok := ec.conn.Send(frame)
				if d := time.Since(start); d > time.Second {
					t.Fatalf("Send %d waited %v", i, d)
				}
				if !ok {
					refused = i
					break
				}
			}
			if refused < queue {
				t.Fatalf("Send refused message %d, want at least the queue of %d first", refused, queue)
			}
			ec.conn.Close(4008, "resync: pull and reconnect")
			// The client reads now: whole messages, then the close.
			for n := 0; ; n++ {
				m, err := c.next()
				var sc *serverClosed
				if errors.As(err, &sc) {
					if sc.code != 4008 {
						t.Fatalf("closed with %d, want 4008", sc.code)
					}
					break
				}
				if err != nil {
					t.Fatalf("after %d messages: %v", n, err)
				}
				if len(m) != 64<<10 {
					t.Fatalf("message %d of %d bytes, want %d", n, len(m), 64<<10)
				}
			}
			waitEnded(t, ec)
		})
	}
}

// TestStopReading: once the handler stops reading, later messages are not
// handled, and the client gets close 4029.
func TestStopReading(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		c := e.dial(t)
		var stream []byte
		stream = append(stream, clientFrame(true, opText, []byte("one"))...)
		stream = append(stream, clientFrame(true, opText, []byte("stop"))...)
		for range 100 {
			stream = append(stream, clientFrame(true, opText, []byte("flood"))...)
		}
		if err := c.write(stream); err != nil {
			t.Fatal(err)
		}
		if err := c.wantClose(4029, "one"); err != nil {
			t.Fatal(err)
		}
		ec := e.last(t)
		waitEnded(t, ec)
		ec.mu.Lock()
		got := ec.got
		ec.mu.Unlock()
		if !slices.Equal(got, []string{"one", "stop"}) {
			t.Fatalf("handled %q, want one and stop", got)
		}
	})
}

// TestRefusedControl: a ping the handler's budget refuses is not answered.
func TestRefusedControl(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		c := e.dial(t)
		if err := c.wantEchoes([]string{"x"}, clientFrame(true, opText, []byte("x"))); err != nil {
			t.Fatal(err)
		}
		e.last(t).refuse.Store(true)
		msg := clientFrame(true, opText, []byte("y"))
		if err := c.wantEchoes([]string{"y"}, append(clientFrame(true, opPing, []byte("refused")), msg...)); err != nil {
			t.Fatal(err)
		}
		if len(c.pongs) != 0 {
			t.Fatalf("pongs %q to a refused ping", c.pongs)
		}
	})
}

// TestCloseRace: 100 connections send a message and end at the same
// moment, in every way a client ends (a close frame then waiting for the
// server's, a close frame then gone, a reset right after the message or
// in the middle of it, a close frame split across writes after a pong).
// Then every connection has ended, the poller holds none, no goroutine is
// left over, a message that came before a close handshake was handled,
// and the engine serves a new connection.
func TestCloseRace(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		clients := make([]*rawClient, 100)
		for i := range clients {
			clients[i] = e.dial(t)
		}
		errs := make([]error, len(clients))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, c := range clients {
			wg.Go(func() {
				<-start
				errs[i] = closeRacer(c, i)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("client %d (kind %d): %v", i, i%5, err)
			}
		}
		eventually(t, func() string { return fmt.Sprintf("%d of %d ended", e.ended.Load(), e.accepted.Load()) },
			func() bool { return e.ended.Load() == e.accepted.Load() })
		eventually(t, func() string { return fmt.Sprintf("the poller holds %d", e.engine.Polled()) },
			func() bool { return e.engine.Polled() == 0 })
		waitIdle(t, e)
		// Messages followed by a close handshake the client waited for
		// were read before the close.
		e.mu.Lock()
		for i, ec := range e.conns {
			ec.mu.Lock()
			if i%5 == 0 && !slices.Contains(ec.got, fmt.Sprintf("c%d", i)) {
				t.Errorf("client %d: handled %q, want its message", i, ec.got)
			}
			ec.mu.Unlock()
		}
		e.mu.Unlock()
		c := e.dial(t)
		if err := c.wantEchoes([]string{"after"}, clientFrame(true, opText, []byte("after"))); err != nil {
			t.Fatalf("a new connection after the race: %v", err)
		}
	})
}

// closeRacer is client i of TestCloseRace: it sends c<i> and ends its
// connection in one of five ways.
func closeRacer(c *rawClient, i int) error {
	msg := []byte(fmt.Sprintf("c%d", i))
	one := clientFrame(true, opText, msg)
	switch i % 5 {
	case 0: // message and close frame in one write, then the server's close
		if err := c.write(append(one, closeFrame()...)); err != nil {
			return err
		}
		return c.wantClose(1000, string(msg))
	case 1: // message and close frame, then gone without waiting
		if err := c.write(append(one, closeFrame()...)); err != nil {
			return err
		}
		return c.conn.Close()
	case 2: // message, then a reset
		if err := c.write(one); err != nil {
			return err
		}
		_ = c.conn.SetLinger(0)
		return c.conn.Close()
	case 3: // half a message, then a reset
		if err := c.write(one[:len(one)/2]); err != nil {
			return err
		}
		_ = c.conn.SetLinger(0)
		return c.conn.Close()
	default: // a fragmented message with a pong inside, a close frame in two writes, then gone
		fs := textFrames(msg, 2)
		cl := closeFrame()
		var b []byte
		b = append(b, fs[0]...)
		b = append(b, clientFrame(true, opPong, nil)...)
		b = append(b, fs[1]...)
		b = append(b, cl[:3]...)
		if err := c.writeSizes(append(b, cl[3:]...), []int{len(b)}); err != nil {
			return err
		}
		return c.conn.Close()
	}
}

// TestIdleThenBurst: 50 idle connections (with the fast engine parked in
// the poller, no goroutine among them; with the plain one, a reader each)
// all send at the same moment; every message is echoed, and the
// connections go back to idle.
func TestIdleThenBurst(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		clients := make([]*rawClient, 50)
		for i := range clients {
			clients[i] = e.dial(t)
		}
		if e.kind == livesock.Fast {
			eventually(t, func() string { return fmt.Sprintf("the poller holds %d", e.engine.Polled()) },
				func() bool { return e.engine.Polled() == len(clients) })
		}
		waitIdle(t, e)
		errs := make([]error, len(clients))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, c := range clients {
			var stream []byte
			var want []string
			for j := range 3 {
				m := fmt.Sprintf("burst-%d-%d", i, j)
				stream = append(stream, clientFrame(true, opText, []byte(m))...)
				want = append(want, m)
			}
			wg.Go(func() {
				<-start
				errs[i] = c.wantEchoes(want, stream)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		}
		waitIdle(t, e)
	})
}

// TestEngineClose: closing the engine ends every connection it still
// holds (the handler hears Ended) and refuses new ones with 503.
func TestEngineClose(t *testing.T) {
	for _, kind := range engines() {
		t.Run(string(kind), func(t *testing.T) {
			e := newEchoServer(t, kind, 0)
			c := e.dial(t)
			if err := c.wantEchoes([]string{"x"}, clientFrame(true, opText, []byte("x"))); err != nil {
				t.Fatal(err)
			}
			ec := e.last(t)
			if err := e.engine.Close(); err != nil {
				t.Fatal(err)
			}
			if kind == livesock.Fast {
				// The poller closed what it held.
				waitEnded(t, ec)
			} else {
				// A plain connection is its own; the server closes it (as
				// the hub does before the engine stops).
				ec.conn.Close(1001, "going away")
				if err := c.wantClose(1001, ""); err != nil {
					t.Fatal(err)
				}
				waitEnded(t, ec)
			}
			if _, err := rawDial(e.srv.Listener.Addr().String()); err == nil || !strings.Contains(err.Error(), "503") {
				t.Fatalf("a connection after Close: %v, want 503", err)
			}
			if err := e.engine.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// waitEnded waits for the handler's Ended.
func waitEnded(t *testing.T, ec *echoConn) {
	t.Helper()
	select {
	case <-ec.ended:
	case <-time.After(suiteWait):
		t.Fatal("the connection did not end")
	}
}

// eventually waits for cond, failing with what after suiteWait.
func eventually(tb testing.TB, what func() string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(suiteWait)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %s: %s", suiteWait, what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goroutineStacks is every goroutine's stack, one string each.
func goroutineStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// connGoroutines counts the goroutines busy with a connection: reading
// (the poller's burst, or a reader), writing or closing. The poller's own
// goroutine is not counted.
func connGoroutines() (n int, stacks []string) {
	for _, s := range goroutineStacks() {
		if strings.Contains(s, "livesock.(*poller).run") {
			continue
		}
		if strings.Contains(s, "livesock.(*") || strings.Contains(s, "github.com/coder/websocket") {
			n++
			stacks = append(stacks, s)
		}
	}
	return n, stacks
}

// idleGoroutines is what the open connections hold when idle: nothing
// with the fast engine, a reader each with the plain one.
func idleGoroutines(e *echoServer) int {
	if e.kind == livesock.Fast {
		return 0
	}
	return int(e.accepted.Load() - e.ended.Load())
}

// waitIdle waits until the goroutines busy with a connection are what the
// open connections hold when idle.
func waitIdle(t *testing.T, e *echoServer) {
	t.Helper()
	eventually(t, func() string {
		n, stacks := connGoroutines()
		return fmt.Sprintf("%s: %d goroutines busy with a connection, want %d:\n%s", e.kind, n, idleGoroutines(e), strings.Join(stacks, "\n\n"))
	}, func() bool {
		n, _ := connGoroutines()
		return n == idleGoroutines(e)
	})
}

// TestCutShortNotHandled: a message the client's end cuts off is not
// handed to the handler as if whole, wherever the end falls: after the
// first fragment of a message, inside the next frame's header, or after a
// header whose payload never came (coder/websocket alone hands the first
// and last as messages: FuzzClientBytes found them).
func TestCutShortNotHandled(t *testing.T) {
	whole := clientFrame(true, opText, []byte("whole"))
	first := clientFrame(false, opText, []byte("first part"))
	cuts := []struct {
		name   string
		stream []byte
	}{
		{"AfterAFragment", join(whole, first)},
		{"InAHeader", join(whole, first, []byte{0x80})},
		{"InAPongHeader", join(whole, first, []byte{0x8A})},
		{"NoPayload", join(whole, clientFrame(true, opText, []byte("never sent"))[:6])},
	}
	forEachEngine(t, func(t *testing.T, e *echoServer) {
		for _, cut := range cuts {
			v, err := sendRaw(t, e, cut.stream)
			if err != nil {
				t.Fatalf("%s: %v", cut.name, err)
			}
			if !slices.Equal(v.handled, []string{"whole"}) {
				t.Errorf("%s: handled %q, want only the whole message", cut.name, v.handled)
			}
		}
	})
}

func join(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
