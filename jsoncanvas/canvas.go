// Package jsoncanvas holds JSON Canvas 1.0 documents (jsoncanvas.org, the
// open format of Obsidian Canvas) and their conversion from and to a
// board's rows: notes are text nodes with their Markdown, frames group
// nodes, connectors edges (docs/api.md, "JSON Canvas export and import").
package jsoncanvas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"corkboard/board"
)

// Node types and edge ends of JSON Canvas 1.0.
const (
	TypeText  = "text"
	TypeFile  = "file"
	TypeLink  = "link"
	TypeGroup = "group"
	EndNone   = "none"
	EndArrow  = "arrow"
)

// Canvas is a JSON Canvas document: nodes in z order (first is lowest),
// then the edges between them.
type Canvas struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is a JSON Canvas node. The spec's fields come first; NoteType,
// Locked and the others after them are Corkboard's, kept so a board
// survives the round trip (JSON Canvas readers ignore fields they do not know).
type Node struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	X      int64  `json:"x"`
	Y      int64  `json:"y"`
	Width  int64  `json:"width"`
	Height int64  `json:"height"`
	Color  string `json:"color,omitempty"`
	// Text is a text node's Markdown.
	Text string `json:"text,omitempty"`
	// File and Subpath are a file node's; URL a link node's.
	File    string `json:"file,omitempty"`
	Subpath string `json:"subpath,omitempty"`
	URL     string `json:"url,omitempty"`
	// Label, Background and BackgroundStyle are a group node's.
	Label           string `json:"label,omitempty"`
	Background      string `json:"background,omitempty"`
	BackgroundStyle string `json:"backgroundStyle,omitempty"`
	// NoteType is Corkboard's: the note's type ("sticky", "decision", …).
	NoteType string `json:"noteType,omitempty"`
	// Locked is Corkboard's: a frame locked against moves.
	Locked bool `json:"locked,omitempty"`
}

// Edge is a JSON Canvas edge from one node to another.
type Edge struct {
	ID       string `json:"id"`
	FromNode string `json:"fromNode"`
	FromSide string `json:"fromSide,omitempty"`
	FromEnd  string `json:"fromEnd,omitempty"`
	ToNode   string `json:"toNode"`
	ToSide   string `json:"toSide,omitempty"`
	ToEnd    string `json:"toEnd,omitempty"`
	Color    string `json:"color,omitempty"`
	Label    string `json:"label,omitempty"`
	// Dash is Corkboard's: "dashed" for a dashed connector (JSON Canvas has none).
	Dash string `json:"dash,omitempty"`
}

// Rows are a board's rows as a canvas brings them: what one push carries.
type Rows struct {
	Notes      []board.Note
	Frames     []board.Frame
	Connectors []board.Connector
}

// Limits of one document: what one push can carry (board.MaxUpsertedNotes
// and the others), so an import is applied whole or not at all.
const (
	MaxTextNodes  = board.MaxUpsertedNotes
	MaxGroupNodes = board.MaxUpsertedFrames
	MaxEdges      = board.MaxUpsertedConnectors
	// MaxNodes bounds the nodes list while it is read, before the kinds are counted.
	MaxNodes = MaxTextNodes + MaxGroupNodes
)

// DefaultNoteW and DefaultNoteH are the size of a note that has none (the
// browser's default): what a text node gets, and the size that comes back
// as "none".
const (
	DefaultNoteW = 220
	DefaultNoteH = 160
)

// colors maps the board's note colours to JSON Canvas's six presets ("1"
// red … "6" purple); gray has no preset and goes as its hex.
var colors = []struct{ board, canvas string }{
	{"pink", "1"}, {"orange", "2"}, {"yellow", "3"}, {"green", "4"}, {"blue", "5"}, {"purple", "6"}, {"gray", "#e5e7eb"},
}

func canvasColor(c string) string {
	for _, m := range colors {
		if m.board == c {
			return m.canvas
		}
	}
	return c // a colour of another client, or a hex: kept as it is
}

func boardColor(c string) string {
	for _, m := range colors {
		if strings.EqualFold(m.canvas, c) {
			return m.board
		}
	}
	return c
}

// round gives the integer JSON Canvas positions and sizes need.
func round(v float64) int64 { return int64(math.Round(v)) }

// noteText is a note's Markdown as one text: the title as a first-level
// heading, a blank line, the content.
func noteText(n board.Note) string {
	if n.Title == "" {
		return n.Content
	}
	if n.Content == "" {
		return "# " + n.Title
	}
	return "# " + n.Title + "\n\n" + n.Content
}

// splitText is noteText's inverse: a first line "# Title" is the title.
func splitText(text string) (title, content string) {
	first, rest, _ := strings.Cut(text, "\n")
	t, ok := strings.CutPrefix(first, "# ")
	if !ok {
		return "", text
	}
	return strings.TrimSpace(t), strings.TrimPrefix(rest, "\n")
}

// FromRows builds the canvas of a board's live rows: frames first (group
// nodes under the notes, as they are drawn), then notes, then connectors.
func FromRows(r Rows) Canvas {
	c := Canvas{Nodes: make([]Node, 0, len(r.Frames)+len(r.Notes)), Edges: make([]Edge, 0, len(r.Connectors))}
	for _, f := range r.Frames {
		c.Nodes = append(c.Nodes, Node{ID: f.ID, Type: TypeGroup, X: round(f.X), Y: round(f.Y), Width: round(f.W), Height: round(f.H), Color: canvasColor(f.Color), Label: f.Title, Locked: f.Locked})
	}
	for _, n := range r.Notes {
		w, h := n.W, n.H
		if w == 0 || h == 0 {
			w, h = DefaultNoteW, DefaultNoteH
		}
		c.Nodes = append(c.Nodes, Node{ID: n.ID, Type: TypeText, X: round(n.X), Y: round(n.Y), Width: round(w), Height: round(h), Color: canvasColor(n.Color), Text: noteText(n), NoteType: n.Type})
	}
	for _, k := range r.Connectors {
		e := Edge{ID: k.ID, FromNode: k.From, ToNode: k.To, FromEnd: EndNone, ToEnd: EndArrow, Color: canvasColor(k.Color), Label: k.Label}
		if k.Style == board.StyleLine {
			e.ToEnd = EndNone
		}
		if k.Dash == board.DashDashed {
			e.Dash = board.DashDashed
		}
		c.Edges = append(c.Edges, e)
	}
	return c
}

// FromState is FromRows of a board's state.
func FromState(st *board.State) Canvas {
	return FromRows(Rows{Notes: st.Notes, Frames: st.Frames, Connectors: st.Connectors})
}

// Decode reads a JSON Canvas document (a file) and checks it (Check).
// Errors are board field errors naming the place, e.g. "nodes[3].width".
// The server decodes request bodies with its own streaming decoder
// (transport's canvasShape) and calls Check; this is for files and tests.
func Decode(r io.Reader) (Canvas, error) {
	var raw struct {
		Nodes []json.RawMessage `json:"nodes"`
		Edges []json.RawMessage `json:"edges"`
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if !errors.As(err, &se) && !errors.As(err, &te) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			// The reader's own error (a body over its limit): the caller's to answer.
			return Canvas{}, fmt.Errorf("read the JSON Canvas document: %w", err)
		}
		return Canvas{}, board.FieldErrorf("", "The file is not a JSON Canvas document: %v.", err)
	}
	if dec.More() {
		return Canvas{}, board.FieldErrorf("", "The file has more after the JSON Canvas document.")
	}
	var c Canvas
	c.Nodes = make([]Node, len(raw.Nodes))
	for i, m := range raw.Nodes {
		if err := decodeOne(m, &c.Nodes[i], fmt.Sprintf("nodes[%d]", i)); err != nil {
			return Canvas{}, err
		}
	}
	c.Edges = make([]Edge, len(raw.Edges))
	for i, m := range raw.Edges {
		if err := decodeOne(m, &c.Edges[i], fmt.Sprintf("edges[%d]", i)); err != nil {
			return Canvas{}, err
		}
	}
	return c, c.Check()
}

func decodeOne(m json.RawMessage, v any, path string) error {
	if bytes.Equal(bytes.TrimSpace(m), []byte("null")) {
		return board.FieldErrorf(path, "%s must be an object.", path)
	}
	if err := json.Unmarshal(m, v); err != nil {
		var te *json.UnmarshalTypeError
		if asTypeError(err, &te) && te.Field != "" {
			f := path + "." + te.Field
			return board.FieldErrorf(f, "%s must be a %s.", f, kindName(te.Type.Kind().String()))
		}
		return board.FieldErrorf(path, "%s is not valid: %v.", path, err)
	}
	return nil
}

func kindName(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "float"):
		return "whole number"
	case k == "bool":
		return "boolean"
	}
	return k
}
