package livesock

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
)

// pongFilter sits between a live connection's socket and coder/websocket's
// read buffer. It takes the client's pong frames (answers to the keeper's
// pings) out of the byte stream and reports them itself, and it counts the
// complete frames it lets through. Both are what lets an idle connection
// wait without a goroutine (poller_linux.go): the keeper's ping is
// answered every 30 s, and a reader the library handed a pong would take
// it and then block waiting for a message, holding its goroutine for as
// long as the client stays quiet. With the pong gone and the frames
// counted, the poller calls the library's Read only when a whole message
// (or a close, or the end of the stream) is there to be read.
//
// It parses the client's frames (RFC 6455 section 5.2) as they pass, byte
// by byte across reads: the header's two bytes, the extended length, the
// mask, then the payload, which it skips. It does not check what it passes
// on: the library does, and fails the connection on a malformed frame.
type pongFilter struct {
	// pong, if set, is called for each complete pong frame taken out.
	pong func()
	// control, if set, is asked at the start of each ping and pong frame
	// whether the connection's message budget admits it; false drops the
	// frame (a ping is not answered), and the connection is being closed.
	control func() bool

	// Parser state: hdr holds the header bytes of the current frame so
	// far (up to 14); need is how many header bytes the frame has, once
	// known; left is its payload still to come.
	hdr    [14]byte
	nhdr   int
	need   int
	left   uint64
	drop   bool // the current frame's bytes are not passed on: a pong, or a control frame past the budget
	isPong bool // the current frame is a pong
	// malformed is set, for good, by a pong the library would have failed
	// the connection for (not masked, or longer than a control frame may
	// be): it never reaches the library, so the reader fails the
	// connection itself (errMalformedPong).
	malformed bool

	// messages counts the data messages whose last frame has been passed
	// on whole; others the close and ping frames passed on whole; partial
	// is whether the bytes passed on end inside a frame, or inside a
	// message whose last frame has not come yet.
	messages  uint64
	others    uint64
	inMessage bool
	// othersAt holds, for each message passed on whole that the library
	// has not returned yet, others when its last frame ended: the close
	// and ping frames the library will have handled once its Read returns
	// that message. Those after it wait for another Read.
	othersAt []uint64
}

// filter takes the pong frames out of p in place and returns what is left.
func (f *pongFilter) filter(p []byte) []byte {
	out := p[:0]
	for i := 0; i < len(p); {
		if f.nhdr < 2 || f.nhdr < f.need {
			b := p[i]
			i++
			if f.headerByte(b) {
				out = append(out, b)
			}
			continue
		}
		// Inside the payload.
		n := uint64(len(p) - i)
		if n > f.left {
			n = f.left
		}
		if !f.drop {
			out = append(out, p[i:i+int(n)]...)
		}
		i += int(n)
		f.left -= n
		if f.left == 0 {
			f.frameEnded()
		}
	}
	return out
}

// headerByte takes the next byte of a frame's header; false when the
// frame is dropped (so is the byte).
func (f *pongFilter) headerByte(b byte) bool {
	f.hdr[f.nhdr] = b
	f.nhdr++
	switch f.nhdr {
	case 1:
		op := b & 0x0f
		// Only a pong as RFC 6455 section 5.5 allows one (final, no
		// reserved bit) is taken out; any other frame with the pong
		// opcode goes on to the library, which fails the connection for
		// it as the plain engine's does.
		f.isPong = b == 0x8A
		f.drop = f.isPong
		if (op == 0x9 || op == 0xA) && f.control != nil && !f.control() {
			f.drop = true
		}
	case 2:
		if f.isPong && (b&0x80 == 0 || b&0x7f > 125) {
			f.malformed = true
		}
		f.need = 2
		switch b & 0x7f {
		case 126:
			f.need += 2
		case 127:
			f.need += 8
		}
		if b&0x80 != 0 {
			f.need += 4 // the mask key
		}
	}
	keep := !f.drop // before frameEnded, which starts the next frame
	if f.nhdr >= 2 && f.nhdr == f.need {
		f.left = f.payloadLength()
		if f.left == 0 {
			f.frameEnded()
		}
	}
	return keep
}

func (f *pongFilter) payloadLength() uint64 {
	switch n := f.hdr[1] & 0x7f; n {
	case 126:
		return uint64(f.hdr[2])<<8 | uint64(f.hdr[3])
	case 127:
		var v uint64
		for _, b := range f.hdr[2:10] {
			v = v<<8 | uint64(b)
		}
		return v
	default:
		return uint64(n)
	}
}

// frameEnded is the end of the current frame's bytes.
func (f *pongFilter) frameEnded() {
	fin, opcode := f.hdr[0]&0x80 != 0, f.hdr[0]&0x0f
	switch {
	case f.drop:
		if f.isPong && f.pong != nil && !f.malformed {
			f.pong()
		}
	case opcode >= 0x8: // close, ping (or a reserved control opcode)
		f.others++
	case fin:
		f.messages++
		f.othersAt = append(f.othersAt, f.others)
		f.inMessage = false
	default:
		f.inMessage = true
	}
	f.nhdr, f.need, f.left, f.drop, f.isPong = 0, 0, 0, false, false
}

// partial reports whether the bytes passed on end inside a frame or a
// message.
func (f *pongFilter) partial() bool {
	return f.nhdr > 0 || f.inMessage
}

// filterConn is the read side of a live connection as coder/websocket
// sees it: the socket's bytes, pongs taken out, behind what net/http had
// read ahead of the upgrade (also filtered). Reads take rmu, so that the
// poller's own non-blocking read (pollRead) and the library's reads keep
// the stream in order.
type filterConn struct {
	rmu sync.Mutex
	src io.Reader // the socket
	// raw is the socket's descriptor for the poller's reads and waits; nil
	// when it has none of its own (TLS, net.Pipe): the connection then
	// keeps a reader goroutine.
	raw   syscall.RawConn
	f     pongFilter
	ahead []byte // filtered bytes read but not yet handed to the library
	err   error  // the socket's error seen by pollRead, handed on after ahead
	// consumed is how many messages the library's Read returned, and
	// othersSeen how many close and ping frames came before the last of
	// them: the poller calls Read again only for more.
	consumed   uint64
	othersSeen uint64
	// stopped is set when the connection went past its message budget:
	// from then on nothing more is read from the socket (Read answers
	// errStopped), so that neither the library's Read nor its close
	// handshake spends time on a flood; the kernel's buffer fills and the
	// sender has to wait.
	stopped atomic.Bool
	// ended is set once Read answered an error: the library met the
	// stream's end (or a failure) while it read (cutShort).
	ended atomic.Bool
}

// errStopped is Read's answer once the connection stopped reading.
var errStopped = errors.New("livesock: reading stopped")

// errMalformedPong ends a connection whose client sent a pong that is no
// valid control frame (pongFilter.malformed).
var errMalformedPong = errors.New("livesock: malformed pong frame")

// errWouldBlock is readNB's answer when the socket holds nothing more.
var errWouldBlock = errors.New("livesock: nothing to read yet")

// Read implements io.Reader for the library's bufio.Reader.
func (c *filterConn) Read(p []byte) (int, error) {
	n, err := c.read(p)
	if err != nil {
		c.ended.Store(true)
	}
	return n, err
}

// cutShort reports whether the message the library's Read just returned
// met the stream's end: coder/websocket hands a fragmented message (or a
// frame whose header came but no payload) that the stream's end cut off
// as if it were whole, when the end falls where its reader takes io.EOF
// for the message's. It asks the socket for more only while a message is
// incomplete, so an end it met while reading one means the message was
// cut. plain.go's readConn says the same for the plain engine.
func (c *filterConn) cutShort() bool { return c.ended.Load() }

func (c *filterConn) read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.stopped.Load() {
		return 0, errStopped
	}
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		c.ahead = c.ahead[n:]
		if len(c.ahead) == 0 {
			c.ahead = nil
		}
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	for {
		n, err := c.src.Read(p)
		kept := len(c.f.filter(p[:n]))
		if c.f.malformed && err == nil {
			c.err = errMalformedPong
			err = c.err
		}
		if kept > 0 || err != nil {
			return kept, err
		}
		if c.stopped.Load() {
			return 0, errStopped // a control frame went past the budget
		}
		// Only pongs came: read on, the library wants bytes.
	}
}

// readAheadMax bounds what pollRead keeps for the library: past it, the
// library reads (and applies its message limit) even if no message is
// complete yet.
const readAheadMax = 4096

// pollRead is the poller's look at the connection when its socket became
// readable: it reads what the socket holds without waiting (readNB) and
// reports whether the library's Read is to be called: a whole message, a
// close or ping frame, the stream's end or an error is waiting, or more
// than readAheadMax bytes are. ok is false when the library is reading
// already (its close handshake, which then ends the connection).
func (c *filterConn) pollRead(readNB func([]byte) (int, error)) (read, ok bool) {
	if !c.rmu.TryLock() {
		return false, false
	}
	defer c.rmu.Unlock()
	if c.stopped.Load() {
		return true, true // Read answers errStopped, and the connection ends
	}
	if c.err == nil && len(c.ahead) < readAheadMax {
		var buf [512]byte
		for len(c.ahead) < readAheadMax {
			n, err := readNB(buf[:])
			if n > 0 {
				c.ahead = append(c.ahead, c.f.filter(buf[:n])...)
			}
			if c.f.malformed && err == nil {
				err = errMalformedPong
			}
			if err != nil {
				if err != errWouldBlock {
					c.err = err
				}
				break
			}
			if n == 0 {
				c.err = io.EOF
				break
			}
		}
	}
	// stopped: a control frame just read went past the budget; the
	// library's Read answers errStopped and the connection ends.
	return c.err != nil || c.stopped.Load() || c.f.messages > c.consumed || c.f.others > c.othersSeen || len(c.ahead) >= readAheadMax, true
}

// messageRead is called when the library's Read returned a message: it
// has handled the close and ping frames that came before the message's
// last frame, and none after it. (Taking every frame passed on as handled
// when Read was called left a close frame that came in the same read as
// a push unanswered until the client sent something more: a client that
// waits for the server's close waited forever; TestLivePollCloseRace.)
func (c *filterConn) messageRead() {
	c.rmu.Lock()
	c.consumed++
	if len(c.f.othersAt) > 0 {
		c.othersSeen = c.f.othersAt[0]
		c.f.othersAt = c.f.othersAt[1:]
		if len(c.f.othersAt) == 0 {
			c.f.othersAt = nil // an idle connection keeps no array
		}
	}
	c.rmu.Unlock()
}
