package livesock_test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	opCont  = 0x0
	opText  = 0x1
	opClose = 0x8
	opPing  = 0x9
	opPong  = 0xA
)

// clientFrame is one frame as a client sends it: masked, with the shortest
// length encoding.
func clientFrame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	f := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n <= 0xffff:
		f = append(f, 0x80|126, byte(n>>8), byte(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	f = append(f, mask[:]...)
	for i, c := range payload {
		f = append(f, c^mask[i%4])
	}
	return f
}

// textFrames is a text message in parts frames: the first a text frame,
// the others continuations, the last one final.
func textFrames(payload []byte, parts int) [][]byte {
	var fs [][]byte
	for i := range parts {
		lo, hi := len(payload)*i/parts, len(payload)*(i+1)/parts
		op := byte(opCont)
		if i == 0 {
			op = opText
		}
		fs = append(fs, clientFrame(i == parts-1, op, payload[lo:hi]))
	}
	return fs
}

// closeFrame is a client's close frame with code 1000.
func closeFrame() []byte { return clientFrame(true, opClose, []byte{0x03, 0xe8}) }

// rawClient is the client side of a connection over plain TCP.
type rawClient struct {
	conn  *net.TCPConn
	br    *bufio.Reader
	pongs []string // the payloads of the server's pongs, in order
}

// serverClosed is the server's close frame.
type serverClosed struct{ code int }

func (c *serverClosed) Error() string { return fmt.Sprintf("closed by the server with %d", c.code) }

// rawDial upgrades a TCP connection and reads the server's hello.
func rawDial(addr string) (*rawClient, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	c := &rawClient{conn: conn.(*net.TCPConn), br: bufio.NewReader(conn)}
	req := "GET /live HTTP/1.1\r\nHost: " + addr +
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " +
		base64.StdEncoding.EncodeToString(key) + "\r\n\r\n"
	if err := c.write([]byte(req)); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(suiteWait))
	res, err := http.ReadResponse(c.br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, fmt.Errorf("upgrade: status %d", res.StatusCode)
	}
	m, err := c.next()
	if err != nil || string(m) != "hello" {
		conn.Close()
		return nil, fmt.Errorf("first message %q (%v), want hello", m, err)
	}
	return c, nil
}

// The deadlines below only bound a failing test.

func (c *rawClient) write(p []byte) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(suiteWait))
	_, err := c.conn.Write(p)
	return err
}

// writeSizes writes p in writes of the given sizes, each its own system
// call (Go's TCP connections send at once: TCP_NODELAY), then the rest.
func (c *rawClient) writeSizes(p []byte, sizes []int) error {
	for _, n := range sizes {
		if err := c.write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	if len(p) > 0 {
		return c.write(p)
	}
	return nil
}

// frame reads one server frame.
func (c *rawClient) frame() (op byte, fin bool, payload []byte, err error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(suiteWait))
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return 0, false, nil, err
	}
	if h[1]&0x80 != 0 {
		return 0, false, nil, errors.New("the server masked a frame")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126, 127:
		ext := make([]byte, map[uint64]int{126: 2, 127: 8}[n])
		if _, err := io.ReadFull(c.br, ext); err != nil {
			return 0, false, nil, err
		}
		n = 0
		for _, b := range ext {
			n = n<<8 | uint64(b)
		}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return 0, false, nil, err
	}
	return h[0] & 0x0f, h[0]&0x80 != 0, payload, nil
}

// next reads the next server message, answering the server's pings; a
// *serverClosed error when the server closes.
func (c *rawClient) next() ([]byte, error) {
	var msg []byte
	for {
		op, fin, payload, err := c.frame()
		if err != nil {
			return nil, err
		}
		switch op {
		case opClose:
			code := 1005
			if len(payload) >= 2 {
				code = int(binary.BigEndian.Uint16(payload))
			}
			// As a browser does: the close is answered.
			_ = c.write(clientFrame(true, opClose, payload))
			return nil, &serverClosed{code}
		case opPing:
			if err := c.write(clientFrame(true, opPong, payload)); err != nil {
				return nil, err
			}
		case opPong:
			c.pongs = append(c.pongs, string(payload))
		default:
			msg = append(msg, payload...)
			if fin {
				return msg, nil
			}
		}
	}
}

// wantEchoes writes stream (if any), then reads until every message of
// want came back, in order.
func (c *rawClient) wantEchoes(want []string, stream ...[]byte) error {
	for _, s := range stream {
		if err := c.write(s); err != nil {
			return err
		}
	}
	for i, w := range want {
		m, err := c.next()
		if err != nil {
			return fmt.Errorf("after %d of %d echoes: %w", i, len(want), err)
		}
		if string(m) != w {
			return fmt.Errorf("echo %d: %d bytes starting %q, want %d bytes starting %q", i, len(m), m[:min(len(m), 20)], len(w), w[:min(len(w), 20)])
		}
	}
	return nil
}

// wantClose reads until the server's close frame, which must say code
// (the echoes of skip, if any, may come first), then closes.
func (c *rawClient) wantClose(code int, skip string) error {
	defer c.conn.Close()
	for {
		m, err := c.next()
		var sc *serverClosed
		switch {
		case errors.As(err, &sc):
			if sc.code != code {
				return err
			}
			return nil
		case errors.Is(err, io.EOF) && code == 1000:
			return nil // the server's close went with the handshake
		case err != nil:
			return fmt.Errorf("waiting for the server's close: %w", err)
		case string(m) != skip:
			return fmt.Errorf("message %q before the close", m)
		}
	}
}
