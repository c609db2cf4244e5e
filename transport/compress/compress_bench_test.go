package compress

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// benchWriter is a ResponseWriter that counts and drops what it is given.
type benchWriter struct {
	h http.Header
	n int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(int)             {}
func (w *benchWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// pullLikeJSON is about n bytes of a pull's JSON: notes of varied text.
func pullLikeJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"serverVersion":9,"notes":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"note-%d","title":"Title %d","content":"%s","x":%d,"y":%d,"w":240,"h":120,"color":"yellow","type":"sticky","updatedAt":"2026-11-27T01:%02d:00Z","version":%d}`,
			i, i*7, strings.Repeat(fmt.Sprintf("word%d ", i%97), 8), i*13%2000, i*17%1500, i%60, i)
	}
	return b.Bytes()[:n]
}

// BenchmarkCompressAnswers sends JSON answers of 20 bytes (a no-change
// pull), 100 KB and 21 MB (a full pull of a 100,000-note board) through
// Answers, written in 64 KiB pieces as the pull handler writes;
// out-B is what reaches the client. docs/benchmarks-log.md, "Compression".
func BenchmarkCompressAnswers(b *testing.B) {
	for _, size := range []int{20, 100 << 10, 21 << 20} {
		body := pullLikeJSON(size)
		h := Answers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for p := body; len(p) > 0; {
				n := min(len(p), 64<<10)
				_, _ = w.Write(p[:n])
				p = p[n:]
			}
		}))
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			req, _ := http.NewRequest("GET", "/api/boards/b/sync?since=0", nil)
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				clear(w.h)
				w.n = 0
				h.ServeHTTP(w, req)
			}
			b.ReportMetric(float64(w.n), "out-B")
		})
	}
}
