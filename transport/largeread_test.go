package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/billing"
	"corkboard/board"
	"corkboard/persist/bolt"
	"corkboard/transport/livewire"
)

// stuckWriter is a client that has taken a pull's headers and stops
// reading: its first Write reports on entered and waits for unblock, so
// the pull holds its large-read slot until the test lets it go.
type stuckWriter struct {
	header  http.Header
	entered chan struct{}
	unblock chan struct{}
	once    sync.Once
}

func newStuckWriter(unblock chan struct{}) *stuckWriter {
	return &stuckWriter{header: http.Header{}, entered: make(chan struct{}), unblock: unblock}
}

func (w *stuckWriter) Header() http.Header { return w.header }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.unblock
	return len(p), nil
}

// holdPulls starts n full pulls of board id by session that are being
// sent (each holds a large-read slot) when it returns; the returned
// release lets them finish and returns once their handlers have (and so
// given their slots back). The test's end releases them too.
func (e *env) holdPulls(t *testing.T, session, id string, n int) (release func()) {
	t.Helper()
	return e.holdReads(t, session, "/api/boards/"+id+"/sync?since=0", n)
}

// holdReads is holdPulls for any GET of path.
func (e *env) holdReads(t *testing.T, session, path string, n int) (release func()) {
	t.Helper()
	unblock := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		w := newStuckWriter(unblock)
		req := e.newRequest(context.Background(), "GET", e.srv.URL+path, session, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.handler.ServeHTTP(w, req)
		}()
		<-w.entered
	}
	var once sync.Once
	release = func() {
		once.Do(func() { close(unblock) })
		wg.Wait()
	}
	t.Cleanup(release)
	return release
}

// bigBoard claims id for owner with enough notes that a full pull is
// larger than the gate's 64 KiB.
func bigBoard(t *testing.T, e *env, owner, id string) string {
	t.Helper()
	s := e.claim(owner, id)
	notes := make([]board.Note, 0, 300)
	for i := range cap(notes) {
		notes = append(notes, board.Note{ID: fmt.Sprintf("n%03d", i), Content: strings.Repeat("x", 300), Color: "yellow", Type: "note", UpdatedAt: "2026-11-26T09:00:00Z"})
	}
	e.pushOK(s, id, notePush(notes...))
	return s
}

func TestLargeReadGatePerUser(t *testing.T) {
	e := newEnv(t, withLargeReads(2, 10, time.Hour))
	alice := bigBoard(t, e, "alice@example.com", "big")
	bob := e.invite(alice, "big", "bob@example.com", billing.Free)
	e.claimAs(alice, "small")
	e.pushOK(alice, "small", notePush(board.Note{ID: "a", Color: "yellow", Type: "note", UpdatedAt: "2026-11-26T09:00:00Z"}))

	release := e.holdPulls(t, alice, "big", 2) // the person's 2 pass

	t.Run("ErrThirdOfOnePerson", func(t *testing.T) {
		r := e.do("GET", "/api/boards/big/sync?since=0", alice, nil)
		r.wantError(t, http.StatusTooManyRequests, "")
		if got := r.header.Get("Retry-After"); got != "2" {
			t.Fatalf("Retry-After=%q, want 2", got)
		}
	})
	t.Run("OtherPersonPasses", func(t *testing.T) {
		if got := len(e.pull(bob, "big", 0).Notes); got != 300 {
			t.Fatalf("bob's pull has %d notes, want 300", got)
		}
	})
	t.Run("SmallReadsPass", func(t *testing.T) {
		if got := len(e.pull(alice, "small", 0).Notes); got != 1 {
			t.Fatalf("small pull has %d notes, want 1", got)
		}
		e.do("GET", "/api/boards/big/sync?since=1", alice, nil).wantBody(t, http.StatusOK, `{"serverVersion":1}`)
	})
	t.Run("LiveCatchUpRefused", func(t *testing.T) {
		c, _ := e.connect(alice, "big", "?since=0")
		m := read(t, c)
		if m.Type != livewire.TypeError || m.Status != http.StatusTooManyRequests {
			t.Fatalf("after hello: %+v, want an error message with status 429", m)
		}
		ctx, cancel := context.WithTimeout(context.Background(), liveWait)
		defer cancel()
		_, _, err := c.Read(ctx)
		if got := websocket.CloseStatus(err); got != websocket.StatusTryAgainLater {
			t.Fatalf("read after the refusal: %v (close status %d), want close 1013", err, got)
		}
	})
	release()
	t.Run("PassesOnceFinished", func(t *testing.T) {
		if got := len(e.pull(alice, "big", 0).Notes); got != 300 {
			t.Fatalf("pull after the held ones finished has %d notes, want 300", got)
		}
	})
}

func TestLargeReadGateServer(t *testing.T) {
	// A wait of 1ns: the test's reads find the slots held until it lets
	// them go, so the wait's length does not decide anything here.
	e := newEnv(t, withLargeReads(10, 3, time.Nanosecond))
	alice := bigBoard(t, e, "alice@example.com", "big")
	bob := e.invite(alice, "big", "bob@example.com", billing.Free)

	release := e.holdPulls(t, alice, "big", 3) // the server's 3 pass

	t.Run("ErrFourth", func(t *testing.T) {
		r := e.do("GET", "/api/boards/big/sync?since=0", bob, nil)
		r.wantError(t, http.StatusServiceUnavailable, "")
		if got := r.header.Get("Retry-After"); got != "5" {
			t.Fatalf("Retry-After=%q, want 5", got)
		}
	})
	t.Run("LiveCatchUpRefused", func(t *testing.T) {
		c, _ := e.connect(bob, "big", "?since=0")
		if m := read(t, c); m.Type != livewire.TypeError || m.Status != http.StatusServiceUnavailable {
			t.Fatalf("after hello: %+v, want an error message with status 503", m)
		}
	})
	release()
	t.Run("PullAfter", func(t *testing.T) {
		if got := len(e.pull(bob, "big", 0).Notes); got != 300 {
			t.Fatalf("pull after the held ones finished has %d notes, want 300", got)
		}
	})
	t.Run("LiveCatchUpAfter", func(t *testing.T) {
		c, _ := e.connect(bob, "big", "?since=0")
		if m := read(t, c); m.Type != livewire.TypeChanges || len(m.Notes) != 300 {
			t.Fatalf("catch-up: type %q with %d notes, want changes with 300", m.Type, len(m.Notes))
		}
	})
}

// TestLargeReadGateThreshold: an answer of 65,535 bytes is sent while
// every slot is taken; one of 65,536 bytes is a large read and refused.
func TestLargeReadGateThreshold(t *testing.T) {
	e := newEnv(t, withLargeReads(1, 1, time.Nanosecond), withClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)))
	alice := bigBoard(t, e, "alice@example.com", "big")
	bob := e.login("bob@example.com")
	withContent := func(id string, n int) int {
		e.claimAs(bob, id)
		full := strings.Repeat("c", 30000) // the longest content a note may have
		e.pushOK(bob, id, notePush(
			board.Note{ID: "a", Content: full, Color: "yellow", Type: "note", UpdatedAt: "2026-11-26T09:00:00Z"},
			board.Note{ID: "b", Content: full, Color: "yellow", Type: "note", UpdatedAt: "2026-11-26T09:00:00Z"},
			board.Note{ID: "c", Content: strings.Repeat("c", n), Color: "yellow", Type: "note", UpdatedAt: "2026-11-26T09:00:00Z"}))
		return len(e.do("GET", "/api/boards/"+id+"/sync?since=0", bob, nil, http.Header{"Accept-Encoding": {"identity"}}).body)
	}
	size0 := withContent("probe", 0)
	below := withContent("edge1", 65535-size0)
	at := withContent("edge2", 65536-size0)
	if below != 65535 || at != 65536 {
		t.Fatalf("answers of %d and %d bytes, want 65535 and 65536", below, at)
	}

	e.holdPulls(t, alice, "big", 1) // the server's only slot
	e.do("GET", "/api/boards/edge1/sync?since=0", bob, nil).wantStatus(t, http.StatusOK)
	r := e.do("GET", "/api/boards/edge2/sync?since=0", bob, nil)
	r.wantError(t, http.StatusServiceUnavailable, "")
}

// TestLargePullEndsTheStoreReadBeforeTheClientReads: a client that takes
// a large pull's answer slowly must not hold the store's read open. On
// bbolt an open read keeps the file from growing, so a push that needs a
// larger file would wait for that client (up to the server's
// WriteTimeout, two minutes). Here the client reads nothing until the
// pushes that more than double the file are done.
func TestLargePullEndsTheStoreReadBeforeTheClientReads(t *testing.T) {
	e := newEnv(t)
	alice := bigBoard(t, e, "alice@example.com", "big")
	e.claimAs(alice, "other")
	release := e.holdPulls(t, alice, "big", 1)

	file := filepath.Join(e.dir, bolt.FileName)
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	grown := make(chan error, 1)
	go func() {
		// bbolt maps the file in powers of two: writing more than the
		// file's size makes it map a larger file.
		for i := 0; int64(i)*400*1024 < 2*st.Size(); i++ {
			notes := make([]board.Note, 0, 400)
			for j := range cap(notes) {
				notes = append(notes, board.Note{ID: fmt.Sprintf("g%03d-%03d", i, j), Content: strings.Repeat("y", 1000), Color: "yellow", Type: "note", UpdatedAt: "2026-11-26T09:00:00Z"})
			}
			if code, body := e.push(alice, "other", notePush(notes...)); code != http.StatusOK {
				grown <- fmt.Errorf("push %d: %d %v", i, code, body)
				return
			}
		}
		grown <- nil
	}()
	select {
	case err := <-grown:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		release() // lets the pushes through, so that the test can end
		t.Fatal("the pushes that grow the file waited for a client still reading a pull")
	}
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() <= st.Size() {
		t.Fatalf("the file did not grow (%d → %d bytes): the test proves nothing", st.Size(), after.Size())
	}
	release()
	left, err := os.ReadDir(e.spoolDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("the pull left %d spool files behind", len(left))
	}
	if got := len(e.pull(alice, "big", 0).Notes); got != 300 {
		t.Fatalf("pull has %d notes, want 300", got)
	}
}

// TestLargeMarkdownExportTakesASlot: a board's current Markdown larger
// than 64 KiB is a large read like a pull: it takes a slot of the gate
// (the same slots), and is answered whole once one is free.
func TestLargeMarkdownExportTakesASlot(t *testing.T) {
	e := newEnv(t, withLargeReads(2, 10, time.Hour))
	alice := bigBoard(t, e, "alice@example.com", "big")
	want := e.do("GET", "/api/boards/big/snapshot", alice, nil)
	want.wantStatus(t, http.StatusOK)
	if len(want.body) < 64<<10 {
		t.Fatalf("the export is %d bytes: too small to be a large read", len(want.body))
	}
	release := e.holdReads(t, alice, "/api/boards/big/snapshot?download=1", 2)

	r := e.do("GET", "/api/boards/big/snapshot", alice, nil)
	r.wantError(t, http.StatusTooManyRequests, "")
	if got := r.header.Get("Retry-After"); got != "2" {
		t.Fatalf("Retry-After=%q, want 2", got)
	}
	e.do("GET", "/api/boards/big/sync?since=0", alice, nil).wantError(t, http.StatusTooManyRequests, "")
	release()
	got := e.do("GET", "/api/boards/big/snapshot", alice, nil)
	got.wantStatus(t, http.StatusOK)
	if string(got.body) != string(want.body) {
		t.Fatalf("the export after the held ones differs: %d bytes, want %d", len(got.body), len(want.body))
	}
	if ct := got.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") {
		t.Fatalf("Content-Type %q", ct)
	}
	if left, _ := os.ReadDir(e.spoolDir()); len(left) != 0 {
		t.Fatalf("the exports left %d spool files behind", len(left))
	}
}
