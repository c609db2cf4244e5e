package changelog

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"corkboard/board"

	"go.yaml.in/yaml/v3"
)

// What a note snapshot's front matter holds and where the body goes is in
// docs/markdown-format.md; the body rules in short: the renderer writes one
// blank line after the closing fence and one LF after the content, and the
// parser takes exactly one line break off each end of the body. So content
// that itself starts or ends with line breaks survives, and a hand-written
// document with or without the blank line or the final newline reads the same.

// RenderNote renders n as a note snapshot: YAML front matter with every field
// but the content (deletedAt only when set), then the content as the body.
func RenderNote(n board.Note) []byte {
	var b bytes.Buffer
	b.Grow(len(n.Content) + len(n.Title) + 256)
	b.WriteString(fenceLine + "\n")
	writeNoteFields(&b, n)
	b.WriteString(fenceLine + "\n\n")
	b.WriteString(n.Content)
	b.WriteByte('\n')
	return b.Bytes()
}

// writeNoteFields writes the YAML lines of every note field but the content,
// in a fixed order; RenderNote and RenderBoard share it.
func writeNoteFields(b mdWriter, n board.Note) {
	writeField(b, "", "id", quote(n.ID))
	writeField(b, "", "title", quote(n.Title))
	writeField(b, "", "x", formatFloat(n.X))
	writeField(b, "", "y", formatFloat(n.Y))
	if n.W != 0 || n.H != 0 {
		// Only a note that has a size: documents of notes without one,
		// and those written before notes had one, stay as they were.
		writeField(b, "", "w", formatFloat(n.W))
		writeField(b, "", "h", formatFloat(n.H))
	}
	writeField(b, "", "color", quote(n.Color))
	writeField(b, "", "type", quote(n.Type))
	writeRowTail(b, n.UpdatedAt, n.Version, n.DeletedAt, n.Extra)
}

// writeExtra writes a row's extra fields, when it has any, as one line:
// a YAML string holding them as a JSON object, in the client's order.
func writeExtra(b mdWriter, extra []board.Field) {
	if len(extra) > 0 {
		writeField(b, "", "extra", quote(string(board.ExtraObject(extra))))
	}
}

// setExtra reads the extra line written by writeExtra.
func setExtra(dst *[]board.Field) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
			return errMust("must be a string holding a JSON object")
		}
		fields, err := board.ParseExtraObject([]byte(v.Value))
		if err != nil || fields == nil {
			return errMust("must be a string holding a JSON object of distinct fields")
		}
		*dst = fields
		return nil
	}
}

// decodeNoteFields fills a note from a YAML mapping and checks what the
// mapping alone can tell: the id is there. what names the block in errors.
func decodeNoteFields(m *yaml.Node, what string) (board.Note, error) {
	return decodeRow(m, what, "note", m.Line, func(n *board.Note) (*string, map[string]fieldSetter, rowTail) {
		return &n.ID, map[string]fieldSetter{
			"title": setString(&n.Title),
			"x":     setFloat(&n.X),
			"y":     setFloat(&n.Y),
			"w":     setFloat(&n.W),
			"h":     setFloat(&n.H),
			"color": setString(&n.Color),
			"type":  setString(&n.Type),
		}, rowTail{&n.UpdatedAt, &n.Version, &n.DeletedAt, &n.Extra}
	})
}

// validateNote applies the limits every stored note obeys, so a document can
// never bring back a note a push would refuse.
func validateNote(n *board.Note, what string) error {
	return firstInvalid(what, n.Validate("note"), checkDeletedAt("note", n.DeletedAt))
}

// ParseNote reads a note snapshot: the exact inverse of RenderNote, and
// lenient with what a person writes by hand in the same shape (fields in any
// order, optional fields missing, no blank line after the front matter, no
// final newline, CRLF line endings, a BOM). A document that is not a note
// snapshot, or holds a note a push would refuse, gives an EINVALID error.
func ParseNote(doc []byte) (board.Note, error) {
	const what = "note snapshot"
	fm, err := splitFrontMatter(doc, what)
	if err != nil {
		return board.Note{}, err
	}
	m, err := parseYAMLMapping(fm.yaml, 2, what+" front matter")
	if err != nil {
		return board.Note{}, err
	}
	if hasKey(m, "format") {
		return board.Note{}, invalidf("%s: this is a board snapshot, not a note snapshot.", what)
	}
	n, err := decodeNoteFields(m, what)
	if err != nil {
		return board.Note{}, err
	}
	body := trimLeadingBreak(fm.body)
	body = trimTrailingBreak(body, fm.crlf)
	n.Content = string(body)
	if err := validateNote(&n, what); err != nil {
		return board.Note{}, err
	}
	return n, nil
}

// hasKey reports whether mapping m has the key name.
func hasKey(m *yaml.Node, name string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == name {
			return true
		}
	}
	return false
}

// trimLeadingBreak removes the one line break (LF or CR LF) that separates
// the front matter from the body, when there is one.
func trimLeadingBreak(b []byte) []byte {
	if bytes.HasPrefix(b, []byte("\r\n")) {
		return b[2:]
	}
	return bytes.TrimPrefix(b, []byte("\n"))
}

// trimTrailingBreak removes the one line break that ends the document. CR LF
// counts as one break only when the front matter used CR LF too: rendered
// documents use LF, so content ending in CR keeps it.
func trimTrailingBreak(b []byte, crlf bool) []byte {
	if crlf && bytes.HasSuffix(b, []byte("\r\n")) {
		return b[:len(b)-2]
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// RenderRename renders a board rename record: front matter holding the new
// name and nothing else.
func RenderRename(name string) []byte {
	var b bytes.Buffer
	b.WriteString(fenceLine + "\n")
	writeField(&b, "", "name", quote(name))
	b.WriteString(fenceLine + "\n")
	return b.Bytes()
}

// ParseRename reads a board rename record and returns the new name. It is the
// exact inverse of RenderRename and also takes what the spec's clients send:
// the bare name on one line (one final line break is dropped). An empty bare
// document, a name that is too long or not UTF-8, or a front matter without
// name gives an EINVALID error.
func ParseRename(doc []byte) (string, error) {
	const what = "rename record"
	doc = bytes.TrimPrefix(doc, utf8BOM)
	first, _, _ := cutLine(doc)
	var name string
	if isFence(first) {
		fm, err := splitFrontMatter(doc, what)
		if err != nil {
			return "", err
		}
		m, err := parseYAMLMapping(fm.yaml, 2, what+" front matter")
		if err != nil {
			return "", err
		}
		seen, err := decodeFields(m, what, map[string]fieldSetter{"name": setString(&name)})
		if err != nil {
			return "", err
		}
		if !seen["name"] {
			return "", invalidf("%s: the front matter has no name.", what)
		}
		if len(bytes.TrimSpace(fm.body)) != 0 {
			return "", invalidf("%s: nothing may follow the front matter.", what)
		}
	} else {
		name = string(trimTrailingBreak(doc, true))
		if name == "" {
			return "", invalidf("%s must hold the new board name.", what)
		}
		if strings.ContainsAny(name, "\r\n") {
			return "", invalidf("%s: a bare name must fit on one line; use the front-matter form for other names.", what)
		}
	}
	if !utf8.ValidString(name) {
		return "", invalidf("%s: the name must be valid UTF-8.", what)
	}
	if n := utf8.RuneCountInString(name); n > board.MaxBoardNameLen {
		return "", invalidf("%s: the name must be at most %d characters (got %d).", what, board.MaxBoardNameLen, n)
	}
	return name, nil
}
