package livesock

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
	"testing"
)

// refFilter is pongFilter's reference: it reads the whole stream at once,
// frame after frame, and gives what must pass (every byte of every frame
// but the pongs, a frame cut short included) and the counts pongFilter
// keeps. It shares no code with pongFilter.
type refFilter struct {
	out              []byte
	pongs            int
	messages, others uint64
	partial          bool
}

func refFiltered(stream []byte) refFilter {
	var r refFilter
	inMessage := false
	for len(stream) > 0 {
		op := stream[0] & 0x0f
		fin := stream[0]&0x80 != 0
		pong := stream[0] == 0x8A // final, no reserved bit: pongFilter takes only these out
		hdr := 2
		var length uint64
		complete := len(stream) >= 2
		if complete {
			switch n := stream[1] & 0x7f; n {
			case 126:
				hdr += 2
			case 127:
				hdr += 8
			default:
				length = uint64(n)
			}
			if stream[1]&0x80 != 0 {
				hdr += 4
			}
		}
		if !complete || len(stream) < hdr {
			// A header cut short: its bytes pass unless it is a pong's.
			if !pong {
				r.out = append(r.out, stream...)
			}
			r.partial = true
			return r
		}
		switch stream[1] & 0x7f {
		case 126:
			length = uint64(binary.BigEndian.Uint16(stream[2:4]))
		case 127:
			length = binary.BigEndian.Uint64(stream[2:10])
		}
		if uint64(len(stream)-hdr) < length {
			if !pong {
				r.out = append(r.out, stream...)
			}
			r.partial = true
			return r
		}
		end := hdr + int(length)
		frame := stream[:end]
		stream = stream[end:]
		switch {
		case pong:
			if frame[1]&0x80 != 0 && frame[1]&0x7f <= 125 { // masked, a control frame's length
				r.pongs++
			}
			continue
		case op >= 0x8:
			r.others++
		case fin:
			r.messages++
			inMessage = false
		default:
			inMessage = true
		}
		r.out = append(r.out, frame...)
	}
	r.partial = inMessage
	return r
}

// FuzzPongFilter: whatever the client sends (frames or garbage) and
// however the reads split it, pongFilter passes exactly what the
// reference passes and counts the same messages, control frames and
// pongs. splits gives the reads' sizes, one byte each (0 is a read of 1
// byte), cycling.
func FuzzPongFilter(f *testing.F) {
	seed := func(frames ...[]byte) []byte { return bytes.Join(frames, nil) }
	f.Add(seed(clientFrame(true, 0x1, []byte("hello")), clientFrame(true, 0xA, []byte("p")), clientFrame(true, 0x8, []byte{3, 232})), []byte{3})
	f.Add(seed(clientFrame(false, 0x2, bytes.Repeat([]byte("a"), 200)), clientFrame(true, 0x9, nil), clientFrame(true, 0x0, []byte("z"))), []byte{0, 7, 130})
	f.Add(seed(clientFrame(true, 0x2, bytes.Repeat([]byte("b"), 70_000)), clientFrame(true, 0xA, nil)), []byte{255, 1})
	f.Add([]byte{0x8a, 0xfe, 0x00}, []byte{0})                   // a pong header cut short
	f.Add([]byte{0x81, 0x7f, 0xff, 0xff, 0xff, 0xff}, []byte{1}) // a 64-bit length cut short
	f.Fuzz(func(t *testing.T, stream, splits []byte) {
		want := refFiltered(stream)
		var ponged atomic.Bool
		pf := pongFilter{pong: func() { ponged.Store(true) }}
		buf := bytes.Clone(stream)
		var out []byte
		for i, k := 0, 0; i < len(buf); k++ {
			n := 1
			if len(splits) > 0 {
				n = int(splits[k%len(splits)]) + 1
			}
			n = min(n, len(buf)-i)
			out = append(out, pf.filter(buf[i:i+n])...)
			i += n
		}
		if !bytes.Equal(out, want.out) {
			t.Fatalf("passed %d bytes, the reference %d (first difference at %d)", len(out), len(want.out), firstDiff(out, want.out))
		}
		if pf.messages != want.messages || pf.others != want.others || pf.partial() != want.partial || ponged.Load() != (want.pongs > 0) {
			t.Fatalf("messages %d others %d partial %v ponged %v; reference %d %d %v %v",
				pf.messages, pf.others, pf.partial(), ponged.Load(), want.messages, want.others, want.partial, want.pongs > 0)
		}
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
