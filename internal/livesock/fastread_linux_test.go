package livesock

import (
	"bytes"
	"sync/atomic"
	"testing"
)

// clientFrame is one masked client frame (RFC 6455 section 5.2) with a
// zero mask key, so its payload reads as it is.
func clientFrame(fin bool, opcode byte, payload []byte) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	f := []byte{b0}
	switch n := len(payload); {
	case n <= 125:
		f = append(f, 0x80|byte(n))
	case n <= 0xffff:
		f = append(f, 0x80|126, byte(n>>8), byte(n))
	default:
		f = append(f, 0x80|127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	f = append(f, 0, 0, 0, 0) // mask key
	return append(f, payload...)
}

// TestPongFilter: the client's pongs are taken out of the stream wherever
// the reads split it, everything else passes unchanged, and whole
// messages and control frames are counted.
func TestPongFilter(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 300)
	huge := bytes.Repeat([]byte("y"), 70_000)
	tests := []struct {
		name             string
		frames           [][]byte
		want             [][]byte // the frames that pass
		pongs            bool
		messages, others uint64
		partialAfter     bool
	}{
		{"pong alone", [][]byte{clientFrame(true, 0xA, nil)}, nil, true, 0, 0, false},
		{"pong with payload between messages",
			[][]byte{clientFrame(true, 0x1, []byte("a")), clientFrame(true, 0xA, []byte("abc")), clientFrame(true, 0x1, long)},
			[][]byte{clientFrame(true, 0x1, []byte("a")), clientFrame(true, 0x1, long)}, true, 2, 0, false},
		{"fragmented message with a pong inside",
			[][]byte{clientFrame(false, 0x1, []byte("he")), clientFrame(true, 0xA, nil), clientFrame(true, 0x0, []byte("llo"))},
			[][]byte{clientFrame(false, 0x1, []byte("he")), clientFrame(true, 0x0, []byte("llo"))}, true, 1, 0, false},
		{"first fragment only",
			[][]byte{clientFrame(false, 0x2, []byte("he"))},
			[][]byte{clientFrame(false, 0x2, []byte("he"))}, false, 0, 0, true},
		{"64-bit length, then close",
			[][]byte{clientFrame(true, 0x2, huge), clientFrame(true, 0x8, []byte{3, 232})},
			[][]byte{clientFrame(true, 0x2, huge), clientFrame(true, 0x8, []byte{3, 232})}, false, 1, 1, false},
		{"ping passes", [][]byte{clientFrame(true, 0x9, []byte("p"))}, [][]byte{clientFrame(true, 0x9, []byte("p"))}, false, 0, 1, false},
	}
	for _, tt := range tests {
		in := bytes.Join(tt.frames, nil)
		want := bytes.Join(tt.want, nil)
		// Every split of the stream into two reads, and one byte a read.
		splits := []int{}
		for k := 0; k <= len(in) && k < 400; k++ {
			splits = append(splits, k)
		}
		for _, k := range append(splits, -1) {
			var ponged atomic.Bool
			f := pongFilter{pong: func() { ponged.Store(true) }}
			var out []byte
			if k < 0 {
				for i := range in {
					out = append(out, f.filter([]byte{in[i]})...)
				}
			} else {
				buf := bytes.Clone(in)
				out = append(out, f.filter(buf[:k])...)
				out = append(out, f.filter(buf[k:])...)
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("%s, split %d: passed %d bytes, want %d", tt.name, k, len(out), len(want))
			}
			if ponged.Load() != tt.pongs || f.messages != tt.messages || f.others != tt.others || f.partial() != tt.partialAfter {
				t.Fatalf("%s, split %d: ponged %v messages %d others %d partial %v; want %v %d %d %v",
					tt.name, k, ponged.Load(), f.messages, f.others, f.partial(), tt.pongs, tt.messages, tt.others, tt.partialAfter)
			}
		}
	}
}

// TestFilterConnControlAfterMessage: after the library's Read returned a
// message, the poller calls Read again for a close or ping frame that came
// after that message's last frame (the library has not handled it), and
// not for one that came before it (the library has). A close read in the
// same burst as a push used to wait for the client's next bytes.
func TestFilterConnControlAfterMessage(t *testing.T) {
	msg := clientFrame(true, 0x1, []byte(`{"type":"ping"}`))
	closing := clientFrame(true, 0x8, []byte{0x03, 0xe8})
	ping := clientFrame(true, 0x9, nil)
	for _, tt := range []struct {
		name     string
		stream   []byte
		readMore bool // after the message was read
	}{
		{"CloseAfter", bytes.Join([][]byte{msg, closing}, nil), true},
		{"PingAfter", bytes.Join([][]byte{msg, ping}, nil), true},
		{"PingBefore", bytes.Join([][]byte{ping, msg}, nil), false},
		{"PingBetweenFragments", bytes.Join([][]byte{clientFrame(false, 0x1, []byte("a")), ping, clientFrame(true, 0x0, []byte("b"))}, nil), false},
		{"MessageOnly", msg, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rest := tt.stream
			readNB := func(p []byte) (int, error) {
				if len(rest) == 0 {
					return 0, errWouldBlock
				}
				n := copy(p, rest)
				rest = rest[n:]
				return n, nil
			}
			c := &filterConn{}
			if read, ok := c.pollRead(readNB); !read || !ok {
				t.Fatalf("pollRead = %t, %t before the message was read, want true, true", read, ok)
			}
			c.messageRead() // the library's Read returned the message
			if read, ok := c.pollRead(readNB); read != tt.readMore || !ok {
				t.Fatalf("pollRead = %t, %t after the message was read, want %t, true", read, ok, tt.readMore)
			}
		})
	}
}
