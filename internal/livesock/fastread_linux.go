package livesock

import (
	"encoding/binary"
	"fmt"
)

// frameReader reads a client's frames (RFC 6455 section 5) for a fast
// connection, from whatever pieces the socket's reads cut the stream into,
// and hands on whole messages and control frames. It keeps no buffer of
// its own between reads beyond a frame's header and the message or
// control frame under way, so that an idle connection holds a few dozen
// bytes here (docs/architecture.md, "The socket engine").
//
// It checks what coder/websocket checks, with the same close codes, so
// that both engines treat a client's bytes alike (FuzzClientBytes
// compares them): every frame masked, no reserved bit, no unknown opcode,
// control frames final and at most 125 bytes, continuations only inside a
// message and no new message inside one, a close frame's code, and the
// message limit. Like the library it does not check that a text message
// is UTF-8.
type frameReader struct {
	// limit bounds one message (Options.ReadLimit).
	limit int64

	// The frame under way: hdr holds its header bytes so far (up to 14),
	// need how many it has once known (0 before the second byte), left its
	// payload still to come and pos how much came, modulo 4 (for the
	// mask).
	hdr  [14]byte
	nhdr uint8
	need uint8
	pos  uint8
	// inMessage says a data message has begun (even an empty one).
	inMessage bool
	left      uint64

	// msg is the data message under way (nil between messages, so an idle
	// connection keeps no array).
	msg []byte
	// ctl is the control frame's payload under way (nil otherwise).
	ctl []byte
}

// frameKind is what next found.
type frameKind uint8

const (
	needMore   frameKind = iota // the bytes given end inside a frame
	gotMessage                  // a whole data message
	gotPing                     // a ping frame
	gotPong                     // a pong frame
	gotClose                    // a close frame (closeCode, closeReason)
	gotRefused                  // an unmasked frame or a negative length: the connection ends without a close frame, as the library ends it
)

// readError is a violation of the protocol, and the close code the
// connection is closed with for it.
type readError struct {
	code   int
	reason string
}

func (e *readError) Error() string { return fmt.Sprintf("livesock: %s (close %d)", e.reason, e.code) }

// Close codes (RFC 6455 section 7.4.1).
const (
	closeNormal      = 1000
	closeProtocol    = 1002
	closeNoStatus    = 1005
	closeTooBig      = 1009
	closeInternalErr = 1011
)

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

func protocolError(format string, args ...any) *readError {
	return &readError{code: closeProtocol, reason: fmt.Sprintf(format, args...)}
}

// next reads p until it ends or one message or control frame is whole, and
// returns how much of p it used and what it found: for gotMessage the
// message (the caller's to keep), for the control frames their payload
// (valid until the next call). A violation is err, with the close code to
// send; the reader is then not to be used again.
func (r *frameReader) next(p []byte) (n int, kind frameKind, payload []byte, err *readError) {
	for n < len(p) {
		if r.need == 0 || r.nhdr < r.need {
			r.headerByte(p[n])
			n++
			if r.need == 0 || r.nhdr < r.need {
				continue
			}
			if kind, err := r.headerDone(); err != nil || kind != needMore {
				return n, kind, nil, err
			}
			if r.left > 0 {
				continue
			}
		} else {
			n += r.payload(p[n:])
			if r.hdr[0]&0x08 == 0 {
				if err := r.overLimit(); err != nil {
					return n, needMore, nil, err
				}
			}
			if r.left > 0 {
				continue
			}
		}
		kind, payload, err := r.frameDone()
		if err != nil || kind != needMore {
			return n, kind, payload, err
		}
	}
	return n, needMore, nil, nil
}

// headerByte takes the next byte of a frame's header.
func (r *frameReader) headerByte(b byte) {
	r.hdr[r.nhdr] = b
	r.nhdr++
	if r.nhdr == 2 {
		r.need = 2 + 4 // the mask key: checked once the header is whole
		if b&0x80 == 0 {
			r.need = 2
		}
		switch b & 0x7f {
		case 126:
			r.need += 2
		case 127:
			r.need += 8
		}
	}
}

// headerDone checks a whole header, in the order coder/websocket does, and
// prepares for the payload. needMore unless the frame is refused.
func (r *frameReader) headerDone() (frameKind, *readError) {
	b0 := r.hdr[0]
	switch r.hdr[1] & 0x7f {
	case 126:
		r.left = uint64(binary.BigEndian.Uint16(r.hdr[2:]))
	case 127:
		r.left = binary.BigEndian.Uint64(r.hdr[2:])
		if r.left > 1<<63-1 {
			// The library reads the length as a signed number and refuses
			// a negative one without a close frame.
			return gotRefused, nil
		}
	default:
		r.left = uint64(r.hdr[1] & 0x7f)
	}
	r.pos = 0
	if b0&0x70 != 0 {
		return needMore, protocolError("received header with unexpected rsv bits set: %v:%v:%v", b0&0x40 != 0, b0&0x20 != 0, b0&0x10 != 0)
	}
	if r.hdr[1]&0x80 == 0 {
		return gotRefused, nil
	}
	switch op := b0 & 0x0f; op {
	case opClose, opPing, opPong:
		if r.left > 125 {
			return needMore, protocolError("received control frame payload with invalid length: %d", r.left)
		}
		if b0&0x80 == 0 {
			return needMore, protocolError("received fragmented control frame")
		}
		r.ctl = make([]byte, 0, r.left)
	case opText, opBinary:
		if r.inMessage {
			return needMore, protocolError("received new data message without finishing the previous message")
		}
		r.inMessage = true
	case opContinuation:
		if !r.inMessage {
			return needMore, protocolError("received continuation frame without text or binary frame")
		}
	default:
		return needMore, protocolError("received unknown opcode %v", op)
	}
	return needMore, nil
}

// payload takes what p holds of the frame's payload, unmasked, and returns
// how much that was.
func (r *frameReader) payload(p []byte) int {
	k := len(p)
	if uint64(k) > r.left {
		k = int(r.left)
	}
	dst := &r.msg
	if r.hdr[0]&0x08 != 0 { // a control frame
		dst = &r.ctl
	}
	at := len(*dst)
	*dst = append(*dst, p[:k]...)
	key := r.hdr[r.need-4 : r.need]
	for i, b := range (*dst)[at:] {
		(*dst)[at+i] = b ^ key[(int(r.pos)+i)&3]
	}
	r.pos = uint8((int(r.pos) + k) & 3)
	r.left -= uint64(k)
	return k
}

// frameDone is the end of a frame's payload (or of a header without
// one); the message limit is checked here and as payload comes (next).
func (r *frameReader) frameDone() (frameKind, []byte, *readError) {
	b0 := r.hdr[0]
	r.nhdr, r.need = 0, 0
	switch b0 & 0x0f {
	case opPing:
		p := r.ctl
		r.ctl = nil
		return gotPing, p, nil
	case opPong:
		p := r.ctl
		r.ctl = nil
		return gotPong, p, nil
	case opClose:
		p := r.ctl
		r.ctl = nil
		if len(p) == 1 {
			return needMore, nil, protocolError("received invalid close payload: close payload %q too small, cannot even contain the 2 byte status code", p)
		}
		if len(p) >= 2 && !validCloseCode(int(binary.BigEndian.Uint16(p))) {
			return needMore, nil, protocolError("received invalid close payload: invalid status code %v", binary.BigEndian.Uint16(p))
		}
		return gotClose, p, nil
	}
	if b0&0x80 == 0 {
		return needMore, nil, nil // more fragments to come
	}
	m := r.msg
	if m == nil {
		m = []byte{}
	}
	r.msg, r.inMessage = nil, false
	return gotMessage, m, nil
}

// overLimit reports whether the message under way is past the limit; the
// library reads one byte past it before it refuses the message, so a
// message of exactly limit bytes passes.
func (r *frameReader) overLimit() *readError {
	if r.limit >= 0 && int64(len(r.msg)) > r.limit {
		return &readError{code: closeTooBig, reason: fmt.Sprintf("read limited at %d bytes", r.limit+1)}
	}
	return nil
}

// validCloseCode reports whether a close frame may carry code (RFC 6455
// section 7.4, as coder/websocket reads it).
func validCloseCode(code int) bool {
	switch code {
	case 1004, closeNoStatus, 1006, 1015:
		return false
	}
	return code >= closeNormal && code <= 1014 || code >= 3000 && code <= 4999
}

// closePayload is a close frame's payload: code and reason, or nothing for
// 1005 (no code), as the library writes it; a reason too long for a
// control frame gives 1011 without one, as the library's does.
func closePayload(code int, reason string) []byte {
	if code == closeNoStatus {
		return nil
	}
	if len(reason) > 123 || !validCloseCode(code) {
		code, reason = closeInternalErr, ""
	}
	p := make([]byte, 2, 2+len(reason))
	binary.BigEndian.PutUint16(p, uint16(code))
	return append(p, reason...)
}

// controlFrame frames a server control frame (unmasked, final).
func controlFrame(op byte, payload []byte) []byte {
	f := make([]byte, 2, 2+len(payload))
	f[0] = 0x80 | op
	f[1] = byte(len(payload))
	return append(f, payload...)
}
