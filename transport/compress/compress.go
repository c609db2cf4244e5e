// Package compress gzips the API's JSON and Markdown answers (klauspost/compress's
// gzhttp, with the size, level and content types chosen for Corkboard).
package compress

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compressMinSize is the size below which an answer is sent as is: gzip's
// header and the CPU cost are not worth it for a small JSON answer (a
// no-change pull is 20 bytes).
const compressMinSize = 1024

// compressLevel is gzip's level 6, the standard library's default: with
// klauspost/compress's encoder it costs about a third of the CPU of
// compress/gzip's for output within 6 % of its size (docs/benchmarks-log.md,
// "Compression").
const compressLevel = 6

// gzipAnswers is klauspost/compress's gzhttp (docs/benchmarks-log.md,
// "Compression", has the comparison that chose it over our own middleware
// and chi's): only JSON and Markdown answers are compressed, so the AI
// streams (text/event-stream, text/plain) never are, and leave at each
// flush (gzhttp holds a stream's first bytes until a flush or 1 KiB; their
// writers flush every event); no zstd, which no client of ours asks for.
var gzipAnswers = mustWrapper(gzhttp.NewWrapper(
	gzhttp.MinSize(compressMinSize),
	gzhttp.CompressionLevel(compressLevel),
	gzhttp.ContentTypeFilter(compressible),
	gzhttp.EnableZstd(false),
))

// compressible reports whether answers of this content type are compressed.
// A prefix test rather than gzhttp.ContentTypes, which parses the media type
// of every answer (about a tenth of what the middleware costs a small one).
func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "application/json") || strings.HasPrefix(ctype, "text/markdown")
}

// mustWrapper panics on options gzhttp refuses: constants above, so a
// mistake shows in every test run.
func mustWrapper(wrap func(http.Handler) http.HandlerFunc, err error) func(http.Handler) http.HandlerFunc {
	if err != nil {
		panic(fmt.Sprintf("compress: gzhttp options: %v", err))
	}
	return wrap
}

// Answers gzips JSON and Markdown answers of at least 1 KiB when the
// client accepts gzip; a full pull of a large board shrinks about tenfold.
// WebSocket upgrades are never wrapped: the socket hijacks the connection,
// and its writer takes the hijacked connection's own deadlines.
func Answers(next http.Handler) http.Handler {
	gz := gzipAnswers(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}
