package aihttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"corkboard/ai"
)

// textStream renders an ai answer as a plain text stream
// (text/plain; charset=utf-8, read by useCompletion's 'text' protocol): the
// ai.Sink of note-ai and its commands. Only the text is written, each piece
// flushed as it comes; reasoning and tool calls have no place in the
// format. Nothing is written before ai.EventStart, so until then the
// handler can still answer a JSON error. The route's aiWriteDeadlines
// bounds every write.
//
// The format has no place for an error either, so an answer that fails
// after it began is cut: the handler calls abortIfFailed, which ends the
// response without its end (no final chunk over HTTP/1.1, a reset stream
// over HTTP/2). The client keeps what arrived, and its read fails instead
// of ending cleanly, so it can tell a cut answer from a complete one.
type textStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	failed  bool
	err     error
}

var _ ai.Sink = (*textStream)(nil)

func newTextStream(w http.ResponseWriter) *textStream {
	return &textStream{w: w, rc: http.NewResponseController(w)}
}

// Event renders one event and returns the first write error, which stops
// the answer.
func (t *textStream) Event(_ context.Context, e ai.Event) error {
	if t.err != nil {
		return t.err
	}
	switch e.Kind {
	case ai.EventStart:
		if !t.started {
			t.started = true
			h := t.w.Header()
			h.Set("Content-Type", "text/plain; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no")
			h.Set("X-Content-Type-Options", "nosniff")
			t.w.WriteHeader(http.StatusOK)
		}
	case ai.EventError:
		t.failed = t.started
	case ai.EventText:
		if !t.started {
			return fmt.Errorf("aihttp: text stream: %s event before start", e.Kind)
		}
		if _, err := io.WriteString(t.w, e.Delta); err != nil {
			t.err = fmt.Errorf("aihttp: write text stream: %w", err)
			return t.err
		}
		if err := t.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			t.err = fmt.Errorf("aihttp: flush text stream: %w", err)
		}
	}
	return t.err
}

// abortIfFailed cuts the response when the answer failed after it began
// (see textStream); it returns when the answer is complete, was never
// started (the handler answers a JSON error) or the client is gone.
// Panicking with http.ErrAbortHandler is how net/http lets a handler abort
// a response it has begun: the server drops the connection (or resets the
// HTTP/2 stream) without the terminating chunk and logs no stack trace;
// transport's recoverPanics passes it on, and the middleware that must run
// on the way out (the credits gate's refund) does so in defers.
func (t *textStream) abortIfFailed() {
	if !t.failed || t.err != nil {
		return
	}
	// What was written is flushed already; flush once more in case a
	// middleware (compression) still holds some of it.
	_ = t.rc.Flush()
	panic(http.ErrAbortHandler)
}
