package transport_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/transport"
)

// adversarialPush builds a push body of about size bytes in one of the
// shapes that made the old decoder blow up, or that cost the most heap per
// byte now. accepted tells whether a server takes it.
func adversarialPush(shape string, size int) (body []byte, accepted bool) {
	var b bytes.Buffer
	b.Grow(size + 64)
	// fill repeats elem, separated by commas, until the body is size long.
	fill := func(elem string) {
		for first := true; b.Len() < size-8; first = false {
			if !first {
				b.WriteByte(',')
			}
			b.WriteString(elem)
		}
	}
	switch shape {
	case "empty-objects": // the 64 MiB body: refused at the 501st note
		b.WriteString(`{"notes":{"upserted":[`)
		fill(`{}`)
		b.WriteString(`]}}`)
	case "one-char-ids": // refused at the 5,001st ID
		b.WriteString(`{"notes":{"deleted":[`)
		fill(`"a"`)
		b.WriteString(`]}}`)
	case "one-char-strings": // an unknown envelope key, read through
		b.WriteString(`{"x":[`)
		fill(`"a"`)
		b.WriteString(`]}`)
	case "deep-nesting": // 99 levels, the most that is legal, again and again
		b.WriteString(`{"x":[`)
		fill(strings.Repeat("[", 98) + strings.Repeat("]", 98))
		b.WriteString(`]}`)
	case "many-keys": // one object of distinct keys, checked for duplicates
		b.WriteString(`{"x":{`)
		for i := 0; b.Len() < size-16; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%x":0`, i)
		}
		b.WriteString(`}}`)
	case "small-extras": // 500 notes of 32 one-character extra fields, then padding
		b.WriteString(`{"notes":{"upserted":[`)
		for i := range board.MaxUpsertedNotes {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"n%d"`, i)
			for j := range board.MaxExtraFields {
				fmt.Fprintf(&b, `,"%c%d":"a"`, 'a'+j%26, j)
			}
			b.WriteByte('}')
		}
		b.WriteString(`]},"pad":[`)
		fill(`"a"`)
		b.WriteString(`]}`)
	default:
		panic(shape)
	}
	return b.Bytes(), shape != "empty-objects" && shape != "one-char-ids"
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// BenchmarkDecodePushAdversarial decodes push bodies of 1, 8 and 64 MiB in
// adversarial shapes. Besides B/op it reports heap-B/body-B (bytes
// allocated per byte of body) and read/body (the share of the body read
// before the answer). docs/benchmarks.md records the figures.
func BenchmarkDecodePushAdversarial(b *testing.B) {
	for _, shape := range []string{"empty-objects", "one-char-ids", "one-char-strings", "deep-nesting", "many-keys", "small-extras"} {
		for _, mib := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/%dMiB", shape, mib), func(b *testing.B) {
				body, accepted := adversarialPush(shape, mib<<20)
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				read := 0
				for b.Loop() {
					r := &countingReader{r: bytes.NewReader(body)}
					_, err := transport.DecodePushForTest(r)
					if (err == nil) != accepted {
						b.Fatalf("err=%v, want accepted=%v", err, accepted)
					}
					read = r.n
				}
				runtime.ReadMemStats(&after)
				perOp := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
				b.ReportMetric(perOp/float64(len(body)), "heap-B/body-B")
				b.ReportMetric(float64(read)/float64(len(body)), "read/body")
			})
		}
	}
}

// TestHugeBodyOfEmptyObjectsStopsEarly: the 64 MiB push of empty
// objects (which took the old decoder past 9 GB) is refused after reading
// and allocating little.
func TestHugeBodyOfEmptyObjectsStopsEarly(t *testing.T) {
	body, _ := adversarialPush("empty-objects", 64<<20)
	r := &countingReader{r: bytes.NewReader(body)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := transport.DecodePushForTest(r)
	runtime.ReadMemStats(&after)
	if code := board.ErrorCode(err); code != board.EINVALID {
		t.Fatalf("err=%v, want EINVALID", err)
	}
	if r.n > 64<<10 {
		t.Fatalf("read %d bytes of %d before refusing, want at most 64 KiB", r.n, len(body))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("allocated %d bytes to refuse it, want at most 1 MiB", alloc)
	}
}

// TestAdversarialBodiesStayProportional: whatever its shape, a body needs
// heap of a small multiple of its size (docs/api.md).
func TestAdversarialBodiesStayProportional(t *testing.T) {
	if testing.Short() {
		t.Skip("8 MiB bodies")
	}
	for _, shape := range []string{"one-char-strings", "deep-nesting", "many-keys", "small-extras"} {
		body, _ := adversarialPush(shape, 8<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := transport.DecodePushForTest(bytes.NewReader(body)); err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		runtime.ReadMemStats(&after)
		if ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(body)); ratio > 4 {
			t.Errorf("%s: %.2f bytes of heap per byte of body, want at most 4", shape, ratio)
		}
	}
}

// typicalPush is a push of n notes and n tracker items with every field
// Corkboard knows set, as an editor sends after a paste: the shape where the
// per-key work of the decoder, not the tokenizer, is the largest share.
func typicalPush(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"clientVersion":41,"board":{"name":"Plan","updatedAt":"2026-11-27T01:00:00Z"},"notes":{"upserted":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"note-%d","title":"Title %d","content":"Some content of the note, a line or two of text.","x":%d.5,"y":%d,"w":240,"h":120,"color":"yellow","type":"note","updatedAt":"2026-11-27T01:00:00Z","version":%d,"deletedAt":null,"baseVersion":40}`, i, i, i*10, i*7, i)
	}
	b.WriteString(`],"deleted":["a","b"]},"trackerItems":{"upserted":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"item-%d","key":"CB-%d","type":"task","summary":"Do the thing","description":"Longer text.","status":"todo","parentId":"","updatedAt":"2026-11-27T01:00:00Z","version":%d,"baseVersion":40}`, i, i, i)
	}
	b.WriteString(`],"deleted":[]}}`)
	return b.Bytes()
}

// BenchmarkDecodePushTypical decodes a valid push of 500 notes and 500
// tracker items with every known field set.
func BenchmarkDecodePushTypical(b *testing.B) {
	body := typicalPush(board.MaxUpsertedNotes)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p, err := transport.DecodePushForTest(bytes.NewReader(body))
		if err != nil || len(p.Notes.Upserted) != board.MaxUpsertedNotes {
			b.Fatalf("err=%v, %d notes", err, len(p.Notes.Upserted))
		}
	}
}
