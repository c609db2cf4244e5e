// Package changelog keeps a board's Markdown history: the formats of note
// snapshots, board rename records and whole-board snapshots (render and
// parse, each the exact inverse of the other), the changelog index and the
// snapshots built on them. docs/markdown-format.md describes the formats.
package changelog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"corkboard/board"

	"go.yaml.in/yaml/v3"
)

// This file holds what the three formats share: the front-matter fences,
// YAML scalars written by hand so that every value reads back exactly, and a
// strict walker over parsed YAML mappings that produces client-safe errors.

// fenceLine is the line that opens and closes a YAML front-matter block.
const fenceLine = "---"

// utf8BOM is skipped at the start of hand-written documents (Windows editors
// like to add one); rendered documents never start with it.
var utf8BOM = []byte("\ufeff")

// invalidf returns the EINVALID domain error every parse failure becomes; the
// transport layer turns it into a 400.
func invalidf(format string, args ...any) error {
	return board.Errorf(board.EINVALID, format, args...)
}

// cutLine splits b at its first LF: the line without the LF, the rest after
// it, and whether there was an LF at all.
func cutLine(b []byte) (line, rest []byte, hasLF bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

// isFence reports whether line is a front-matter fence, tolerating the
// trailing blanks and CR that hand-written (or Windows-edited) documents have.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == fenceLine
}

// frontMatter is a document cut at its YAML front-matter fences.
type frontMatter struct {
	yaml []byte // the text between the fences
	body []byte // everything after the closing fence line
	crlf bool   // the closing fence line ended in CR LF
}

// splitFrontMatter cuts doc into its front matter and body. The front matter
// ends at the first fence line after the opening one, so the body may hold
// any text at all, fences included. what names the document in errors.
func splitFrontMatter(doc []byte, what string) (frontMatter, error) {
	doc = bytes.TrimPrefix(doc, utf8BOM)
	first, rest, hasLF := cutLine(doc)
	if !isFence(first) {
		return frontMatter{}, invalidf("%s must start with a YAML front-matter block: a line %q, the fields, then another %q line.", what, fenceLine, fenceLine)
	}
	if !hasLF {
		return frontMatter{}, invalidf("%s: the front matter opened on line 1 is never closed by a %q line.", what, fenceLine)
	}
	start := len(doc) - len(rest)
	for pos := start; pos < len(doc); {
		line, _, hasLF := cutLine(doc[pos:])
		if isFence(line) {
			fm := frontMatter{yaml: doc[start:pos]}
			if hasLF {
				fm.body = doc[pos+len(line)+1:]
				fm.crlf = bytes.HasSuffix(line, []byte("\r"))
			}
			return fm, nil
		}
		pos += len(line) + 1
	}
	return frontMatter{}, invalidf("%s: the front matter opened on line 1 is never closed by a %q line.", what, fenceLine)
}

// yamlLineRE finds the line numbers in yaml.v3's error messages so they can
// be moved to the line of the whole document.
var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlErrorMessage turns a yaml.v3 error into a one-line message whose line
// numbers count from the start of the document; firstLine is the document
// line the YAML text starts on.
func yamlErrorMessage(err error, firstLine int) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.Join(strings.Fields(msg), " ")
	return yamlLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, convErr := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if convErr != nil {
			return m
		}
		return "line " + strconv.Itoa(n+firstLine-1)
	})
}

// parseYAMLMapping parses text, which starts on document line firstLine, as
// one YAML document holding a mapping. Empty text gives an empty mapping.
// what names the block in errors.
func parseYAMLMapping(text []byte, firstLine int, what string) (m *yaml.Node, err error) {
	// yaml.v3 is a port of a C library; should any input still make it panic,
	// the caller gets a 400 for that document rather than a crashed request.
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, invalidf("%s is not valid YAML.", what)
		}
	}()
	empty := &yaml.Node{Kind: yaml.MappingNode, Line: firstLine}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return empty, nil
	} else if err != nil {
		return nil, invalidf("%s is not valid YAML: %s.", what, yamlErrorMessage(err, firstLine))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, invalidf("%s must hold one YAML document, not several.", what)
	}
	if len(doc.Content) == 0 {
		return empty, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return empty, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, invalidf("%s must be a YAML mapping of \"field: value\" lines.", what)
	}
	// Node lines count from the YAML text; make them document lines.
	shiftLines(root, firstLine-1)
	return root, nil
}

// shiftLines adds delta to the line of n and of everything under it. Aliases
// are not followed: their targets are shifted where they are defined.
func shiftLines(n *yaml.Node, delta int) {
	n.Line += delta
	for _, c := range n.Content {
		shiftLines(c, delta)
	}
}

// fieldSetter stores one YAML value into its destination, or says in a short
// phrase ("must be a number") why it cannot.
type fieldSetter func(v *yaml.Node) error

// decodeFields walks mapping m and hands each value to the setter of its key.
// Keys may come in any order; an unknown or repeated key is an error, so a
// typo in a hand-written document is reported instead of silently dropped.
// It returns the set of keys seen. what names the block in errors.
func decodeFields(m *yaml.Node, what string, setters map[string]fieldSetter) (map[string]bool, error) {
	seen := make(map[string]bool, len(setters))
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, invalidf("%s, line %d: field names must be plain words.", what, k.Line)
		}
		set, ok := setters[k.Value]
		if !ok {
			return nil, invalidf("%s, line %d: unknown field %q (known fields: %s).", what, k.Line, clip(k.Value, 40), knownFields(setters))
		}
		if seen[k.Value] {
			return nil, invalidf("%s, line %d: field %q appears twice.", what, k.Line, k.Value)
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if err := set(v); err != nil {
			return nil, invalidf("%s, line %d: %s %s.", what, k.Line, k.Value, err.Error())
		}
	}
	return seen, nil
}

// rowTail points at what every kind of row carries after its own fields.
type rowTail struct {
	updatedAt *string
	version   *int64
	deletedAt **string
	extra     *[]board.Field
}

// rowFields names the fields of row: its id, its own fields and the tail
// every kind of row carries.
type rowFields[T any] func(row *T) (id *string, own map[string]fieldSetter, tail rowTail)

// decodeRow reads a row of type T from mapping m, its fields named by
// fields. A row without an id is refused, naming noun (and the line, when
// line is not 0); what names the block in errors.
func decodeRow[T any](m *yaml.Node, what, noun string, line int, fields rowFields[T]) (T, error) {
	var row, zero T
	id, own, tail := fields(&row)
	own["id"] = setString(id)
	own["updatedAt"] = setString(tail.updatedAt)
	own["version"] = setVersion(tail.version)
	own["deletedAt"] = setOptionalString(tail.deletedAt)
	own["extra"] = setExtra(tail.extra)
	seen, err := decodeFields(m, what, own)
	if err != nil {
		return zero, err
	}
	if seen["id"] && *id != "" {
		return row, nil
	}
	if line != 0 {
		return zero, invalidf("%s, line %d: the %s has no id.", what, line, noun)
	}
	return zero, invalidf("%s: the %s has no id.", what, noun)
}

// writeRowTail writes the YAML lines of what every kind of row carries
// after its own fields: updatedAt, version, deletedAt when set, and the
// extra fields.
func writeRowTail(b mdWriter, updatedAt string, version int64, deletedAt *string, extra []board.Field) {
	writeField(b, "", "updatedAt", quote(updatedAt))
	writeField(b, "", "version", strconv.FormatInt(version, 10))
	if deletedAt != nil {
		writeField(b, "", "deletedAt", quote(*deletedAt))
	}
	writeExtra(b, extra)
}

// knownFields lists the keys of setters in a stable order for error messages.
func knownFields(setters map[string]fieldSetter) string {
	names := make([]string, 0, len(setters))
	for name := range setters {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// errMust is the reason a setter gives; decodeFields prefixes the field.
type errMust string

func (e errMust) Error() string { return string(e) }

// setString stores any scalar's text: a hand-written `id: 123` or an unquoted
// timestamp keeps exactly the characters written; null and empty give "".
func setString(dst *string) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode {
			return errMust("must be a string")
		}
		if v.ShortTag() == "!!null" {
			*dst = ""
			return nil
		}
		*dst = v.Value
		return nil
	}
}

// setOptionalString is setString for nullable fields: null or a missing field
// leaves nil, any other scalar sets the pointer.
func setOptionalString(dst **string) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode {
			return errMust("must be a string or null")
		}
		if v.ShortTag() == "!!null" {
			*dst = nil
			return nil
		}
		s := v.Value
		*dst = &s
		return nil
	}
}

// setFloat stores a YAML int or float.
func setFloat(dst *float64) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") {
			return errMust(fmt.Sprintf("must be a number (got %q)", clip(v.Value, 40)))
		}
		if err := v.Decode(dst); err != nil {
			return errMust(fmt.Sprintf("must be a number (got %q)", clip(v.Value, 40)))
		}
		return nil
	}
}

// setVersion stores a YAML int that is not negative.
func setVersion(dst *int64) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
			return errMust(fmt.Sprintf("must be a whole number (got %q)", clip(v.Value, 40)))
		}
		if err := v.Decode(dst); err != nil {
			return errMust(fmt.Sprintf("must be a whole number that fits in 64 bits (got %q)", clip(v.Value, 40)))
		}
		if *dst < 0 {
			return errMust("must not be negative")
		}
		return nil
	}
}

// clip shortens s for an error message.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

// quote renders s as a YAML scalar that always reads back as exactly s.
// Strings made only of printable characters are single-quoted, where the only
// escape is a doubled single quote (so JSON and most text stay readable);
// anything else is double-quoted with Go's escapes, every one of which (\n,
// \t, \x1b, \u2028, \U0001f600, …) means the same in YAML. Either way the
// scalar stays on one line, so no rendered YAML line can look like a fence.
func quote(s string) string {
	if utf8.ValidString(s) && allPrintable(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return strconv.Quote(s)
}

// allPrintable reports whether every rune of s is printable by Go's
// definition: letters, marks, numbers, punctuation, symbols and the ASCII
// space. That excludes tabs, line and paragraph separators, NBSP and the BOM,
// which YAML would fold, trim or reject inside single quotes.
func allPrintable(s string) bool {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// maxPlainFloat is the longest plain decimal formatFloat writes before it
// switches to exponent notation, so 1e-300 does not become 300 zeros.
const maxPlainFloat = 21

// formatFloat renders v as the shortest decimal that reads back as the very
// same float64, in plain notation when that is short and exponent notation
// otherwise. Negative zero keeps its sign, and NaN and the infinities use
// YAML's spellings (the parsers reject them as coordinates anyway).
func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return ".nan"
	case math.IsInf(v, 1):
		return ".inf"
	case math.IsInf(v, -1):
		return "-.inf"
	case v == 0 && math.Signbit(v):
		// "-0" would read back as the integer 0 and lose the sign.
		return "-0.0"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if len(s) > maxPlainFloat {
		s = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return s
}

// writeField writes one "name: value" line.
func writeField(b mdWriter, indent, name, value string) {
	b.WriteString(indent)
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteByte('\n')
}

// checkDeletedAt validates deletedAt, which board.Note.Validate and
// board.TrackerItem.Validate leave alone; path prefixes the field name.
func checkDeletedAt(path string, deletedAt *string) error {
	if deletedAt == nil {
		return nil
	}
	return board.ValidateTimestamp(path+".deletedAt", *deletedAt)
}

// validationMessage returns the client-safe text of a validation error.
func validationMessage(err error) string {
	return board.ErrorMessage(err)
}

// firstInvalid words the first non-nil error of checks (a record's checks, in
// order) as an EINVALID error about the part of the document what names.
func firstInvalid(what string, checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return invalidf("%s: %s", what, validationMessage(err))
		}
	}
	return nil
}
