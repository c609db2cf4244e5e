package livesock_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"
)

// FuzzClientBytes: whatever a client sends after the handshake (frames,
// fragments, pings, pongs, a close, or garbage), the engines read it
// alike: the handler is given the same messages in the same order, and
// where both send a close frame its code is the same. Pongs are not
// compared: the fast engine takes a pong out (and tells the handler) as it
// reads it, before the library has read the frames ahead of it, so after a
// frame the library refuses a pong still counts there and not with plain;
// harmless, a pong says only that the client is there (TestPongsAnywhere
// counts them on valid streams). The bytes go over a real TCP connection to an echo server per
// engine (the suite's), then the client stops writing (half-close), so
// that a frame left incomplete ends in EOF on both and the connection
// ends. What the client reads back is not compared beyond the close code:
// echoes still queued when the read side ends may or may not be written
// before the socket closes (the client has said it is gone), in either
// engine.
func FuzzClientBytes(f *testing.F) {
	kinds := engines()
	if len(kinds) < 2 {
		f.Skip("one engine on this platform: nothing to compare")
	}
	servers := make([]*echoServer, len(kinds))
	for i, k := range kinds {
		servers[i] = newEchoServer(f, k, 0)
	}
	f.Add(join(clientFrame(true, opText, []byte("one")), clientFrame(true, opText, []byte("two")), closeFrame()))
	f.Add(join(textFrames([]byte("fragmented message"), 3)...))
	f.Add(join(clientFrame(false, opText, []byte("a")), clientFrame(true, opPong, nil), clientFrame(true, opPing, []byte("p")), clientFrame(true, opCont, []byte("b"))))
	f.Add(join(clientFrame(true, opText, bytes.Repeat([]byte("x"), 300)), clientFrame(true, opPong, bytes.Repeat([]byte("p"), 125))))
	f.Add(join(clientFrame(true, opText, []byte("stop")), clientFrame(true, opText, []byte("unread"))))
	f.Add(join(clientFrame(true, opText, []byte("then half")), clientFrame(true, opText, []byte("a frame cut off"))[:6]))
	f.Add([]byte{0x81, 0x05, 'h', 'e', 'l', 'l', 'o'})                       // unmasked: a protocol error
	f.Add(join(clientFrame(true, opPing, bytes.Repeat([]byte("p"), 126))))   // a control frame too long
	f.Add(join(clientFrame(true, opCont, []byte("no message to continue")))) // a continuation out of place
	f.Fuzz(func(t *testing.T, stream []byte) {
		got := make([]clientView, len(servers))
		for i, s := range servers {
			v, err := sendRaw(t, s, stream)
			if err != nil {
				t.Fatalf("%s: %v", kinds[i], err)
			}
			got[i] = v
		}
		for i := 1; i < len(got); i++ {
			a, b := got[0], got[i]
			if !slices.Equal(a.handled, b.handled) {
				t.Fatalf("%s handled %q (close code %d); %s handled %q (close code %d)", kinds[0], a.handled, a.code, kinds[i], b.handled, b.code)
			}
			if a.code != 0 && b.code != 0 && a.code != b.code {
				t.Fatalf("%s closed with %d, %s with %d", kinds[0], a.code, kinds[i], b.code)
			}
		}
	})
}

// clientView is what became of a client's bytes: the messages the handler
// was given and the server's close code (0: the connection ended without
// one).
type clientView struct {
	handled []string
	code    int
}

// sendRaw dials s, writes stream, half-closes and reads until the
// connection ends, then waits for the handler's end. An error only where
// the client could not talk at all or the connection did not end. The
// fuzz function runs one input at a time, so the connection accepted last
// is this one.
func sendRaw(tb testing.TB, s *echoServer, stream []byte) (clientView, error) {
	c, err := rawDial(s.srv.Listener.Addr().String())
	if err != nil {
		return clientView{}, err
	}
	defer c.conn.Close()
	ec := s.last(tb)
	var v clientView
	// The server may have ended the connection before the client is done
	// (a protocol error early in the stream): then these fail, and what
	// follows reads the end.
	_ = c.write(stream)
	_ = c.conn.CloseWrite()
	for {
		_, err := c.next()
		var sc *serverClosed
		switch {
		case errors.As(err, &sc):
			v.code = sc.code
			return v, handlerEnd(ec, &v)
		case err != nil:
			// A reset: the server closed with bytes unread (after a
			// protocol error), which the kernel answers so. A frame cut
			// short: the server, seeing the client's half-close as its
			// leaving, closed while an echo was on its way (the plain
			// engine, about one run in a hundred under -race). Either is
			// the connection's end; what it handled is what is compared.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
				return v, handlerEnd(ec, &v)
			}
			return v, fmt.Errorf("read: %w", err)
		}
	}
}

// handlerEnd waits for ec's Ended, then copies what it was given into v.
func handlerEnd(ec *echoConn, v *clientView) error {
	select {
	case <-ec.ended:
	case <-time.After(suiteWait):
		return errors.New("the connection did not end")
	}
	ec.mu.Lock()
	v.handled = slices.Clone(ec.got)
	ec.mu.Unlock()
	return nil
}
