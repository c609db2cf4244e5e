package transport_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"corkboard/board"
)

// discardWriter is a ResponseWriter kept across a benchmark's requests, so
// that what is measured is the server's work and not a recorder's.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}

// BenchmarkPullNoChange is GET /api/boards/{id}/sync?since=N at the board's
// version, through the whole handler: request log (to a text handler that
// discards), cross-origin check, compression, session, board guard, room.
// The request, the writer and its header map are reused; everything else
// is the server's.
func BenchmarkPullNoChange(b *testing.B) {
	e := newEnv(b, withLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	ada := e.claim("ada@example.com", "roadmap")
	e.pushOK(ada, "roadmap", notePush(board.Note{ID: "n1", Title: "one"}))
	req := httptest.NewRequest(http.MethodGet, "/api/boards/roadmap/sync?since=1", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("Cookie", "session="+ada)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	w := &discardWriter{h: http.Header{}}
	serve := func() {
		clear(w.h)
		w.status, w.n = 0, 0
		e.api.ServeHTTP(w, req)
	}
	serve()
	if w.status != http.StatusOK || w.n != len(`{"serverVersion":1}`)+1 {
		b.Fatalf("answer: %d, %d bytes; want 200 {\"serverVersion\":1}", w.status, w.n)
	}
	b.ReportAllocs()
	for b.Loop() {
		serve()
	}
}
