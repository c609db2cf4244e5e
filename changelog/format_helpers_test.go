package changelog_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"corkboard/board"

	"github.com/google/go-cmp/cmp"
)

// exactFloats makes cmp tell 0 from -0: the formats promise the same bits.
var exactFloats = cmp.Comparer(func(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b)
})

// rawJSONBytes compares phases by their exact bytes.
var rawJSONBytes = cmp.Comparer(func(a, b json.RawMessage) bool {
	return string(a) == string(b)
})

// normalState is s as ParseBoard returns it: notes and items sorted by id,
// empty lists instead of nil.
func normalState(s board.State) board.State {
	s.Notes = slices.Clone(s.Notes)
	if s.Notes == nil {
		s.Notes = []board.Note{}
	}
	slices.SortStableFunc(s.Notes, func(a, b board.Note) int { return strings.Compare(a.ID, b.ID) })
	s.TrackerItems = slices.Clone(s.TrackerItems)
	if s.TrackerItems == nil {
		s.TrackerItems = []board.TrackerItem{}
	}
	slices.SortStableFunc(s.TrackerItems, func(a, b board.TrackerItem) int { return strings.Compare(a.ID, b.ID) })
	if s.Frames != nil {
		s.Frames = slices.Clone(s.Frames)
		slices.SortStableFunc(s.Frames, func(a, b board.Frame) int { return strings.Compare(a.ID, b.ID) })
	}
	if s.Connectors != nil {
		s.Connectors = slices.Clone(s.Connectors)
		slices.SortStableFunc(s.Connectors, func(a, b board.Connector) int { return strings.Compare(a.ID, b.ID) })
	}
	if s.Phases != nil {
		p := *s.Phases
		if p.Phases == nil {
			p.Phases = []json.RawMessage{}
		}
		s.Phases = &p
	}
	return s
}

// diffNote returns a readable difference between two notes, "" when equal.
func diffNote(want, got board.Note) string {
	// cmp.Equal first: building a diff report is slow and fuzzing calls this
	// on every input.
	if cmp.Equal(want, got, exactFloats) {
		return ""
	}
	return cmp.Diff(want, got, exactFloats)
}

// diffState returns a readable difference between two states after
// normalising want, "" when equal.
func diffState(want, got board.State) string {
	want = normalState(want)
	if cmp.Equal(want, got, exactFloats, rawJSONBytes) {
		return ""
	}
	return cmp.Diff(want, got, exactFloats, rawJSONBytes)
}

// assertInvalid fails unless err is an EINVALID *board.Error whose message
// contains every part of want.
func assertInvalid(tb testing.TB, err error, want ...string) {
	tb.Helper()
	var e *board.Error
	if !errors.As(err, &e) {
		tb.Fatalf("err = %v (%T), want a *board.Error", err, err)
	}
	if got, wantCode := e.Code, board.EINVALID; got != wantCode {
		tb.Fatalf("Code = %q, want %q (message %q)", got, wantCode, e.Message)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			tb.Fatalf("Message = %q, want it to contain %q", e.Message, w)
		}
	}
}

func ptr(s string) *string { return &s }

// nastyTexts are contents that break naive delimiting: fences of every kind,
// headings, HTML comments, line-ending oddities, Unicode separators, YAML
// look-alikes and the maximum length.
var nastyTexts = []string{
	"",
	"\n",
	"\n\n",
	"\r",
	"\r\n",
	"\r\n\r\n",
	" ",
	"trailing spaces   \n  ",
	"\n leading break",
	"---",
	"---\n",
	"\n---\n",
	"---\nid: evil\ntitle: injected\n---\nbody",
	"text\n---\nmore",
	"# Heading\n## Notes\n### Fake note\n",
	"## Tracker items\n### x\n",
	"<!-- corkboard -->\n<!--",
	"```",
	"```\n",
	"```yaml\nid: x\n```",
	"````markdown\n````",
	"```markdown\ninner\n```\n",
	"``````````",
	"a `code` and ``more``",
	"~~~\ntilde fence\n~~~",
	"    indented code\n\tand a tab",
	"line\r\nwith CRLF\r\nendings\r\n",
	"mixed\rCR\nLF\r\n",
	"héllo wörld — 日本語 — 🎉🧪 — עברית",
	"separators\u2028and\u2029and\u0085NEL",
	"\ufeffBOM first",
	"zero\u200bwidth\u00a0nbsp",
	"control \x01\x02\x1b[31m\x7f chars",
	"'single' \"double\" \\backslash\\",
	"null",
	"~",
	"true",
	"123",
	"- a\n- b",
	"key: value",
	"*alias &anchor !!binary",
	"{\"json\": [1, 2]}",
	"...",
	"%YAML 1.2",
	strings.Repeat("x", board.MaxNoteContent),
	strings.Repeat("`", board.MaxNoteContent),
	strings.Repeat("é\n", board.MaxNoteContent/2),
	strings.Repeat("```\n---\n", board.MaxNoteContent/8),
}

// nastyShort are single-field values (titles, colors, ids) that need quoting.
var nastyShort = []string{
	"",
	"plain",
	"null",
	"~",
	"yes",
	"0x1F",
	"1e3",
	"-",
	"---",
	"...",
	"'",
	"''",
	"\"",
	"#comment",
	"a # not a comment",
	"key: value",
	"[list]",
	"{map}",
	"&anchor",
	"*alias",
	"!tag",
	"%directive",
	"@at",
	"`tick`",
	" leading and trailing ",
	"tab\there",
	"new\nline",
	"cr\rreturn",
	"\u2028",
	"\ufeff",
	"\u00a0",
	"\x00nul",
	"\x7f",
	"emoji 🎉",
	"\U0010FFFD",
	"\uFFFD",
}

// excerpt shortens a document for a failure message.
func excerpt(doc []byte) string {
	const max = 1500
	if len(doc) <= max {
		return string(doc)
	}
	return string(doc[:max]) + "\n…(" + strconv.Itoa(len(doc)-max) + " more bytes)"
}
