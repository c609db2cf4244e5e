package changelog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"corkboard/board"

	"go.yaml.in/yaml/v3"
)

// Frames and connectors follow the tracker items in a board snapshot, each
// under a heading of its own that is written only when the board has some,
// so that the snapshot of a board without them is what it always was
// (docs/markdown-format.md, "Frames and connectors"):
//
//	## Frames
//
//	### <frame title>
//
//	```yaml
//	<every frame field>
//	```
//
//	## Connectors
//
//	### <label, or from → to>
//
//	```yaml
//	<every connector field>
//	```
//
// Neither has a fenced text: a frame's title and a connector's label are
// short, and live in the YAML.

// Section headings of frames and connectors.
const (
	framesHeading     = "## Frames"
	connectorsHeading = "## Connectors"
)

// Sections of a board snapshot, in their order.
const (
	sectionNotes = iota
	sectionItems
	sectionFrames
	sectionConnectors
)

// section moves the writer on to section s (writing its heading, and the
// tracker items' heading, which every snapshot has, on the way); false
// when the writer is past s already: rows out of order.
func (bw *BoardWriter) section(s int, noun, id string) bool {
	if bw.at > s {
		if bw.err == nil {
			bw.err = fmt.Errorf("board snapshot: %s %q after a later section", noun, clip(id, 40))
		}
		return false
	}
	for bw.at < s {
		bw.at++
		bw.started, bw.lastID = false, ""
		bw.w.WriteString("\n" + [...]string{notesHeading, itemsHeading, framesHeading, connectorsHeading}[bw.at] + "\n")
	}
	return true
}

// Frame writes one frame; frames come after the tracker items, in id
// order.
func (bw *BoardWriter) Frame(f board.Frame) {
	if !bw.section(sectionFrames, "frame", f.ID) || !bw.inOrder(f.ID, "frame") {
		return
	}
	b := bw.w
	b.WriteString("\n### " + headingText(f.Title, "Untitled frame") + "\n\n")
	b.WriteString(yamlOpen + "\n")
	writeField(b, "", "id", quote(f.ID))
	writeField(b, "", "title", quote(f.Title))
	writeField(b, "", "x", formatFloat(f.X))
	writeField(b, "", "y", formatFloat(f.Y))
	writeField(b, "", "w", formatFloat(f.W))
	writeField(b, "", "h", formatFloat(f.H))
	writeField(b, "", "color", quote(f.Color))
	writeField(b, "", "locked", strconv.FormatBool(f.Locked))
	writeRowTail(b, f.UpdatedAt, f.Version, f.DeletedAt, f.Extra)
	b.WriteString(yamlClose + "\n")
}

// Connector writes one connector; connectors come last, in id order.
func (bw *BoardWriter) Connector(c board.Connector) {
	if !bw.section(sectionConnectors, "connector", c.ID) || !bw.inOrder(c.ID, "connector") {
		return
	}
	b := bw.w
	heading := c.Label
	if heading == "" {
		heading = c.From + " → " + c.To
	}
	b.WriteString("\n### " + headingText(heading, "Untitled connector") + "\n\n")
	b.WriteString(yamlOpen + "\n")
	writeField(b, "", "id", quote(c.ID))
	writeField(b, "", "from", quote(c.From))
	writeField(b, "", "to", quote(c.To))
	writeField(b, "", "label", quote(c.Label))
	writeField(b, "", "style", quote(c.Style))
	writeField(b, "", "dash", quote(c.Dash))
	writeField(b, "", "color", quote(c.Color))
	writeRowTail(b, c.UpdatedAt, c.Version, c.DeletedAt, c.Extra)
	b.WriteString(yamlClose + "\n")
}

// writeStructure writes s's frames, then its connectors, each sorted by
// id.
func writeStructure(bw *BoardWriter, s board.State) {
	frames := slices.SortedStableFunc(slices.Values(s.Frames), func(a, b board.Frame) int { return strings.Compare(a.ID, b.ID) })
	for _, f := range frames {
		bw.Frame(f)
	}
	conns := slices.SortedStableFunc(slices.Values(s.Connectors), func(a, b board.Connector) int { return strings.Compare(a.ID, b.ID) })
	for _, c := range conns {
		bw.Connector(c)
	}
}

var (
	frameRecord = recordKind[board.Frame]{
		noun:   "frame",
		decode: decodeFrameFields,
		validate: func(f *board.Frame, what string) error {
			return firstInvalid(what, f.Validate("frame"), checkDeletedAt("frame", f.DeletedAt))
		},
		id: func(f *board.Frame) string { return f.ID },
	}
	connectorRecord = recordKind[board.Connector]{
		noun:   "connector",
		decode: decodeConnectorFields,
		validate: func(c *board.Connector, what string) error {
			return firstInvalid(what, c.Validate("connector"), checkDeletedAt("connector", c.DeletedAt))
		},
		id: func(c *board.Connector) string { return c.ID },
	}
)

func decodeFrameFields(m *yaml.Node, what string) (board.Frame, error) {
	return decodeRow(m, what, "frame", 0, func(f *board.Frame) (*string, map[string]fieldSetter, rowTail) {
		return &f.ID, map[string]fieldSetter{
			"title":  setString(&f.Title),
			"x":      setFloat(&f.X),
			"y":      setFloat(&f.Y),
			"w":      setFloat(&f.W),
			"h":      setFloat(&f.H),
			"color":  setString(&f.Color),
			"locked": setBool(&f.Locked),
		}, rowTail{&f.UpdatedAt, &f.Version, &f.DeletedAt, &f.Extra}
	})
}

func decodeConnectorFields(m *yaml.Node, what string) (board.Connector, error) {
	return decodeRow(m, what, "connector", 0, func(c *board.Connector) (*string, map[string]fieldSetter, rowTail) {
		return &c.ID, map[string]fieldSetter{
			"from":  setString(&c.From),
			"to":    setString(&c.To),
			"label": setString(&c.Label),
			"style": setString(&c.Style),
			"dash":  setString(&c.Dash),
			"color": setString(&c.Color),
		}, rowTail{&c.UpdatedAt, &c.Version, &c.DeletedAt, &c.Extra}
	})
}

// setBool stores a YAML boolean.
func setBool(dst *bool) fieldSetter {
	return func(v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
			return errMust(fmt.Sprintf("must be true or false (got %q)", clip(v.Value, 40)))
		}
		return v.Decode(dst)
	}
}

// itemsEnd reports whether the tracker items end here: at the end of the
// document or at the frames' or connectors' heading.
func (r *boardReader) itemsEnd() bool {
	return r.eof() || r.peek() == framesHeading || r.peek() == connectorsHeading
}

// readStructure reads the optional frames and connectors sections at the
// end of a board snapshot into s. Every connector's ends must be notes or
// frames of the same snapshot: a restore never brings back a dangling one.
func readStructure(r *boardReader, s *board.State) error {
	if !r.eof() && r.peek() == framesHeading {
		r.next()
		r.skipBlank()
		ids := map[string]bool{}
		for !r.eof() && strings.HasPrefix(r.peek(), "### ") {
			f, err := readRecord(r, frameRecord, ids)
			if err != nil {
				return err
			}
			s.Frames = append(s.Frames, f)
		}
	}
	if !r.eof() && r.peek() == connectorsHeading {
		r.next()
		r.skipBlank()
		ids := map[string]bool{}
		for !r.eof() && strings.HasPrefix(r.peek(), "### ") {
			c, err := readRecord(r, connectorRecord, ids)
			if err != nil {
				return err
			}
			s.Connectors = append(s.Connectors, c)
		}
	}
	if !r.eof() {
		return r.errorf("expected a heading \"### …\", %q, %q or the end of the document, found %q.", framesHeading, connectorsHeading, clip(r.peek(), 60))
	}
	return checkEnds(s)
}

// checkEnds refuses a snapshot whose connector names an end that is
// neither a note nor a frame of it.
func checkEnds(s *board.State) error {
	if len(s.Connectors) == 0 {
		return nil
	}
	have := make(map[string]bool, len(s.Notes)+len(s.Frames))
	for _, n := range s.Notes {
		have[n.ID] = true
	}
	for _, f := range s.Frames {
		have[f.ID] = true
	}
	for _, c := range s.Connectors {
		for _, end := range []string{c.From, c.To} {
			if !have[end] {
				return invalidf("board snapshot: connector %q ends on %q, which is neither a note nor a frame of the snapshot.", clip(c.ID, 40), clip(end, 40))
			}
		}
	}
	return nil
}
