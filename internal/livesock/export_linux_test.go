package livesock

import (
	"io"
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
// messages, and where the connection writes its control frames (the
// close: writeControl).
func NewSocketWriterForTest(c net.Conn, queue int) (*SocketWriterForTest, io.Writer) {
	t := newTestWriter(queue)
	t.w.attach(c)
	return t, controlWriter{t.w}
}

// controlWriter writes through socketWriter.writeControl.
type controlWriter struct{ w *socketWriter }

func (c controlWriter) Write(p []byte) (int, error) {
	if err := c.w.writeControl(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// NewSocketWriterWithDirectForTest is NewSocketWriterForTest with direct as
// the non-blocking write (what a unix socket gets from direct_linux.go),
// so that a test decides how much of each frame the socket takes.
func NewSocketWriterWithDirectForTest(c net.Conn, queue int, direct func(p []byte) int) (*SocketWriterForTest, io.Writer) {
	t, g := NewSocketWriterForTest(c, queue)
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
