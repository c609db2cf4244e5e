package ai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
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

// chunk is one decoded UI message stream chunk.
type chunk map[string]any

func (c chunk) str(k string) string { s, _ := c[k].(string); return s }

// parseSSE checks the framing of a UI message stream body — every event a
// single `data: <json>` line, the last one `data: [DONE]` — and returns the
// chunks before [DONE].
func parseSSE(tb testing.TB, body string) []chunk {
	tb.Helper()
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		tb.Fatalf("stream does not end with data: [DONE]: %q", tail(body))
	}
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	var out []chunk
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			tb.Fatalf("event %d is not one data line: %q", i, ev)
		}
		if data == "[DONE]" {
			if i != len(events)-1 {
				tb.Fatalf("[DONE] before the end (event %d of %d)", i, len(events))
			}
			break
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			tb.Fatalf("event %d: %v: %q", i, err, data)
		}
		out = append(out, c)
	}
	return out
}

func tail(s string) string {
	if len(s) > 200 {
		return "…" + s[len(s)-200:]
	}
	return s
}

func types(cs []chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.str("type")
	}
	return out
}

// textOf joins every text-delta.
func textOf(cs []chunk) string {
	var b strings.Builder
	for _, c := range cs {
		if c.str("type") == "text-delta" {
			b.WriteString(c.str("delta"))
		}
	}
	return b.String()
}

func find(cs []chunk, typ string) []chunk {
	var out []chunk
	for _, c := range cs {
		if c.str("type") == typ {
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
