package aihttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"corkboard/ai"
	"corkboard/board"
	"corkboard/transport/compress"
)

// lockedBuffer is a bytes.Buffer the server's error log may write from
// any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTextStreamCutIsVisible: a plain text answer that fails after its
// first byte keeps what arrived and makes the client's read fail, over
// HTTP/1.1 and HTTP/2, through the compression and deadline middleware the
// routes use, without a stack trace in the server's log; a complete answer
// ends cleanly. The handler sends its error only after the client has read
// the first text, so the client has seen the partial answer as a stream.
func TestTextStreamCutIsVisible(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		for _, cut := range []bool{true, false} {
			name := proto + "/complete"
			if cut {
				name = proto + "/cut"
			}
			t.Run(name, func(t *testing.T) { checkTextStreamEnd(t, proto, cut) })
		}
	}
}

// checkTextStreamEnd serves one answer over proto, cut after its first
// text or not, and checks what the client reads and the server logs.
func checkTextStreamEnd(t *testing.T, proto string, cut bool) {
	firstRead := make(chan struct{})
	srv := httptest.NewUnstartedServer(compress.Answers(aiWriteDeadlines(textStreamHandler(t, cut, firstRead))))
	var errLog lockedBuffer
	srv.Config.ErrorLog = log.New(&errLog, "", 0)
	if proto == "HTTP/2.0" {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	defer srv.Close()

	req, err := http.NewRequestWithContext(context.Background(), "POST", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Proto != proto {
		t.Fatalf("proto %s, want %s", res.Proto, proto)
	}
	first := make([]byte, len("TITLE: A\n---\n"))
	if _, err := io.ReadFull(res.Body, first); err != nil {
		t.Fatalf("first text: %v", err)
	}
	close(firstRead)
	rest, err := io.ReadAll(res.Body)
	got := string(first) + string(rest)
	if cut {
		if err == nil {
			t.Fatalf("read of a cut answer ended cleanly with %q", got)
		}
		if proto == "HTTP/1.1" && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read error %v, want unexpected EOF", err)
		}
		if got != "TITLE: A\n---\nBody so far" {
			t.Errorf("kept %q", got)
		}
	} else if err != nil || got != "TITLE: A\n---\nThe whole body." {
		t.Errorf("complete answer: %q, %v", got, err)
	}
	res.Body.Close()
	srv.Close() // waits for the handler, so the log is complete
	if s := errLog.String(); s != "" {
		t.Errorf("server logged %q", s)
	}
}

// textStreamHandler streams an answer's first text, waits until the
// client has read it (firstRead), then either finishes the answer or, when
// cut, sends more text and fails.
func textStreamHandler(t *testing.T, cut bool, firstRead <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ts := newTextStream(w)
		for _, e := range []ai.Event{{Kind: ai.EventStart, MessageID: "m1"}, {Kind: ai.EventText, Delta: "TITLE: A\n---\n"}} {
			if err := ts.Event(ctx, e); err != nil {
				t.Error(err)
				return
			}
		}
		select {
		case <-firstRead:
		case <-ctx.Done():
			return
		}
		last := ai.Event{Kind: ai.EventFinish}
		if cut {
			if err := ts.Event(ctx, ai.Event{Kind: ai.EventText, Delta: "Body so far"}); err != nil {
				t.Error(err)
			}
			last = ai.Event{Kind: ai.EventError, Err: board.Errorf(board.EUPSTREAM, "AI model error: model crashed.")}
		} else {
			if err := ts.Event(ctx, ai.Event{Kind: ai.EventText, Delta: "The whole body."}); err != nil {
				t.Error(err)
			}
		}
		if err := ts.Event(ctx, last); err != nil {
			t.Error(err)
		}
		ts.abortIfFailed()
	}
}
