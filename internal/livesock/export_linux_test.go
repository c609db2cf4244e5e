package livesock

import (
	"net"
	"sync"
	"time"
)

// The fast connection's socket writer, for its black-box tests
// (fastwrite_linux_test.go).

// SocketWriterForTest is a live connection's socket writer whose writer
// goroutine the test runs by hand (Run), so that it decides when the queue
// is written.
type SocketWriterForTest struct {
	w       *socketWriter
	pending chan func()   // the writer goroutine the writer asked for
	failed  chan error    // what the writer ended with
	stopped chan struct{} // closed by Stop
	once    sync.Once
}

func newTestWriter(queue int) *SocketWriterForTest {
	t := &SocketWriterForTest{pending: make(chan func(), 1), failed: make(chan error, 1), stopped: make(chan struct{})}
	t.w = newSocketWriter(queue, 10*time.Second, func(err error) { t.failed <- err })
	// The writer asks for a goroutine only when none runs: one at a time.
	t.w.spawn = func(f func()) { t.pending <- f }
	return t
}

// NewSocketWriterForTest returns a writer of c holding at most queue
// messages, and the connection coder/websocket would write its control
// frames to.
func NewSocketWriterForTest(c net.Conn, queue int) (*SocketWriterForTest, net.Conn) {
	t := newTestWriter(queue)
	return t, t.w.attach(c)
}

// NewSocketWriterWithDirectForTest is NewSocketWriterForTest with direct as
// the non-blocking write (what a unix socket gets from direct_linux.go),
// so that a test decides how much of each frame the socket takes.
func NewSocketWriterWithDirectForTest(c net.Conn, queue int, direct func(p []byte) int) (*SocketWriterForTest, net.Conn) {
	t := newTestWriter(queue)
	g := t.w.attach(c)
	t.w.direct = direct
	return t, g
}

// HasDirectWriteForTest reports whether messages to c may be written
// straight to its socket, without the writer goroutine.
func HasDirectWriteForTest(c net.Conn) bool { return directWriter(c) != nil }

// Send sends one pre-framed message (rooms.Sink's Send, given the frame).
func (t *SocketWriterForTest) Send(frame []byte) bool { return t.w.sendFrame(frame) }

// WriteNow writes frames before Start, waiting for the socket.
func (t *SocketWriterForTest) WriteNow(frames ...[]byte) error { return t.w.writeNow(frames...) }

// Run runs the writer goroutine each time the writer asks for it, until
// Stop (nil), a failed write (its error) or a drop (nil).
func (t *SocketWriterForTest) Run() error {
	for {
		select {
		case f := <-t.pending:
			f()
			select {
			case err := <-t.failed:
				return err
			default:
			}
		case <-t.stopped:
			return nil
		}
	}
}

// Stop ends the writer.
func (t *SocketWriterForTest) Stop() {
	t.w.stop()
	t.once.Do(func() { close(t.stopped) })
}

// Drop tells the writer to end the connection after the frame begun.
func (t *SocketWriterForTest) Drop() { t.w.drop() }

// Queue reports how many frames wait and whether the first of them is the
// rest of a frame already begun on the wire.
func (t *SocketWriterForTest) Queue() (frames int, begun bool) {
	t.w.qmu.Lock()
	defer t.w.qmu.Unlock()
	return len(t.w.queue), t.w.partial
}

// SendControl sends a control frame ahead of the queued messages.
func (t *SocketWriterForTest) SendControl(frame []byte) { t.w.sendControl(frame) }
