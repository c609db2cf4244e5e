package livesock

import (
	"bytes"
	"slices"
	"strings"
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

// maskedFrame is clientFrame with a mask key of its own, so that the
// reader's unmasking is checked too.
func maskedFrame(fin bool, opcode byte, payload []byte) []byte {
	f := clientFrame(fin, opcode, payload)
	f = slices.Clone(f[:len(f)-4-len(payload)]) // the header without its key
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	f = append(f, key[:]...)
	for i, b := range payload {
		f = append(f, b^key[i%4])
	}
	return f
}

// readEvent is one thing frameReader found.
type readEvent struct {
	kind    frameKind
	payload string
	code    int // a violation's close code
}

// readAll feeds stream to a new reader in pieces of the given sizes (the
// rest in one piece), until a violation.
func readAll(stream []byte, limit int64, sizes []int) []readEvent {
	r := frameReader{limit: limit}
	var got []readEvent
	for len(stream) > 0 {
		piece := stream
		if len(sizes) > 0 {
			piece = stream[:min(sizes[0], len(stream))]
			sizes = sizes[1:]
		}
		stream = stream[len(piece):]
		for len(piece) > 0 {
			n, kind, payload, err := r.next(piece)
			piece = piece[n:]
			if err != nil {
				return append(got, readEvent{code: err.code})
			}
			if kind != needMore {
				got = append(got, readEvent{kind: kind, payload: string(payload)})
			}
			if kind == gotRefused || kind == gotClose {
				return got
			}
		}
	}
	return got
}

// TestFrameReader: what the reader finds in a client's bytes, read whole
// and split at every byte boundary.
func TestFrameReader(t *testing.T) {
	long := strings.Repeat("x", 300)
	huge := strings.Repeat("y", 70_000)
	msg := func(s string) readEvent { return readEvent{kind: gotMessage, payload: s} }
	tests := []struct {
		name   string
		frames [][]byte
		limit  int64
		want   []readEvent
	}{
		{"text", [][]byte{maskedFrame(true, opText, []byte("hello"))}, 1 << 20, []readEvent{msg("hello")}},
		{"empty message", [][]byte{maskedFrame(true, opText, nil)}, 1 << 20, []readEvent{msg("")}},
		{"binary, 16- and 64-bit lengths",
			[][]byte{maskedFrame(true, opBinary, []byte(long)), maskedFrame(true, opText, []byte(huge))}, 1 << 20,
			[]readEvent{msg(long), msg(huge)}},
		{"fragments with control frames between",
			[][]byte{maskedFrame(false, opText, []byte("he")), maskedFrame(true, opPong, []byte("po")), maskedFrame(false, opContinuation, nil),
				maskedFrame(true, opPing, []byte("pi")), maskedFrame(true, opContinuation, []byte("llo"))}, 1 << 20,
			[]readEvent{{kind: gotPong, payload: "po"}, {kind: gotPing, payload: "pi"}, msg("hello")}},
		{"close with code and reason, then nothing more",
			[][]byte{maskedFrame(true, opClose, []byte("\x03\xe8bye")), maskedFrame(true, opText, []byte("after"))}, 1 << 20,
			[]readEvent{{kind: gotClose, payload: "\x03\xe8bye"}}},
		{"close without code", [][]byte{maskedFrame(true, opClose, nil)}, 1 << 20, []readEvent{{kind: gotClose}}},
		{"message at the limit", [][]byte{maskedFrame(true, opText, []byte("12345"))}, 5, []readEvent{msg("12345")}},
		{"message past the limit over fragments",
			[][]byte{maskedFrame(false, opText, []byte("123")), maskedFrame(true, opContinuation, []byte("456"))}, 5,
			[]readEvent{{code: closeTooBig}}},
		{"unmasked", [][]byte{{0x81, 0x02, 'h', 'i'}}, 1 << 20, []readEvent{{kind: gotRefused}}},
		{"reserved bit", [][]byte{append([]byte{0xC1}, maskedFrame(true, opText, []byte("x"))[1:]...)}, 1 << 20, []readEvent{{code: closeProtocol}}},
		{"unknown opcode", [][]byte{maskedFrame(true, 0x3, nil)}, 1 << 20, []readEvent{{code: closeProtocol}}},
		{"control frame too long", [][]byte{maskedFrame(true, opPing, []byte(long))}, 1 << 20, []readEvent{{code: closeProtocol}}},
		{"fragmented control frame", [][]byte{maskedFrame(false, opPing, nil)}, 1 << 20, []readEvent{{code: closeProtocol}}},
		{"continuation without a message", [][]byte{maskedFrame(true, opContinuation, []byte("x"))}, 1 << 20, []readEvent{{code: closeProtocol}}},
		{"message inside a message",
			[][]byte{maskedFrame(false, opText, []byte("a")), maskedFrame(true, opText, []byte("b"))}, 1 << 20,
			[]readEvent{{code: closeProtocol}}},
		{"close payload of one byte", [][]byte{maskedFrame(true, opClose, []byte{3})}, 1 << 20, []readEvent{{code: closeProtocol}}},
		{"close with a code no frame may carry", [][]byte{maskedFrame(true, opClose, []byte{0x03, 0xed})}, 1 << 20, []readEvent{{code: closeProtocol}}},
	}
	for _, tt := range tests {
		stream := bytes.Join(tt.frames, nil)
		if got := readAll(stream, tt.limit, nil); !slices.Equal(got, tt.want) {
			t.Errorf("%s, whole: got %v, want %v", tt.name, brief(got), brief(tt.want))
			continue
		}
		if len(stream) > 1000 {
			continue // every boundary of a long stream costs too much
		}
		for at := 1; at < len(stream); at++ {
			if got := readAll(stream, tt.limit, []int{at}); !slices.Equal(got, tt.want) {
				t.Errorf("%s, split at %d: got %v, want %v", tt.name, at, brief(got), brief(tt.want))
				break
			}
		}
		ones := make([]int, len(stream))
		for i := range ones {
			ones[i] = 1
		}
		if got := readAll(stream, tt.limit, ones); !slices.Equal(got, tt.want) {
			t.Errorf("%s, a byte at a time: got %v, want %v", tt.name, brief(got), brief(tt.want))
		}
	}
}

// brief shortens long payloads for a failure's message.
func brief(evs []readEvent) []readEvent {
	out := slices.Clone(evs)
	for i := range out {
		if len(out[i].payload) > 20 {
			out[i].payload = out[i].payload[:20] + "…"
		}
	}
	return out
}

// FuzzFrameReader: however the socket's reads cut a client's bytes, the
// reader finds the same messages, control frames and violations as when it
// reads them whole, and never a message past its limit. (What it finds is
// compared with coder/websocket's reading by FuzzClientBytes, through
// both engines.)
func FuzzFrameReader(f *testing.F) {
	f.Add(bytes.Join([][]byte{maskedFrame(false, opText, []byte("he")), maskedFrame(true, opPong, nil), maskedFrame(true, opContinuation, []byte("llo"))}, nil), []byte{3, 1, 7})
	f.Add(maskedFrame(true, opText, bytes.Repeat([]byte("x"), 300)), []byte{1, 200})
	f.Add(maskedFrame(true, opClose, []byte{3, 232, 'b'}), []byte{5})
	f.Add([]byte{0x81, 0x7f, 0, 0, 0, 0, 0, 0, 1, 0, 1, 2, 3, 4}, []byte{2})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		const limit = 512
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c) + 1
		}
		whole := readAll(stream, limit, nil)
		split := readAll(stream, limit, sizes)
		if !slices.Equal(whole, split) {
			t.Fatalf("whole: %v; split %v: %v", brief(whole), sizes, brief(split))
		}
		for _, ev := range whole {
			if ev.kind == gotMessage && len(ev.payload) > limit {
				t.Fatalf("a message of %d bytes passed the limit of %d", len(ev.payload), limit)
			}
		}
	})
}
