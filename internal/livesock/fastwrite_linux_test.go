package livesock_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"corkboard/internal/livesock"
)

// socketPair returns the server and client ends of a loopback TCP
// connection. Tests whose outcome depends on how much a socket takes use a
// fakeSocket instead: kernel buffers grow and differ between machines.
func socketPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	server, client = s.(*net.TCPConn), c.(*net.TCPConn)
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// fakeSocket is the server end of a connection with a send buffer of a
// fixed size, which the test's peer drains by reading: TryWrite (the socket
// writer's non-blocking write) takes what fits and returns at once, Write
// (the writer goroutine's) waits for the peer to make room. Nothing depends
// on a kernel or on timing: what fits is what the test wrote and read.
type fakeSocket struct {
	mu       sync.Mutex
	changed  sync.Cond // buf or closed changed
	capacity int
	buf      []byte // written, not yet read by the peer
	closed   bool
}

// newFakeSocket returns a socket of capacity bytes, closed when the test
// ends or after socketWait, so that a writer or a peer stuck by a bug fails the
// test instead of hanging it.
func newFakeSocket(t *testing.T, capacity int) *fakeSocket {
	s := &fakeSocket{capacity: capacity}
	s.changed.L = &s.mu
	timer := time.AfterFunc(socketWait, func() { s.Close() })
	t.Cleanup(func() { timer.Stop(); s.Close() })
	return s
}

// socketWait bounds a test on a socket, fake or real.
const socketWait = 30 * time.Second

// TryWrite is the non-blocking write: it takes as much of p as fits.
func (s *fakeSocket) TryWrite(p []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	n := min(len(p), s.capacity-len(s.buf))
	s.buf = append(s.buf, p[:n]...)
	s.changed.Broadcast()
	return n
}

// Write waits for room until all of p is in the buffer or the socket is
// closed.
func (s *fakeSocket) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < len(p) {
		for !s.closed && len(s.buf) == s.capacity {
			s.changed.Wait()
		}
		if s.closed {
			return n, net.ErrClosed
		}
		k := min(len(p)-n, s.capacity-len(s.buf))
		s.buf = append(s.buf, p[n:n+k]...)
		n += k
		s.changed.Broadcast()
	}
	return n, nil
}

// Peer returns the client's end: reading from it drains the buffer.
func (s *fakeSocket) Peer() io.Reader { return peerReader{s} }

type peerReader struct{ s *fakeSocket }

func (r peerReader) Read(p []byte) (int, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closed && len(s.buf) == 0 {
		s.changed.Wait()
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = append(s.buf[:0], s.buf[n:]...)
	s.changed.Broadcast()
	return n, nil
}

// Buffered is how many bytes wait for the peer.
func (s *fakeSocket) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buf)
}

// Read is the server reading from the client, who sends nothing.
func (s *fakeSocket) Read([]byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.closed {
		s.changed.Wait()
	}
	return 0, io.EOF
}

func (s *fakeSocket) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.changed.Broadcast()
	return nil
}

func (s *fakeSocket) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (s *fakeSocket) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }
func (s *fakeSocket) SetDeadline(time.Time) error      { return nil }
func (s *fakeSocket) SetReadDeadline(time.Time) error  { return nil }
func (s *fakeSocket) SetWriteDeadline(time.Time) error { return nil }

// newFakeWriter returns a socket writer on a fakeSocket of capacity bytes,
// with the socket's TryWrite as its non-blocking write.
func newFakeWriter(t *testing.T, capacity, queue int) (*livesock.SocketWriterForTest, io.Writer, *fakeSocket) {
	s := newFakeSocket(t, capacity)
	w, guarded := livesock.NewSocketWriterWithDirectForTest(s, queue, s.TryWrite)
	return w, guarded, s
}

type wireFrame struct {
	fin     bool
	opcode  byte
	payload []byte
}

// readFrame reads one unmasked frame.
func readFrame(r *bufio.Reader) (wireFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return wireFrame{}, err
	}
	if h[1]&0x80 != 0 {
		return wireFrame{}, fmt.Errorf("server frame is masked")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return wireFrame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return wireFrame{}, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return wireFrame{}, err
	}
	return wireFrame{fin: h[0]&0x80 != 0, opcode: h[0] & 0x0f, payload: p}, nil
}

// payloadOf is message i's text: its number, then filler up to size bytes.
func payloadOf(i, size int) []byte {
	p := fmt.Appendf(nil, "%06d", i)
	return append(p, bytes.Repeat([]byte{byte('a' + i%26)}, max(0, size-len(p)))...)
}

// readWholeFrames reads frames from r until it has seen messages text
// messages and pings pings, and fails unless each frame is whole and
// message i is payloadOf(i, size(i)), in order. On a read error it stops
// the writer first (stop, which returns the writer's error) so that the
// failure names the writer's error if there is one.
func readWholeFrames(t *testing.T, r *bufio.Reader, messages, pings int, size func(int) int, stop func() error) {
	t.Helper()
	next, gotPings := 0, 0
	for next < messages || gotPings < pings {
		f, err := readFrame(r)
		if err != nil {
			if werr := stop(); werr != nil {
				t.Fatalf("writer failed: %v", werr)
			}
			t.Fatalf("after %d messages and %d pings: %v", next, gotPings, err)
		}
		switch {
		case !f.fin:
			t.Fatalf("fragmented frame (opcode %d)", f.opcode)
		case f.opcode == 0x9:
			if string(f.payload) != "ping" {
				t.Fatalf("control frame payload %q", f.payload)
			}
			gotPings++
		case f.opcode == 0x1:
			if want := payloadOf(next, size(next)); !bytes.Equal(f.payload, want) {
				t.Fatalf("message %d: got %d bytes starting %q, want %d bytes", next, len(f.payload), f.payload[:min(len(f.payload), 6)], len(want))
			}
			next++
		default:
			t.Fatalf("unexpected opcode %d", f.opcode)
		}
	}
}

// TestSocketWriterKeepsFramesWhole fills a socket so that a frame is only
// partly written, has control frames (the close, as writeControl writes it) cut in
// meanwhile, and checks that the peer reads every frame whole and the
// messages in order. The socket is a fakeSocket of 64 KiB: the first
// message (1 MiB) is begun on the wire whatever the machine, and the peer's
// reads decide when later ones fit.
func TestSocketWriterKeepsFramesWhole(t *testing.T) {
	const capacity = 64 << 10
	w, guarded, sock := newFakeWriter(t, capacity, 1000)
	defer w.Stop()

	sizes := []int{200 << 10, 10, 125, 126, 0xffff, 0x10000, 3000, 70000}
	size := func(i int) int {
		if i == 0 {
			return 1 << 20
		}
		return sizes[i%len(sizes)]
	}
	const messages, pings = 200, 50
	frames := make([][]byte, messages)
	for i := range frames {
		frames[i] = livesock.TextFrame(payloadOf(i, size(i)))
	}
	// The first message is larger than the socket takes: it is begun on
	// the wire and its rest queued.
	if !w.Send(frames[0]) {
		t.Fatal("Send refused the first message")
	}
	if _, begun := w.Queue(); !begun {
		t.Fatal("the first message is not begun on the wire")
	}
	if got := sock.Buffered(); got != capacity {
		t.Fatalf("the socket holds %d bytes after the first message, want %d", got, capacity)
	}
	// The writer goroutine starts only now: had it been flushing (holding
	// the write lock) during the first Send, the message would have been
	// queued whole.
	failed := make(chan error, 1)
	go func() { failed <- w.Run() }()

	var pingers sync.WaitGroup
	pingers.Go(func() {
		ping := []byte{0x89, 4, 'p', 'i', 'n', 'g'}
		for range pings {
			if _, err := guarded.Write(ping); err != nil {
				t.Errorf("control frame: %v", err)
				return
			}
		}
	})
	for i := 1; i < messages; i++ {
		if !w.Send(frames[i]) {
			t.Fatalf("Send refused message %d", i)
		}
	}

	readWholeFrames(t, bufio.NewReader(sock.Peer()), messages, pings, size, func() error {
		w.Stop()
		return <-failed
	})
	pingers.Wait()
	w.Stop()
	if err := <-failed; err != nil {
		t.Fatalf("writer failed: %v", err)
	}
	if n := sock.Buffered(); n != 0 {
		t.Fatalf("%d bytes written after the last frame", n)
	}
}

// TestSocketWriterFullQueue: a peer that does not read gets its socket and
// then its queue filled; Send then reports false, and never waits.
func TestSocketWriterFullQueue(t *testing.T) {
	const queue = 3
	w, _, _ := newFakeWriter(t, 64<<10, queue) // the peer never reads
	go w.Run()
	defer w.Stop()
	frame := livesock.TextFrame(payloadOf(1, 64<<10))
	for i := range 100 {
		if !w.Send(frame) {
			// Accepted: what the socket took, then queue frames. Counted from
			// the sends, not read from the queue afterwards: the writer may have
			// taken the full queue into the batch it writes since the refusal.
			if i < queue {
				t.Fatalf("Send refused message %d, want a queue of %d accepted first", i, queue)
			}
			return
		}
	}
	t.Fatal("Send accepted 100 messages of 64 KiB for a peer that reads nothing")
}

func TestTextFrameLengths(t *testing.T) {
	for _, n := range []int{0, 125, 126, 0xffff, 0x10000} {
		f, err := readFrame(bufio.NewReader(bytes.NewReader(livesock.TextFrame(make([]byte, n)))))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !f.fin || f.opcode != 1 || len(f.payload) != n {
			t.Fatalf("%d bytes: fin=%v opcode=%d length=%d", n, f.fin, f.opcode, len(f.payload))
		}
	}
}

// TestSocketWriterStopKeepsFrameBegun: the connection is ended (stop, then
// writeControl writes the close frame) while a frame is half on the wire:
// the peer reads the whole frame, then the close frame, and nothing queued
// after it.
func TestSocketWriterStopKeepsFrameBegun(t *testing.T) {
	w, guarded, sock := newFakeWriter(t, 64<<10, 10)
	big := payloadOf(0, 1<<20)
	if !w.Send(livesock.TextFrame(big)) || !w.Send(livesock.TextFrame([]byte("queued"))) {
		t.Fatal("Send refused a message")
	}
	if _, begun := w.Queue(); !begun {
		t.Fatal("the 1 MiB message is not begun on the wire")
	}
	// The writer goroutine never ran: the rest is still queued.
	w.Stop()
	closeFrame := []byte{0x88, 2, 0x0f, 0xa8} // close, code 4008
	errc := make(chan error, 1)
	go func() {
		_, err := guarded.Write(closeFrame)
		errc <- err
	}()
	r := bufio.NewReader(sock.Peer())
	f, err := readFrame(r)
	if err != nil || f.opcode != 0x1 || !bytes.Equal(f.payload, big) {
		t.Fatalf("first frame: opcode %d, %d bytes, err %v; want the whole 1 MiB message", f.opcode, len(f.payload), err)
	}
	f, err = readFrame(r)
	if err != nil || f.opcode != 0x8 || !bytes.Equal(f.payload, closeFrame[2:]) {
		t.Fatalf("second frame: opcode %d payload %x err %v; want the close frame", f.opcode, f.payload, err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("close frame write: %v", err)
	}
	if n := sock.Buffered(); n != 0 {
		t.Fatalf("%d bytes written after the close frame", n)
	}
}

func TestWriteControlTakesWholeControlFramesOnly(t *testing.T) {
	server, _ := socketPair(t)
	_, guarded := livesock.NewSocketWriterForTest(server, 10)
	for _, tc := range []struct {
		name  string
		frame []byte
		ok    bool
	}{
		{"ping", []byte{0x89, 0}, true},
		{"pong with payload", []byte{0x8a, 3, 'a', 'b', 'c'}, true},
		{"close with code", []byte{0x88, 2, 0x03, 0xe8}, true},
		{"text", livesock.TextFrame([]byte("hi")), false},
		{"close cut short", []byte{0x88, 2, 0x03}, false},
		{"two pings at once", []byte{0x89, 0, 0x89, 0}, false},
		{"ping without FIN", []byte{0x09, 0}, false},
		{"masked ping", []byte{0x89, 0x80, 1, 2, 3, 4}, false},
		{"header only", []byte{0x89}, false},
	} {
		_, err := guarded.Write(tc.frame)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err=%v, want accepted=%v", tc.name, err, tc.ok)
		}
	}
}

// TestSocketWriterWithoutDescriptor: on a connection with no socket of its
// own (TLS would be one; net.Pipe is here) every message is queued and the
// writer goroutine writes it, in order.
func TestSocketWriterWithoutDescriptor(t *testing.T) {
	server, client := net.Pipe()
	t.Cleanup(func() { server.Close(); client.Close() })
	w, _ := livesock.NewSocketWriterForTest(server, 10)
	go w.Run()
	defer w.Stop()
	for _, m := range []string{"one", "two", "three"} {
		if !w.Send(livesock.TextFrame([]byte(m))) {
			t.Fatalf("Send refused %q", m)
		}
	}
	r := bufio.NewReader(client)
	if err := client.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two", "three"} {
		f, err := readFrame(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(f.payload) != want {
			t.Fatalf("got %q, want %q", f.payload, want)
		}
	}
}

// TestSocketWriterControlFrameGoesAhead: a ping sent while messages wait
// for a full socket goes after the frame begun on the wire and before the
// queued messages.
func TestSocketWriterControlFrameGoesAhead(t *testing.T) {
	w, _, sock := newFakeWriter(t, 64<<10, 10)
	defer w.Stop()
	big := payloadOf(0, 1<<20)
	if !w.Send(livesock.TextFrame(big)) || !w.Send(livesock.TextFrame([]byte("queued"))) {
		t.Fatal("Send refused a message")
	}
	w.SendControl([]byte{0x89, 0})
	failed := make(chan error, 1)
	go func() { failed <- w.Run() }()
	r := bufio.NewReader(sock.Peer())
	for i, want := range []struct {
		opcode  byte
		payload []byte
	}{{0x1, big}, {0x9, []byte{}}, {0x1, []byte("queued")}} {
		f, err := readFrame(r)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if f.opcode != want.opcode || !bytes.Equal(f.payload, want.payload) {
			t.Fatalf("frame %d: opcode %d, %d bytes; want opcode %d, %d bytes", i, f.opcode, len(f.payload), want.opcode, len(want.payload))
		}
	}
	w.Stop()
	if err := <-failed; err != nil {
		t.Fatalf("writer failed: %v", err)
	}
}

// TestSocketWriterWritesStraightToTCP: on a unix TCP socket a message goes
// out in the sender's call, with no writer goroutine running (a message
// this small always fits in an empty socket buffer).
func TestSocketWriterWritesStraightToTCP(t *testing.T) {
	server, client := socketPair(t)
	if !livesock.HasDirectWriteForTest(server) {
		t.Fatal("a TCP socket has no direct write")
	}
	w, _ := livesock.NewSocketWriterForTest(server, 10)
	defer w.Stop()
	// No Run: only a direct write can reach the peer.
	if !w.Send(livesock.TextFrame([]byte("straight"))) {
		t.Fatal("Send refused a message")
	}
	if n, _ := w.Queue(); n != 0 {
		t.Fatalf("%d frames queued, want the message written at once", n)
	}
	if err := client.SetReadDeadline(time.Now().Add(socketWait)); err != nil {
		t.Fatal(err)
	}
	f, err := readFrame(bufio.NewReader(client))
	if err != nil || string(f.payload) != "straight" {
		t.Fatalf("got %q, err %v; want the message", f.payload, err)
	}
}

// TestNoDirectWriteWithoutDescriptor: a connection without a socket of its
// own (TLS would be one) takes the queued path.
func TestNoDirectWriteWithoutDescriptor(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	if livesock.HasDirectWriteForTest(server) {
		t.Fatal("net.Pipe has a direct write")
	}
}

// TestSocketWriterPongsBounded: pongs answering a client that pings and
// does not read stop being queued once the queue is full, while the
// keeper's ping still goes ahead.
func TestSocketWriterPongsBounded(t *testing.T) {
	w, _, _ := newFakeWriter(t, 64<<10, 3)
	defer w.Stop()
	if !w.Send(livesock.TextFrame(payloadOf(0, 1<<20))) { // fills the socket; the rest is queued
		t.Fatal("Send refused a message")
	}
	for range 100 {
		w.SendControl([]byte{0x8a, 1, 'p'})
	}
	if n, _ := w.Queue(); n != 3 {
		t.Fatalf("%d frames queued after 100 pongs, want 3 (the bound)", n)
	}
	w.SendControl([]byte{0x89, 0})
	if n, _ := w.Queue(); n != 4 {
		t.Fatalf("%d frames queued after a ping, want 4", n)
	}
}
