package jsoncanvas

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"corkboard/board"
)

// asTypeError is errors.As for json's type errors.
func asTypeError(err error, target any) bool { return errors.As(err, target) }

var sides = map[string]bool{"": true, "top": true, "right": true, "bottom": true, "left": true}

// Check checks a document against the spec and this package's limits: ids
// present and unique, known node types, positive sizes, edge ends that are
// nodes of the document, ends "none" or "arrow", sides top, right, bottom
// or left; at most MaxTextNodes text, file and link nodes (each becomes a
// note), MaxGroupNodes groups and MaxEdges edges.
func (c Canvas) Check() error {
	var notes, groups int
	ids := make(map[string]bool, len(c.Nodes))
	for i, n := range c.Nodes {
		p := fmt.Sprintf("nodes[%d]", i)
		if n.ID == "" {
			return board.FieldErrorf(p+".id", "%s.id is required.", p)
		}
		if ids[n.ID] {
			return board.FieldErrorf(p+".id", "%s.id %q is the id of an earlier node: ids must be unique.", p, n.ID)
		}
		ids[n.ID] = true
		switch n.Type {
		case TypeText, TypeFile, TypeLink:
			notes++
		case TypeGroup:
			groups++
		default:
			return board.FieldErrorf(p+".type", "%s.type must be text, file, link or group.", p)
		}
		if n.Width <= 0 || n.Height <= 0 {
			f := p + ".width"
			if n.Width > 0 {
				f = p + ".height"
			}
			return board.FieldErrorf(f, "%s must be a positive whole number.", f)
		}
	}
	if notes > MaxTextNodes {
		return board.FieldErrorf("nodes", "nodes may hold at most %d text, file and link nodes (got %d): one import is one push.", MaxTextNodes, notes)
	}
	if groups > MaxGroupNodes {
		return board.FieldErrorf("nodes", "nodes may hold at most %d group nodes (got %d).", MaxGroupNodes, groups)
	}
	if len(c.Edges) > MaxEdges {
		return board.FieldErrorf("edges", "edges may hold at most %d edges (got %d).", MaxEdges, len(c.Edges))
	}
	edgeIDs := make(map[string]bool, len(c.Edges))
	for i, e := range c.Edges {
		if err := checkEdge(fmt.Sprintf("edges[%d]", i), e, ids, edgeIDs); err != nil {
			return err
		}
	}
	return nil
}

func checkEdge(p string, e Edge, nodes, seen map[string]bool) error {
	if e.ID == "" {
		return board.FieldErrorf(p+".id", "%s.id is required.", p)
	}
	if seen[e.ID] {
		return board.FieldErrorf(p+".id", "%s.id %q is the id of an earlier edge: ids must be unique.", p, e.ID)
	}
	seen[e.ID] = true
	for _, end := range []struct{ name, node, side, end string }{{"from", e.FromNode, e.FromSide, e.FromEnd}, {"to", e.ToNode, e.ToSide, e.ToEnd}} {
		if !nodes[end.node] {
			return board.FieldErrorf(p+"."+end.name+"Node", "%s.%sNode must be the id of a node of the document (got %q).", p, end.name, end.node)
		}
		if !sides[end.side] {
			return board.FieldErrorf(p+"."+end.name+"Side", "%s.%sSide must be top, right, bottom or left.", p, end.name)
		}
		if end.end != "" && end.end != EndNone && end.end != EndArrow {
			return board.FieldErrorf(p+"."+end.name+"End", "%s.%sEnd must be none or arrow.", p, end.name)
		}
	}
	return nil
}

// fieldNames maps a row's field names, as board validation names them, to
// the document's.
var fieldNames = map[string]string{"title": "text", "content": "text", "w": "width", "h": "height", "from": "fromNode", "to": "toNode"}

// renamed names a board validation error's field as the document does:
// "nodes[3].content" is "nodes[3].text".
func renamed(err error) error {
	var e *board.Error
	if !errors.As(err, &e) || e.Field == "" {
		return err
	}
	i := strings.LastIndexByte(e.Field, '.')
	if i < 0 {
		return err
	}
	name, ok := fieldNames[e.Field[i+1:]]
	if !ok {
		return err
	}
	out := *e
	out.Field = e.Field[:i+1] + name
	out.Message = strings.ReplaceAll(e.Message, e.Field, out.Field)
	return &out
}

// clamp puts v into [lo, hi].
func clamp(v, lo, hi float64) float64 { return math.Min(math.Max(v, lo), hi) }

// ToRows gives the rows a checked canvas makes, each stamped updatedAt
// (an ISO 8601 time), and checks them as a push would (errors name the
// document's fields). Text nodes become notes (a first line "# Title" is
// the title); file and link nodes notes holding the path or the address;
// groups frames; edges connectors. Sizes are brought within the board's
// bounds; a node of the default note size gives a note without one.
func (c Canvas) ToRows(updatedAt string) (Rows, error) {
	if err := c.Check(); err != nil {
		return Rows{}, err
	}
	var r Rows
	for i, n := range c.Nodes {
		p := fmt.Sprintf("nodes[%d]", i)
		if n.Type == TypeGroup {
			f := board.Frame{ID: n.ID, Title: n.Label, X: float64(n.X), Y: float64(n.Y), W: clamp(float64(n.Width), board.MinFrameSize, board.MaxFrameSize), H: clamp(float64(n.Height), board.MinFrameSize, board.MaxFrameSize), Color: boardColor(n.Color), Locked: n.Locked, UpdatedAt: updatedAt}
			if err := f.Validate(p); err != nil {
				return Rows{}, renamed(err)
			}
			r.Frames = append(r.Frames, f)
			continue
		}
		note := board.Note{ID: n.ID, X: float64(n.X), Y: float64(n.Y), Color: boardColor(n.Color), Type: n.NoteType, UpdatedAt: updatedAt}
		switch n.Type {
		case TypeText:
			note.Title, note.Content = splitText(n.Text)
		case TypeFile:
			note.Content = n.File + n.Subpath
		case TypeLink:
			note.Content = "<" + n.URL + ">"
		}
		if n.Width != DefaultNoteW || n.Height != DefaultNoteH {
			note.W = clamp(float64(n.Width), board.MinNoteWidth, board.MaxNoteSize)
			note.H = clamp(float64(n.Height), board.MinNoteHeight, board.MaxNoteSize)
		}
		if err := note.Validate(p); err != nil {
			return Rows{}, renamed(err)
		}
		r.Notes = append(r.Notes, note)
	}
	for i, e := range c.Edges {
		k := board.Connector{ID: e.ID, From: e.FromNode, To: e.ToNode, Label: e.Label, Color: boardColor(e.Color), Style: board.StyleArrow, UpdatedAt: updatedAt}
		if e.ToEnd == EndNone && e.FromEnd != EndArrow {
			k.Style = board.StyleLine
		}
		if e.Dash == board.DashDashed {
			k.Dash = board.DashDashed
		}
		if err := k.Validate(fmt.Sprintf("edges[%d]", i)); err != nil {
			return Rows{}, renamed(err)
		}
		r.Connectors = append(r.Connectors, k)
	}
	return r, nil
}

// Push is the push that writes the rows: each row replaces any row of the
// board with its id (no baseVersion), the others are added.
func (r Rows) Push() board.Push {
	p := board.Push{Notes: board.NoteChanges{Upserted: r.Notes}}
	p.Frames.Upserted = r.Frames
	p.Connectors.Upserted = r.Connectors
	return p
}
