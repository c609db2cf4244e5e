package transport

import "net"

// The live socket writer, for its black-box tests (livewriter_test.go).

// SocketWriterForTest is a live connection's socket writer.
type SocketWriterForTest struct{ w *socketWriter }

// NewSocketWriterForTest returns a writer of c holding at most queue
// messages, and the connection coder/websocket would write its control
// frames to.
func NewSocketWriterForTest(c net.Conn, queue int) (*SocketWriterForTest, net.Conn) {
	w := newSocketWriter(queue)
	return &SocketWriterForTest{w}, w.attach(c)
}

// NewSocketWriterWithDirectForTest is NewSocketWriterForTest with direct as
// the non-blocking write (what a unix socket gets from livewriter_unix.go),
// so that a test decides how much of each frame the socket takes.
func NewSocketWriterWithDirectForTest(c net.Conn, queue int, direct func(p []byte) int) (*SocketWriterForTest, net.Conn) {
	w := newSocketWriter(queue)
	g := w.attach(c)
	w.direct = direct
	return &SocketWriterForTest{w}, g
}

// HasDirectWriteForTest reports whether messages to c may be written
// straight to its socket, without the writer goroutine.
func HasDirectWriteForTest(c net.Conn) bool { return directWriter(c) != nil }

// Send sends one pre-framed message (rooms.Sink's Send, given the frame).
func (t *SocketWriterForTest) Send(frame []byte) bool { return t.w.sendFrame(frame) }

// WriteNow writes frames before Start, waiting for the socket.
func (t *SocketWriterForTest) WriteNow(frames ...[]byte) error { return t.w.writeNow(frames...) }

// Start ends the hold on queued messages.
func (t *SocketWriterForTest) Start() { t.w.start() }

// Run is the writer goroutine's loop, until Stop (nil) or a failed write.
func (t *SocketWriterForTest) Run() error { return t.w.run(nil) }

// Stop ends the writer.
func (t *SocketWriterForTest) Stop() { t.w.stop() }

// Queue reports how many frames wait and whether the first of them is the
// rest of a frame already begun on the wire.
func (t *SocketWriterForTest) Queue() (frames int, begun bool) {
	t.w.qmu.Lock()
	defer t.w.qmu.Unlock()
	return len(t.w.queue), t.w.partial
}

// TextFrameForTest frames p as the server sends a text message.
func TextFrameForTest(p []byte) []byte { return textFrame(p) }
