package transport

import (
	"bufio"
	"compress/gzip"
	"net"
	"net/http"
	"strings"
	"sync"
)

// compressMinSize is the size below which an answer is sent as is: gzip's
// header and the CPU cost are not worth it for a small JSON answer.
const compressMinSize = 1024

// gzipWriters recycles gzip writers (each holds ~800 KB of tables).
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return zw
}}

// compressAnswers gzips JSON and Markdown answers of at least 1 KiB when the
// client accepts gzip. A full pull of a large board shrinks about tenfold.
// WebSocket upgrades are never wrapped (the socket hijacks the connection),
// and streams (text/event-stream, text/plain) pass through untouched and
// unbuffered: only the content types below are compressed.
func compressAnswers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || !acceptsGzip(r) {
			next.ServeHTTP(w, r)
			return
		}
		if h := w.Header(); h["Vary"] == nil {
			h["Vary"] = varyAcceptEncoding
		} else {
			h.Add("Vary", "Accept-Encoding")
		}
		cw := compressWriters.Get().(*compressWriter)
		*cw = compressWriter{ResponseWriter: w, buf: cw.buf[:0]}
		defer func() {
			cw.finish()
			cw.ResponseWriter = nil
			if cap(cw.buf) > 4*compressMinSize {
				cw.buf = nil // one large first write must not pin its buffer
			}
			compressWriters.Put(cw)
		}()
		next.ServeHTTP(cw, r)
	})
}

// varyAcceptEncoding is the Vary value of every answer that could have been
// compressed, shared so that setting it allocates nothing; net/http only
// reads it, and Header.Add copies before appending to a full slice.
var varyAcceptEncoding = []string{"Accept-Encoding"}

// compressWriters recycle the per-request writers and their buffers: the
// handler is done with its writer when it returns.
var compressWriters = sync.Pool{New: func() any { return &compressWriter{buf: make([]byte, 0, compressMinSize)} }}

// compressible reports whether answers of this content type are compressed.
func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "application/json") || strings.HasPrefix(ctype, "text/markdown")
}

// compressWriter buffers the first compressMinSize bytes of a compressible
// answer, then decides: a short answer is written as is, a longer one goes
// through gzip.
type compressWriter struct {
	http.ResponseWriter
	status   int
	decided  bool // headers are out (plain or gzip)
	eligible bool // compressible answer, still buffering
	buf      []byte
	zw       *gzip.Writer
}

func (c *compressWriter) WriteHeader(status int) {
	if c.status != 0 || c.decided {
		return
	}
	if status < 200 || status == http.StatusNoContent || status == http.StatusNotModified {
		c.ResponseWriter.WriteHeader(status)
		if status >= 200 {
			c.decided = true
		}
		return
	}
	c.status = status
	h := c.Header()
	if h.Get("Content-Encoding") == "" && compressible(h.Get("Content-Type")) {
		c.eligible = true
		return
	}
	c.decided = true
	c.ResponseWriter.WriteHeader(status)
}

func (c *compressWriter) Write(p []byte) (int, error) {
	if c.status == 0 && !c.decided {
		c.WriteHeader(http.StatusOK)
	}
	switch {
	case c.zw != nil:
		return c.zw.Write(p)
	case c.decided:
		return c.ResponseWriter.Write(p)
	}
	c.buf = append(c.buf, p...)
	if len(c.buf) >= compressMinSize {
		if err := c.startGzip(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// startGzip sends the headers of a gzipped answer and what was buffered.
func (c *compressWriter) startGzip() error {
	h := c.Header()
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	c.decided, c.eligible = true, false
	c.ResponseWriter.WriteHeader(c.status)
	c.zw = gzipWriters.Get().(*gzip.Writer)
	c.zw.Reset(c.ResponseWriter)
	_, err := c.zw.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// writePlain sends the headers and the buffered bytes uncompressed.
func (c *compressWriter) writePlain() {
	c.decided, c.eligible = true, false
	c.ResponseWriter.WriteHeader(c.status)
	if len(c.buf) > 0 {
		_, _ = c.ResponseWriter.Write(c.buf)
	}
	c.buf = c.buf[:0]
}

// finish ends the answer: flushes a short buffered answer as is, or closes
// the gzip stream.
func (c *compressWriter) finish() {
	switch {
	case c.zw != nil:
		_ = c.zw.Close()
		gzipWriters.Put(c.zw)
		c.zw = nil
	case c.eligible:
		c.writePlain()
	}
}

// Flush sends what is buffered now: a handler that flushes wants its bytes
// to leave.
func (c *compressWriter) Flush() {
	if c.eligible {
		if err := c.startGzip(); err != nil {
			return
		}
	}
	if c.zw != nil {
		_ = c.zw.Flush()
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over (never for a compressed answer).
func (c *compressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if hj, ok := c.ResponseWriter.(http.Hijacker); ok && !c.decided && !c.eligible {
		return hj.Hijack()
	}
	return nil, nil, http.ErrNotSupported
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (c *compressWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// acceptsGzip reports whether r's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			return !strings.HasPrefix(q, "q=0") || strings.Trim(strings.TrimPrefix(q, "q=0"), ".0") != ""
		}
	}
	return false
}
