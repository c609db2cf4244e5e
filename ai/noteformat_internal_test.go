package ai

import (
	"strings"
	"testing"
)

// formatNote runs text through a noteFormatter in the given chunks, as
// one final step, and returns what the client would receive.
func formatNote(chunks []string) string {
	var out strings.Builder
	f := &noteFormatter{out: func(s string) error { out.WriteString(s); return nil }, fallbackTitle: "Fallback"}
	for _, c := range chunks {
		f.write(c)
	}
	if !f.endStep(false) {
		return ""
	}
	return out.String()
}

// split cuts s at the byte offsets in cuts (taken modulo len(s)).
func split(s string, cuts []byte) []string {
	var out []string
	prev := 0
	for _, c := range cuts {
		if len(s) == 0 {
			break
		}
		at := int(c) % (len(s) + 1)
		if at < prev {
			continue
		}
		out = append(out, s[prev:at])
		prev = at
	}
	return append(out, s[prev:])
}

// FuzzNoteFormatter checks the note-ai format: whatever the model writes
// and however the stream splits it, the client gets "TITLE: …\n---\n…",
// the same as if it had come in one piece.
func FuzzNoteFormatter(f *testing.F) {
	f.Add("TITLE: Plan\n---\n## Body\ntext", []byte{3, 9, 14})
	f.Add("Title: x\n- a\n- b", []byte{9, 10})
	f.Add("# Heading\n\nbody", []byte{1})
	f.Add("plain text only", []byte{})
	f.Add("TITLE: a\n\n---\n\n\nbody", []byte{8, 9, 10, 13, 14})
	f.Add("TITLE: a\n--", []byte{9})
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		whole := formatNote([]string{text})
		chunked := formatNote(split(text, cuts))
		if strings.TrimSpace(text) == "" {
			if whole != "" || chunked != "" {
				t.Fatalf("empty answer produced %q / %q", whole, chunked)
			}
			return
		}
		if whole != chunked {
			t.Fatalf("chunking changed the note:\nwhole   %q\nchunked %q", whole, chunked)
		}
		title, _, ok := strings.Cut(whole, "\n---\n")
		if !ok || !strings.HasPrefix(title, "TITLE: ") || strings.Contains(title, "\n") {
			t.Fatalf("not in note format: %q", whole)
		}
	})
}
