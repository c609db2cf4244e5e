package ai_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/board"
)

// newService returns a Service talking to fake, with optional config
// changes, and a function returning the usage reports it made.
func newService(tb testing.TB, fake *aitest.Server, mods ...func(*ai.Config)) (*ai.Service, func() []ai.Usage) {
	tb.Helper()
	var mu sync.Mutex
	var usage []ai.Usage
	cfg := ai.Config{
		OllamaURL: fake.URL,
		Model:     "qwen3:4b",
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnUsage: func(_ context.Context, u ai.Usage) {
			mu.Lock()
			defer mu.Unlock()
			usage = append(usage, u)
		},
	}
	for _, m := range mods {
		m(&cfg)
	}
	svc, err := ai.New(cfg, nil)
	if err != nil {
		tb.Fatalf("ai.New: %v", err)
	}
	return svc, func() []ai.Usage {
		mu.Lock()
		defer mu.Unlock()
		return append([]ai.Usage(nil), usage...)
	}
}

// recorder is an ai.Sink that keeps every event it is given. When failOn
// is set, it refuses the first event of that kind with errSinkGone, as a
// client that went away would; when onEvent is set, it sees each event
// first.
type recorder struct {
	mu      sync.Mutex
	events  []ai.Event
	failOn  ai.EventKind
	onEvent func(ai.Event)
}

// errSinkGone is the error a failing recorder returns.
var errSinkGone = errors.New("recorder: the client went away")

func (r *recorder) Event(ctx context.Context, e ai.Event) error {
	if ctx == nil {
		return errors.New("recorder: nil context")
	}
	if r.onEvent != nil {
		r.onEvent(e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failOn != 0 && e.Kind == r.failOn {
		return errSinkGone
	}
	r.events = append(r.events, e)
	return nil
}

// all returns the events received so far.
func (r *recorder) all() []ai.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// kinds lists the kinds of the events received, in order.
func (r *recorder) kinds() []string {
	var out []string
	for _, e := range r.all() {
		out = append(out, e.Kind.String())
	}
	return out
}

// text joins the deltas of the text events.
func (r *recorder) text() string {
	var b strings.Builder
	for _, e := range r.all() {
		if e.Kind == ai.EventText {
			b.WriteString(e.Delta)
		}
	}
	return b.String()
}

// of returns the events of one kind.
func (r *recorder) of(k ai.EventKind) []ai.Event {
	var out []ai.Event
	for _, e := range r.all() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// wantCode fails unless err is a *board.Error with code.
func wantCode(tb testing.TB, err error, code string) *board.Error {
	tb.Helper()
	var be *board.Error
	if !errors.As(err, &be) {
		tb.Fatalf("err = %v, want a *board.Error with code %s", err, code)
	}
	if be.Code != code {
		tb.Fatalf("code = %s (%s), want %s", be.Code, be.Message, code)
	}
	return be
}

var testBoard = ai.BoardState{
	Name: "Launch",
	Notes: []ai.BoardNote{
		{ID: "n1", Title: "Magic link", Content: "Log in with a link sent by e-mail.", Type: "idea", Color: "yellow", X: 10, Y: 20},
		{ID: "n2", Title: "2FA", Content: "Second factor for admins.", Type: "requirement"},
	},
}

func chatRequest(text string) ai.ChatRequest {
	return ai.ChatRequest{
		ID:         "chat-1",
		Trigger:    "submit-message",
		BoardID:    "board-1",
		BoardState: testBoard,
		Messages: []ai.UIMessage{
			{ID: "u1", Role: "user", Parts: []ai.UIPart{{Type: "text", Text: text}}},
		},
	}
}
