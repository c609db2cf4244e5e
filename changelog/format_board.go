package changelog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"corkboard/board"

	"go.yaml.in/yaml/v3"
)

// A board snapshot is laid out like this (docs/markdown-format.md has a full
// example):
//
//	---
//	format: corkboard-board/1
//	id: …  name: …  version: …  updatedAt: …  phases: …
//	---
//
//	# <board name>
//
//	## Notes
//
//	### <note title>
//
//	```yaml
//	<every note field but content>
//	```
//
//	````markdown
//	<content, verbatim>
//	````
//
//	## Tracker items
//
//	### <key — summary>
//	(the same, with the item's description as the fenced text)
//
// Headings are for people; the parser ignores their text. Text blocks are
// fenced with more backticks than the longest run of backticks in the text,
// so nothing inside can close the fence, for the parser or for a Markdown
// viewer. Blank lines between blocks are optional when parsing.

// BoardFormat is the value of the format field that marks a board snapshot;
// a later incompatible layout gets a new number.
const BoardFormat = "corkboard-board/1"

// Section headings of a board snapshot. The parser requires them verbatim.
const (
	notesHeading = "## Notes"
	itemsHeading = "## Tracker items"
	yamlOpen     = "```yaml"
	yamlClose    = "```"
	textInfo     = "markdown"
)

// maxHeadingRunes bounds a heading: the full title is in the YAML below it,
// and short headings keep diffs and outlines readable.
const maxHeadingRunes = 80

// RenderBoard renders s as one Markdown document: the board's fields in front
// matter, a heading, then every note and every tracker item sorted by id, so
// two snapshots of the same board diff line by line. WriteBoard writes the
// same bytes to a writer.
func RenderBoard(s board.State) []byte {
	var b bytes.Buffer
	size := 1024
	for _, n := range s.Notes {
		size += len(n.Content) + len(n.Title) + 512
	}
	for _, it := range s.TrackerItems {
		size += len(it.Description) + len(it.Summary) + 512
	}
	b.Grow(size)
	// Writing to a bytes.Buffer cannot fail.
	_ = writeBoard(&b, s)
	return b.Bytes()
}

// writeBufferSize is the buffer between the renderer and a writer: what a
// streamed board costs beyond its rows, whatever the board's size.
const writeBufferSize = 32 << 10

// WriteBoard writes s as RenderBoard renders it, a row at a time through a
// small buffer, so that an answer costs the buffer, not a second copy of
// the board. It returns the first error of w.
func WriteBoard(w io.Writer, s board.State) error {
	bw := bufio.NewWriterSize(w, writeBufferSize)
	if err := writeBoard(bw, s); err != nil {
		return err
	}
	return bw.Flush()
}

// writeBoard sorts s's rows by id and writes them through a BoardWriter.
func writeBoard(w mdWriter, s board.State) error {
	bw := newBoardWriter(w, s.Board, s.Phases)
	notes := s.Notes
	byNoteID := func(a, b board.Note) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(notes, byNoteID) {
		// Stores read rows in ID order already; only others pay a copy.
		notes = slices.Clone(notes)
		slices.SortStableFunc(notes, byNoteID)
	}
	for _, n := range notes {
		bw.Note(n)
	}
	items := s.TrackerItems
	byItemID := func(a, b board.TrackerItem) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(items, byItemID) {
		items = slices.Clone(items)
		slices.SortStableFunc(items, byItemID)
	}
	for _, it := range items {
		bw.Item(it)
	}
	writeStructure(bw, s)
	return bw.end()
}

// mdWriter is what the renderers write to: a bytes.Buffer (one document in
// memory) or a bufio.Writer (a stream), whose errors stay until Flush.
type mdWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

// BoardWriter writes a board snapshot one row at a time: the header when
// it is made, then each note, then each tracker item, in id order (as a
// store reads them off its index), then the end. It is the seam for a
// store that streams a board's rows: nothing but the row being written is
// held. Rows out of order make End fail, since the parser and diffs rely
// on the order.
type BoardWriter struct {
	w mdWriter
	// at is the section being written (sectionNotes …).
	at      int
	lastID  string
	started bool
	err     error
}

// NewBoardWriter starts a board snapshot on w (give it a buffered writer:
// rows are written in many small pieces) with the board's front matter and
// heading.
func NewBoardWriter(w io.Writer, h board.Header, ph *board.Phases) *BoardWriter {
	mw, ok := w.(mdWriter)
	if !ok {
		mw = bufio.NewWriterSize(w, writeBufferSize)
	}
	return newBoardWriter(mw, h, ph)
}

func newBoardWriter(b mdWriter, h board.Header, p *board.Phases) *BoardWriter {
	b.WriteString(fenceLine + "\n")
	writeField(b, "", "format", BoardFormat)
	writeField(b, "", "id", quote(h.ID))
	writeField(b, "", "name", quote(h.Name))
	writeField(b, "", "version", strconv.FormatInt(h.Version, 10))
	writeField(b, "", "updatedAt", quote(h.UpdatedAt))
	if p != nil {
		b.WriteString("phases:\n")
		writeField(b, "  ", "currentPhaseId", quote(p.CurrentPhaseID))
		if len(p.Phases) == 0 {
			writeField(b, "  ", "phases", "[]")
		} else {
			b.WriteString("  phases:\n")
			for _, raw := range p.Phases {
				// Each phase keeps its exact JSON bytes, as a YAML string.
				b.WriteString("    - ")
				b.WriteString(quote(string(raw)))
				b.WriteByte('\n')
			}
		}
	}
	b.WriteString(fenceLine + "\n\n")
	b.WriteString("# " + headingText(h.Name, "Untitled board") + "\n\n")
	b.WriteString(notesHeading + "\n")
	return &BoardWriter{w: b}
}

// inOrder checks that id comes after the previous row of its list.
func (bw *BoardWriter) inOrder(id, noun string) bool {
	if bw.err != nil {
		return false
	}
	if bw.started && id < bw.lastID {
		bw.err = fmt.Errorf("board snapshot: %s %q comes after %q: rows must be written in id order", noun, clip(id, 40), clip(bw.lastID, 40))
		return false
	}
	bw.started, bw.lastID = true, id
	return true
}

// Note writes one note; every note comes before the first tracker item.
func (bw *BoardWriter) Note(n board.Note) {
	if bw.at != sectionNotes {
		if bw.err == nil {
			bw.err = fmt.Errorf("board snapshot: note %q after the tracker items", clip(n.ID, 40))
		}
		return
	}
	if !bw.inOrder(n.ID, "note") {
		return
	}
	b := bw.w
	b.WriteString("\n### " + headingText(n.Title, "Untitled note") + "\n\n")
	b.WriteString(yamlOpen + "\n")
	writeNoteFields(b, n)
	b.WriteString(yamlClose + "\n")
	writeText(b, n.Content)
}

// Item writes one tracker item; items come after the notes.
func (bw *BoardWriter) Item(it board.TrackerItem) {
	if !bw.section(sectionItems, "tracker item", it.ID) || !bw.inOrder(it.ID, "tracker item") {
		return
	}
	b := bw.w
	b.WriteString("\n### " + headingText(itemHeading(it), "Untitled item") + "\n\n")
	b.WriteString(yamlOpen + "\n")
	writeItemFields(b, it)
	b.WriteString(yamlClose + "\n")
	writeText(b, it.Description)
}

// End closes the document (the tracker items' heading when no item came)
// and flushes the writer NewBoardWriter buffered; it returns the first
// error: rows out of order, or the writer's.
func (bw *BoardWriter) End() error {
	if err := bw.end(); err != nil {
		return err
	}
	if f, ok := bw.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

func (bw *BoardWriter) end() error {
	if bw.at < sectionItems {
		bw.section(sectionItems, "", "")
	}
	return bw.err
}

// itemHeading is what a person looks for first in a tracker item.
func itemHeading(it board.TrackerItem) string {
	switch {
	case it.Key != "" && it.Summary != "":
		return it.Key + " — " + it.Summary
	case it.Key != "":
		return it.Key
	}
	return it.Summary
}

// writeItemFields writes the YAML lines of every tracker item field but the
// description, which follows as fenced text.
func writeItemFields(b mdWriter, it board.TrackerItem) {
	writeField(b, "", "id", quote(it.ID))
	writeField(b, "", "key", quote(it.Key))
	writeField(b, "", "type", quote(it.Type))
	writeField(b, "", "summary", quote(it.Summary))
	writeField(b, "", "status", quote(it.Status))
	writeField(b, "", "parentId", quote(it.ParentID))
	writeRowTail(b, it.UpdatedAt, it.Version, it.DeletedAt, it.Extra)
}

// writeText writes text as a fenced block after a blank line, or nothing when
// text is empty. The fence is one backtick longer than the longest backtick
// run in text (at least three), so no line of text can close it.
func writeText(b mdWriter, text string) {
	if text == "" {
		return
	}
	fence := strings.Repeat("`", max(3, longestBacktickRun(text)+1))
	b.WriteString("\n" + fence + textInfo + "\n")
	b.WriteString(text)
	b.WriteString("\n" + fence + "\n")
}

// longestBacktickRun returns the length of the longest run of '`' in s.
func longestBacktickRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// headingText makes s safe and short for a Markdown heading: one line, no
// control characters, Markdown punctuation escaped so it shows as written,
// at most maxHeadingRunes characters. An empty result becomes fallback.
func headingText(s, fallback string) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.TrimSpace(s) {
		if n == maxHeadingRunes {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			// Tabs, line breaks, separators, BOM, controls: one space each.
			r = ' '
		}
		if strings.ContainsRune("\\`*_[]<>#&~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		n++
	}
	if t := strings.TrimSpace(b.String()); t != "" {
		return t
	}
	return fallback
}

// boardReader walks a board snapshot line by line, keeping the line number
// for error messages.
type boardReader struct {
	doc  []byte
	pos  int // offset of the next line
	line int // number of the next line, from 1
}

func (r *boardReader) eof() bool { return r.pos >= len(r.doc) }

// peek returns the next line without its LF.
func (r *boardReader) peek() string {
	line, _, _ := cutLine(r.doc[r.pos:])
	return string(line)
}

// next consumes and returns the next line without its LF.
func (r *boardReader) next() string {
	line, _, hasLF := cutLine(r.doc[r.pos:])
	r.pos += len(line)
	if hasLF {
		r.pos++
	}
	r.line++
	return string(line)
}

// skipBlank consumes empty lines.
func (r *boardReader) skipBlank() {
	for !r.eof() && r.peek() == "" {
		r.next()
	}
}

// errorf returns an EINVALID error naming the line about to be read.
func (r *boardReader) errorf(format string, args ...any) error {
	return invalidf("board snapshot, line %d: %s", r.line, fmt.Sprintf(format, args...))
}

// expect consumes the next line, which must be want.
func (r *boardReader) expect(want string) error {
	if r.eof() {
		return r.errorf("the document ends where %q was expected.", want)
	}
	if got := r.peek(); got != want {
		return r.errorf("expected %q, found %q.", want, clip(got, 60))
	}
	r.next()
	return nil
}

// yamlBlock consumes a ```yaml … ``` block and returns its text and the line
// its text starts on.
func (r *boardReader) yamlBlock(what string) ([]byte, int, error) {
	if r.eof() || r.peek() != yamlOpen {
		found := "the end of the document"
		if !r.eof() {
			found = strconv.Quote(clip(r.peek(), 60))
		}
		return nil, 0, r.errorf("expected the %q block of %s, found %s.", yamlOpen, what, found)
	}
	openLine := r.line
	r.next()
	start, firstLine := r.pos, r.line
	for !r.eof() {
		if r.peek() == yamlClose {
			text := r.doc[start:r.pos]
			r.next()
			return text, firstLine, nil
		}
		r.next()
	}
	return nil, 0, invalidf("board snapshot, line %d: the %q block of %s is never closed by %q.", openLine, yamlOpen, what, yamlClose)
}

// fencedText consumes a fenced text block if one comes next and returns its
// text exactly; no block means empty text.
func (r *boardReader) fencedText() (string, error) {
	if r.eof() {
		return "", nil
	}
	open := r.peek()
	ticks := len(open) - len(strings.TrimLeft(open, "`"))
	if ticks < 3 || open[ticks:] != textInfo {
		return "", nil
	}
	fence := open[:ticks]
	openLine := r.line
	r.next()
	start := r.pos
	// The closing fence is the first line equal to it; its LF before belongs
	// to the block, not to the text. Searching from the LF of the opening line
	// also finds a block closed at once.
	closing := []byte("\n" + fence)
	for from := start - 1; from < len(r.doc); {
		i := bytes.Index(r.doc[from:], closing)
		if i < 0 {
			break
		}
		at := from + i
		end := at + len(closing)
		if end == len(r.doc) || r.doc[end] == '\n' {
			text := ""
			if at > start {
				text = string(r.doc[start:at])
			}
			if end < len(r.doc) {
				end++
			}
			r.line += bytes.Count(r.doc[r.pos:end], []byte("\n"))
			if end == len(r.doc) && r.doc[end-1] != '\n' {
				r.line++
			}
			r.pos = end
			return text, nil
		}
		from = at + 1
	}
	return "", invalidf("board snapshot, line %d: the text block opened by %q is never closed.", openLine, clip(fence, 10))
}

// ParseBoard reads a board snapshot: the exact inverse of RenderBoard, up to
// the order of notes and items (returned in document order, which RenderBoard
// sorts by id). Notes and TrackerItems are never nil, nor is Phases.Phases
// when Phases is set. A document not in the format, or holding a value a
// push would refuse, gives an EINVALID error.
func ParseBoard(doc []byte) (board.State, error) {
	r := &boardReader{doc: bytes.TrimPrefix(doc, utf8BOM), line: 1}
	if first := r.peek(); first != fenceLine {
		if strings.TrimRight(first, "\r") == fenceLine {
			return board.State{}, invalidf("board snapshot: line endings must be LF; this document uses CR LF.")
		}
		return board.State{}, invalidf("board snapshot must start with a YAML front-matter block: a line %q, the board's fields, then another %q line.", fenceLine, fenceLine)
	}
	r.next()
	start, firstLine := r.pos, r.line
	for !r.eof() && r.peek() != fenceLine {
		r.next()
	}
	if r.eof() {
		return board.State{}, invalidf("board snapshot: the front matter opened on line 1 is never closed by a %q line.", fenceLine)
	}
	header := r.doc[start:r.pos]
	r.next()
	s, err := decodeBoardHeader(header, firstLine)
	if err != nil {
		return board.State{}, err
	}

	r.skipBlank()
	if r.eof() || !strings.HasPrefix(r.peek(), "# ") {
		return board.State{}, r.errorf("expected the board heading \"# <name>\" after the front matter.")
	}
	r.next()
	r.skipBlank()
	if err := r.expect(notesHeading); err != nil {
		return board.State{}, err
	}
	r.skipBlank()

	noteIDs := map[string]bool{}
	for !r.eof() && strings.HasPrefix(r.peek(), "### ") {
		n, err := readRecord(r, noteRecord, noteIDs)
		if err != nil {
			return board.State{}, err
		}
		s.Notes = append(s.Notes, n)
	}

	if !r.eof() && r.peek() != itemsHeading {
		return board.State{}, r.errorf("expected a note heading \"### <title>\" or %q, found %q.", itemsHeading, clip(r.peek(), 60))
	}
	if err := r.expect(itemsHeading); err != nil {
		return board.State{}, err
	}
	r.skipBlank()

	itemIDs := map[string]bool{}
	for !r.itemsEnd() {
		if !strings.HasPrefix(r.peek(), "### ") {
			return board.State{}, r.errorf("expected a tracker item heading \"### <key — summary>\" or the end of the document, found %q.", clip(r.peek(), 60))
		}
		it, err := readRecord(r, itemRecord, itemIDs)
		if err != nil {
			return board.State{}, err
		}
		s.TrackerItems = append(s.TrackerItems, it)
	}
	if err := readStructure(r, &s); err != nil {
		return board.State{}, err
	}
	return s, nil
}

// recordKind is what tells the two lists of a board snapshot apart: a note
// and a tracker item are read the same way, each into its own type.
type recordKind[T any] struct {
	noun     string                                     // in messages: "note", "tracker item"
	decode   func(m *yaml.Node, what string) (T, error) // the fields of the YAML block
	text     func(*T) *string                           // the field the fenced text holds; nil for none
	validate func(rec *T, what string) error
	id       func(*T) string
}

var (
	noteRecord = recordKind[board.Note]{
		noun:     "note",
		decode:   decodeNoteFields,
		text:     func(n *board.Note) *string { return &n.Content },
		validate: validateNote,
		id:       func(n *board.Note) string { return n.ID },
	}
	itemRecord = recordKind[board.TrackerItem]{
		noun:     "tracker item",
		decode:   decodeItemFields,
		text:     func(it *board.TrackerItem) *string { return &it.Description },
		validate: validateItem,
		id:       func(it *board.TrackerItem) string { return it.ID },
	}
)

// readRecord reads one note or tracker item: its "### " heading (the next
// line), its YAML block and its optional fenced text, then the blank lines
// after it. ids holds the ids read so far in the list; a repeated one is an
// error.
func readRecord[T any](r *boardReader, k recordKind[T], ids map[string]bool) (T, error) {
	var zero T
	headingLine := r.line
	r.next()
	r.skipBlank()
	text, line, err := r.yamlBlock("a " + k.noun)
	if err != nil {
		return zero, err
	}
	what := "board snapshot, " + k.noun + " under the heading on line " + strconv.Itoa(headingLine)
	m, err := parseYAMLMapping(text, line, what)
	if err != nil {
		return zero, err
	}
	rec, err := k.decode(m, what)
	if err != nil {
		return zero, err
	}
	r.skipBlank()
	if k.text != nil {
		if *k.text(&rec), err = r.fencedText(); err != nil {
			return zero, err
		}
	}
	if err := k.validate(&rec, what); err != nil {
		return zero, err
	}
	id := k.id(&rec)
	if ids[id] {
		return zero, invalidf("%s: %s id %q appears twice.", what, k.noun, clip(id, 40))
	}
	ids[id] = true
	r.skipBlank()
	return rec, nil
}

// decodeBoardHeader reads the board's front matter into a State with empty,
// non-nil note and item lists.
func decodeBoardHeader(text []byte, firstLine int) (board.State, error) {
	const what = "board snapshot front matter"
	m, err := parseYAMLMapping(text, firstLine, what)
	if err != nil {
		return board.State{}, err
	}
	if !hasKey(m, "format") {
		if hasKey(m, "title") || hasKey(m, "x") || hasKey(m, "content") {
			return board.State{}, invalidf("%s: this is a note snapshot, not a board snapshot.", what)
		}
		return board.State{}, invalidf("%s: the field \"format: %s\" is missing, so this is not a board snapshot.", what, BoardFormat)
	}
	s := board.State{Notes: []board.Note{}, TrackerItems: []board.TrackerItem{}}
	var format string
	_, err = decodeFields(m, what, map[string]fieldSetter{
		"format":    setString(&format),
		"id":        setString(&s.Board.ID),
		"name":      setString(&s.Board.Name),
		"version":   setVersion(&s.Board.Version),
		"updatedAt": setString(&s.Board.UpdatedAt),
		"phases":    setPhases(&s.Phases),
	})
	if err != nil {
		return board.State{}, err
	}
	if format != BoardFormat {
		return board.State{}, invalidf("%s: format must be %q (got %q).", what, BoardFormat, clip(format, 40))
	}
	if err := board.ValidateBoardID("id", s.Board.ID); err != nil {
		return board.State{}, invalidf("%s: %s", what, validationMessage(err))
	}
	if !utf8.ValidString(s.Board.Name) {
		return board.State{}, invalidf("%s: name must be valid UTF-8.", what)
	}
	if n := utf8.RuneCountInString(s.Board.Name); n > board.MaxBoardNameLen {
		return board.State{}, invalidf("%s: name must be at most %d characters (got %d).", what, board.MaxBoardNameLen, n)
	}
	if err := board.ValidateTimestamp("updatedAt", s.Board.UpdatedAt); err != nil {
		return board.State{}, invalidf("%s: %s", what, validationMessage(err))
	}
	if s.Phases != nil {
		if err := s.Phases.Validate(); err != nil {
			return board.State{}, invalidf("%s: %s", what, validationMessage(err))
		}
	}
	return s, nil
}

// setPhases reads the phases mapping: currentPhaseId and a list of phases,
// each a string holding the phase's JSON object. null leaves no phases.
func setPhases(dst **board.Phases) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			*dst = nil
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return errMust("must be a mapping with currentPhaseId and phases")
		}
		p := &board.Phases{Phases: []json.RawMessage{}}
		_, err := decodeFields(v, "phases", map[string]fieldSetter{
			"currentPhaseId": setString(&p.CurrentPhaseID),
			"phases":         setPhaseList(&p.Phases),
		})
		if err != nil {
			// decodeFields already says where; keep its message.
			return errMust("is invalid: " + board.ErrorMessage(err))
		}
		*dst = p
		return nil
	}
}

// setPhaseList reads a YAML list of strings, each one phase's JSON.
func setPhaseList(dst *[]json.RawMessage) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			return nil
		}
		if v.Kind != yaml.SequenceNode {
			return errMust("must be a list")
		}
		for i, el := range v.Content {
			if el.Kind == yaml.AliasNode && el.Alias != nil {
				el = el.Alias
			}
			if el.Kind != yaml.ScalarNode || el.ShortTag() != "!!str" {
				return errMust("[" + strconv.Itoa(i) + "] must be a string holding the phase's JSON object")
			}
			*dst = append(*dst, json.RawMessage(el.Value))
		}
		return nil
	}
}

// decodeItemFields fills a tracker item from a YAML mapping.
func decodeItemFields(m *yaml.Node, what string) (board.TrackerItem, error) {
	return decodeRow(m, what, "tracker item", 0, func(it *board.TrackerItem) (*string, map[string]fieldSetter, rowTail) {
		return &it.ID, map[string]fieldSetter{
			"key":      setString(&it.Key),
			"type":     setString(&it.Type),
			"summary":  setString(&it.Summary),
			"status":   setString(&it.Status),
			"parentId": setString(&it.ParentID),
		}, rowTail{&it.UpdatedAt, &it.Version, &it.DeletedAt, &it.Extra}
	})
}

// validateItem applies the limits every stored tracker item obeys.
func validateItem(it *board.TrackerItem, what string) error {
	return firstInvalid(what, it.Validate("trackerItem"), checkDeletedAt("trackerItem", it.DeletedAt))
}
