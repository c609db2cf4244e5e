package aitest

import (
	"encoding/json"
	"strings"
	"testing"
)

// Chunk is one decoded chunk of a UI message stream.
type Chunk map[string]any

// Str returns the chunk's string field k, or "".
func (c Chunk) Str(k string) string { s, _ := c[k].(string); return s }

// ParseUIStream checks the framing of a whole UI message stream body (every
// event a single `data: <json>` line, the last one `data: [DONE]` and only
// the last) and returns the chunks before [DONE].
func ParseUIStream(tb testing.TB, body string) []Chunk {
	tb.Helper()
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		tb.Fatalf("stream does not end with data: [DONE]: %q", tail(body))
	}
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	var out []Chunk
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
		var c Chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			tb.Fatalf("event %d: %v: %q", i, err, data)
		}
		out = append(out, c)
	}
	return out
}

// ChunkTypes lists the chunks' types in order.
func ChunkTypes(cs []Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Str("type")
	}
	return out
}

// StreamText joins the text deltas of a stream.
func StreamText(cs []Chunk) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Str("type") == "text-delta" {
			b.WriteString(c.Str("delta"))
		}
	}
	return b.String()
}

func tail(s string) string {
	if len(s) > 200 {
		return "…" + s[len(s)-200:]
	}
	return s
}
