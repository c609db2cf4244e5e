package ai

import (
	"strings"
	"unicode/utf8"

	"corkboard/board"
)

// noteFormatter turns the model's answer into the note-ai format
// "TITLE: <title>\n---\n<body>", streaming it as it comes when the model
// follows the format, and repairing it when it does not.
//
// Text of a step is held back until its first lines show the header
// ("TITLE: …" and the line after it); from then on the body streams
// through and the step is the final answer (tool calls the same step makes
// are ignored). Text of a step that does not start with "TITLE:" waits for
// the end of the step: with tool calls it was narration and is dropped;
// without, it is the answer, and a title is found for it (a leading
// Markdown heading, else the note's current title, else "Untitled note").
type noteFormatter struct {
	// out receives the note's text; its errors are the emitter's to keep.
	out           func(string) error
	fallbackTitle string
	pending       strings.Builder
	header        bool
	bodyRunes     int
}

const titlePrefix = "TITLE:"

func (f *noteFormatter) write(s string) {
	if f.header {
		f.body(s)
		return
	}
	f.pending.WriteString(s)
	f.tryHeader()
}

// tryHeader writes the header once the pending text shows a complete
// "TITLE:" line and enough of what follows to tell a separator from body.
func (f *noteFormatter) tryHeader() {
	t := strings.TrimLeft(f.pending.String(), " \t\r\n")
	if !hasPrefixFold(t, titlePrefix) {
		return
	}
	line, rest, ok := strings.Cut(t, "\n")
	if !ok {
		return
	}
	rest = strings.TrimLeft(rest, " \t\r\n")
	if rest == "" {
		return
	}
	body := rest
	if rest[0] == '-' {
		sep, after, ok := strings.Cut(rest, "\n")
		sep = strings.TrimSpace(sep)
		switch {
		case strings.Trim(sep, "-") != "":
			// "- a list item": body, not a separator.
		case !ok:
			return // "--" so far; wait for the end of the line
		default:
			body = strings.TrimLeft(after, "\r\n")
		}
	}
	f.header = true
	f.pending.Reset()
	f.out(titlePrefix + " " + cleanTitle(line[len(titlePrefix):]) + "\n---\n")
	f.body(body)
}

// body writes body text, up to a note's maximum content length. Blank
// lines before the body are dropped, wherever the chunks split them.
func (f *noteFormatter) body(s string) {
	if f.bodyRunes == 0 {
		s = strings.TrimLeft(s, "\r\n")
	}
	room := board.MaxNoteContent - f.bodyRunes
	if room <= 0 || s == "" {
		return
	}
	if n := utf8.RuneCountInString(s); n > room {
		s = string([]rune(s)[:room])
	}
	f.bodyRunes += utf8.RuneCountInString(s)
	f.out(s)
}

// endStep ends one model step and reports whether the answer is complete.
// hadTools says whether the step called tools (and the loop can go on).
func (f *noteFormatter) endStep(hadTools bool) bool {
	if f.header {
		return true
	}
	text := strings.TrimSpace(f.pending.String())
	f.pending.Reset()
	if hadTools || text == "" {
		return false
	}
	title, body := splitNote(text, f.fallbackTitle)
	f.header = true
	f.out(titlePrefix + " " + title + "\n---\n")
	f.body(body)
	return true
}

// splitNote finds the title and body of an answer that came without the
// streaming header.
func splitNote(text, fallback string) (title, body string) {
	first, rest, _ := strings.Cut(text, "\n")
	switch {
	case hasPrefixFold(first, titlePrefix):
		title = cleanTitle(first[len(titlePrefix):])
		rest = strings.TrimLeft(rest, " \t\r\n")
		if sep, after, ok := strings.Cut(rest, "\n"); ok && strings.Trim(strings.TrimSpace(sep), "-") == "" && strings.TrimSpace(sep) != "" {
			rest = after
		} else if !ok && strings.Trim(strings.TrimSpace(rest), "-") == "" {
			rest = ""
		}
		body = strings.TrimLeft(rest, "\r\n")
	case strings.HasPrefix(first, "#"):
		title = cleanTitle(first)
		body = strings.TrimLeft(rest, " \t\r\n")
	default:
		title, body = cleanTitle(fallback), text
	}
	if title == "" {
		title = "Untitled note"
	}
	return title, body
}

// cleanTitle makes one tidy line of a title the model wrote.
func cleanTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimLeft(s, "# ")
	for _, m := range []string{"**", "__", "\"", "`", "'"} {
		if len(s) >= 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) {
			s = strings.TrimSpace(s[len(m) : len(s)-len(m)])
		}
	}
	return clip(s, 200)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
