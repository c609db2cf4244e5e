package ai_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
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

func find(cs []aitest.Chunk, typ string) []aitest.Chunk {
	var out []aitest.Chunk
	for _, c := range cs {
		if c.Str("type") == typ {
			out = append(out, c)
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
