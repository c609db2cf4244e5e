package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

// maxWriteRecorder records an answer and the largest single write of its
// body.
type maxWriteRecorder struct {
	*httptest.ResponseRecorder
	largest int
}

func (m *maxWriteRecorder) Write(p []byte) (int, error) {
	m.largest = max(m.largest, len(p))
	return m.ResponseRecorder.Write(p)
}

// TestGetCurrentSnapshotStreams: GET /snapshot of a board whose current.md
// is not fresh answers today's Markdown, written in pieces of at most the
// large-read buffer's 64 KiB rather than in one piece the size of the
// board.
func TestGetCurrentSnapshotStreams(t *testing.T) {
	e := newEnv(t)
	alice := e.claim("alice@example.com", "big")
	var notes []board.Note
	for i := range 200 {
		notes = append(notes, board.Note{ID: fmt.Sprintf("n%03d", i), Content: strings.Repeat("text of a note ", 100)})
	}
	e.pushOK(alice, "big", notePush(notes...))
	st, err := e.db.BoardState(context.Background(), "big")
	if err != nil {
		t.Fatal(err)
	}
	want := changelog.RenderBoard(*st)
	if len(want) < 200<<10 {
		t.Fatalf("board renders to %d bytes; the test wants one far past the buffer", len(want))
	}

	req := e.newRequest(context.Background(), "GET", "/api/boards/big/snapshot", alice, nil)
	rec := &maxWriteRecorder{ResponseRecorder: httptest.NewRecorder()}
	e.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != string(want) {
		t.Fatalf("GET /snapshot = %d with %d bytes, want 200 with the %d bytes of RenderBoard", rec.Code, rec.Body.Len(), len(want))
	}
	if rec.largest > 64<<10 {
		t.Fatalf("largest write %d bytes, want at most 64 KiB", rec.largest)
	}
}

// TestCreateSnapshotPastSizeLimit: POST /snapshot of a board whose
// Markdown passes the snapshot size is a 413 naming "snapshot" and the
// limit; at the limit it is taken; taken again unchanged, it answers the
// same key.
func TestCreateSnapshotPastSizeLimit(t *testing.T) {
	e := newEnv(t)
	alice := e.claim("alice@example.com", "b1")
	e.pushOK(alice, "b1", notePush(board.Note{ID: "n1", Content: "hello"}))
	st, err := e.db.BoardState(context.Background(), "b1")
	if err != nil {
		t.Fatal(err)
	}
	size := len(changelog.RenderBoard(*st))

	e.cfg.changelog.MaxSnapshotBytes = size - 1
	e.restart()
	e.post("/api/boards/b1/snapshot", alice, nil).wantExactObject(t, http.StatusRequestEntityTooLarge, map[string]any{
		"error": fmt.Sprintf("This board's snapshot would be larger than %d bytes: delete notes or shorten them to take one.", size-1),
		"field": "snapshot", "limit": float64(size - 1),
	})

	e.cfg.changelog.MaxSnapshotBytes = size
	e.restart()
	first := e.post("/api/boards/b1/snapshot", alice, nil).wantObject(t, http.StatusOK)
	again := e.post("/api/boards/b1/snapshot", alice, nil).wantObject(t, http.StatusOK)
	if first["key"] == nil || again["key"] != first["key"] {
		t.Fatalf("snapshots of an unchanged board answered %v then %v, want the same key", first, again)
	}
}
