package aihttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/board"
)

// brokenWriter is a response whose body writes fail after n bytes, as a
// connection to a client that went away does.
type brokenWriter struct {
	*httptest.ResponseRecorder
	n int
}

var errBroken = errors.New("broken pipe")

func (b *brokenWriter) Write(p []byte) (int, error) {
	if b.ResponseRecorder.Body.Len()+len(p) > b.n {
		return 0, errBroken
	}
	return b.ResponseRecorder.Write(p)
}

// WriteString hides the recorder's own, which would bypass Write.
func (b *brokenWriter) WriteString(s string) (int, error) { return b.Write([]byte(s)) }

// TestAIStreamRenderers_WriteError: the first failed write is what Event
// returns, so that ai stops the model, and nothing is written after it.
func TestAIStreamRenderers_WriteError(t *testing.T) {
	tests := []struct {
		name string
		sink func(w http.ResponseWriter) ai.Sink
	}{
		{"UIMessageStream", func(w http.ResponseWriter) ai.Sink { return newUIMessageStream(w) }},
		{"TextStream", func(w http.ResponseWriter) ai.Sink { return newTextStream(w) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Room for the start of the answer, not for the first text.
			w := &brokenWriter{ResponseRecorder: httptest.NewRecorder(), n: 80}
			sink := tt.sink(w)
			ctx := context.Background()
			if err := sink.Event(ctx, ai.Event{Kind: ai.EventStart, MessageID: "msg-1"}); err != nil {
				t.Fatalf("start: %v", err)
			}
			err := sink.Event(ctx, ai.Event{Kind: ai.EventText, Delta: strings.Repeat("x", 100)})
			if !errors.Is(err, errBroken) {
				t.Fatalf("text: err = %v, want the write's error", err)
			}
			written := w.Body.String()
			for _, e := range []ai.Event{{Kind: ai.EventText, Delta: "y"}, {Kind: ai.EventFinish}} {
				if err := sink.Event(ctx, e); !errors.Is(err, errBroken) {
					t.Errorf("%s after the failure: err = %v, want the first write's error", e.Kind, err)
				}
			}
			if w.Body.String() != written {
				t.Errorf("wrote %q after the failure", strings.TrimPrefix(w.Body.String(), written))
			}
		})
	}
}

// TestUIMessageStream_Order: events out of order are refused before
// anything is written: a bug in the caller, not a stream to send.
func TestUIMessageStream_Order(t *testing.T) {
	ctx := context.Background()
	t.Run("BeforeStart", func(t *testing.T) {
		rec := httptest.NewRecorder()
		if err := newUIMessageStream(rec).Event(ctx, ai.Event{Kind: ai.EventText, Delta: "x"}); err == nil {
			t.Fatal("text before start accepted")
		}
		if rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "" {
			t.Errorf("wrote %q", rec.Body.String())
		}
	})
	t.Run("AfterEnd", func(t *testing.T) {
		rec := httptest.NewRecorder()
		s := newUIMessageStream(rec)
		for _, e := range []ai.Event{{Kind: ai.EventStart}, {Kind: ai.EventError, Err: board.Errorf(board.EUPSTREAM, "boom")}} {
			if err := s.Event(ctx, e); err != nil {
				t.Fatalf("%s: %v", e.Kind, err)
			}
		}
		n := rec.Body.Len()
		if err := s.Event(ctx, ai.Event{Kind: ai.EventFinish}); err == nil {
			t.Error("finish after error accepted")
		}
		if rec.Body.Len() != n {
			t.Errorf("wrote after the end: %q", rec.Body.String()[n:])
		}
		if !strings.HasSuffix(rec.Body.String(), `data: {"type":"error","errorText":"boom"}`+"\n\ndata: [DONE]\n\n") {
			t.Errorf("body = %q", rec.Body.String())
		}
	})
	t.Run("ToolCallWithoutInput", func(t *testing.T) {
		rec := httptest.NewRecorder()
		s := newUIMessageStream(rec)
		s.Event(ctx, ai.Event{Kind: ai.EventStart})
		s.Event(ctx, ai.Event{Kind: ai.EventToolCall, ToolCall: ai.ToolCall{ID: "c1", Name: "summarizeBoard"}})
		// input is required by the client even when there is none.
		var chunk map[string]json.RawMessage
		events := strings.Split(strings.TrimSpace(rec.Body.String()), "\n\n")
		if err := json.Unmarshal([]byte(strings.TrimPrefix(events[len(events)-1], "data: ")), &chunk); err != nil {
			t.Fatal(err)
		}
		if string(chunk["input"]) != "null" {
			t.Errorf("input = %s, want null", chunk["input"])
		}
	})
}
