package jsoncanvas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/jsoncanvas"
)

const stamp = "2026-11-27T01:00:00Z"

func decodeFile(tb testing.TB, name string) jsoncanvas.Canvas {
	tb.Helper()
	f, err := os.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	c, err := jsoncanvas.Decode(f)
	if err != nil {
		tb.Fatalf("Decode(%s): %v", name, err)
	}
	return c
}

// TestCanvasBoardCanvas: JSON Canvas → board rows → JSON Canvas gives the same nodes and edges
// (groups first, as the board draws them; the sample already is in that order).
func TestCanvasBoardCanvas(t *testing.T) {
	in := decodeFile(t, "testdata/sample.canvas")
	rows, err := in.ToRows(stamp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := [3]int{len(rows.Notes), len(rows.Frames), len(rows.Connectors)}, [3]int{4, 1, 2}; got != want {
		t.Fatalf("rows (notes, frames, connectors) = %v, want %v", got, want)
	}
	if n := rows.Notes[0]; n.Title != "Goal" || !strings.HasPrefix(n.Content, "Ship **1.0**") || n.Color != "yellow" || n.W != 0 {
		t.Errorf("the first note is %+v: want title Goal, the Markdown content, yellow, the default size", n)
	}
	if got, want := rows.Connectors[1].Style, board.StyleLine; got != want {
		t.Errorf("e2's style = %q, want %q", got, want)
	}
	out := jsoncanvas.FromRows(rows)
	if !reflect.DeepEqual(out.Nodes, in.Nodes) {
		t.Errorf("nodes after the round trip:\n got %+v\nwant %+v", out.Nodes, in.Nodes)
	}
	if !reflect.DeepEqual(out.Edges, in.Edges) {
		t.Errorf("edges after the round trip:\n got %+v\nwant %+v", out.Edges, in.Edges)
	}
}

// TestBoardCanvasBoard: board rows → JSON Canvas (as JSON) → board rows gives the same rows.
func TestBoardCanvasBoard(t *testing.T) {
	in := jsoncanvas.Rows{
		Notes: []board.Note{
			{ID: "a", Title: "Plan", Content: "Some **bold** text\n\n- one\n- two", X: 10, Y: -20, W: 300, H: 240, Color: "blue", Type: "sticky", UpdatedAt: stamp},
			{ID: "b", Content: "No title", X: 400, Y: 0, Color: "gray", Type: "decision", UpdatedAt: stamp},
			{ID: "c", Title: "Only a title", X: 0, Y: 400, Color: "teal", UpdatedAt: stamp},
		},
		Frames:     []board.Frame{{ID: "f", Title: "Sprint", X: -50, Y: -50, W: 800, H: 600, Color: "green", Locked: true, UpdatedAt: stamp}},
		Connectors: []board.Connector{{ID: "k1", From: "a", To: "b", Label: "then", Style: board.StyleArrow, Color: "pink", UpdatedAt: stamp}, {ID: "k2", From: "b", To: "f", Style: board.StyleLine, Dash: board.DashDashed, UpdatedAt: stamp}},
	}
	data, err := json.Marshal(jsoncanvas.FromRows(in))
	if err != nil {
		t.Fatal(err)
	}
	c, err := jsoncanvas.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Decode(our own export): %v\n%s", err, data)
	}
	out, err := c.ToRows(stamp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("rows after the round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestFromRowsSpecShape(t *testing.T) {
	c := jsoncanvas.FromRows(jsoncanvas.Rows{Notes: []board.Note{{ID: "a", Title: "T", X: 1.4, Y: 2.6, Color: "pink"}}})
	data, _ := json.Marshal(c)
	want := `{"nodes":[{"id":"a","type":"text","x":1,"y":3,"width":220,"height":160,"color":"1","text":"# T"}],"edges":[]}`
	if string(data) != want {
		t.Errorf("export = %s\nwant %s", data, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	text := func(n int) string { return strings.Repeat("x", n) }
	nodes := func(n int, typ string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"n%d","type":%q,"x":0,"y":0,"width":300,"height":200}`, i, typ)
		}
		return `{"nodes":[` + b.String() + `]}`
	}
	edges := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `,{"id":"e%d","fromNode":"a","toNode":"b"}`, i)
		}
		return `{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200},{"id":"b","type":"text","x":0,"y":0,"width":300,"height":200}],"edges":[` + b.String()[min(1, b.Len()):] + `]}`
	}
	one := func(node string) string { return `{"nodes":[` + node + `]}` }
	for _, tt := range []struct {
		name, doc, field string // field "" means accepted
	}{
		{"Empty", `{}`, ""},
		{"NotJSON", `{"nodes": [`, ""},
		{"TwoDocuments", `{} {}`, ""},
		{"NoID", one(`{"type":"text","x":0,"y":0,"width":300,"height":200}`), "nodes[0].id"},
		{"DuplicateID", one(`{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200},{"id":"a","type":"group","x":0,"y":0,"width":300,"height":200}`), "nodes[1].id"},
		{"UnknownType", one(`{"id":"a","type":"circle","x":0,"y":0,"width":300,"height":200}`), "nodes[0].type"},
		{"ZeroWidth", one(`{"id":"a","type":"text","x":0,"y":0,"width":0,"height":200}`), "nodes[0].width"},
		{"XNotANumber", one(`{"id":"a","type":"text","x":"left","y":0,"width":300,"height":200}`), "nodes[0].x"},
		{"NullNode", one(`null`), "nodes[0]"},
		{"XTooFar", one(`{"id":"a","type":"text","x":2000000000,"y":0,"width":300,"height":200}`), "nodes[0].x"},
		{"TextAtLimit", one(`{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200,"text":"` + text(board.MaxNoteContent) + `"}`), ""},
		{"TextOverLimit", one(`{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200,"text":"` + text(board.MaxNoteContent+1) + `"}`), "nodes[0].text"},
		{"TextNodesAtLimit", nodes(jsoncanvas.MaxTextNodes, "text"), ""},
		{"TextNodesOverLimit", nodes(jsoncanvas.MaxTextNodes+1, "text"), "nodes"},
		{"GroupsAtLimit", nodes(jsoncanvas.MaxGroupNodes, "group"), ""},
		{"GroupsOverLimit", nodes(jsoncanvas.MaxGroupNodes+1, "group"), "nodes"},
		{"EdgesAtLimit", edges(jsoncanvas.MaxEdges), ""},
		{"EdgesOverLimit", edges(jsoncanvas.MaxEdges + 1), "edges"},
		{"EdgeToNowhere", `{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200}],"edges":[{"id":"e","fromNode":"a","toNode":"zz"}]}`, "edges[0].toNode"},
		{"EdgeBadEnd", `{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200},{"id":"b","type":"text","x":0,"y":0,"width":300,"height":200}],"edges":[{"id":"e","fromNode":"a","toNode":"b","toEnd":"circle"}]}`, "edges[0].toEnd"},
		{"EdgeBadSide", `{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200},{"id":"b","type":"text","x":0,"y":0,"width":300,"height":200}],"edges":[{"id":"e","fromNode":"a","toNode":"b","fromSide":"middle"}]}`, "edges[0].fromSide"},
		{"EdgeToItself", `{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":300,"height":200}],"edges":[{"id":"e","fromNode":"a","toNode":"a"}]}`, "edges[0].toNode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := jsoncanvas.Decode(strings.NewReader(tt.doc))
			if err == nil {
				_, err = c.ToRows(stamp)
			}
			invalidJSON := tt.name == "NotJSON" || tt.name == "TwoDocuments"
			var e *board.Error
			switch {
			case tt.field == "" && !invalidJSON && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.field == "" && !invalidJSON:
				return
			case !errors.As(err, &e) || e.Code != board.EINVALID:
				t.Fatalf("err = %v, want an EINVALID board error", err)
			case e.Field != tt.field:
				t.Fatalf("field = %q (%s), want %q", e.Field, e.Message, tt.field)
			}
		})
	}
}

// TestToRowsSizes: sizes outside the board's bounds are brought inside; the default note size is no size.
func TestToRowsSizes(t *testing.T) {
	c := jsoncanvas.Canvas{Nodes: []jsoncanvas.Node{
		{ID: "small", Type: jsoncanvas.TypeText, Width: 50, Height: 20},
		{ID: "huge", Type: jsoncanvas.TypeText, Width: 9000, Height: 9000},
		{ID: "link", Type: jsoncanvas.TypeLink, Width: 220, Height: 160, URL: "https://example.com"},
		{ID: "g", Type: jsoncanvas.TypeGroup, Width: 10, Height: 10},
	}}
	r, err := c.ToRows(stamp)
	if err != nil {
		t.Fatal(err)
	}
	got := [][2]float64{{r.Notes[0].W, r.Notes[0].H}, {r.Notes[1].W, r.Notes[1].H}, {r.Notes[2].W, r.Notes[2].H}, {r.Frames[0].W, r.Frames[0].H}}
	want := [][2]float64{{board.MinNoteWidth, board.MinNoteHeight}, {board.MaxNoteSize, board.MaxNoteSize}, {0, 0}, {board.MinFrameSize, board.MinFrameSize}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sizes = %v, want %v", got, want)
	}
	if got, want := r.Notes[2].Content, "<https://example.com>"; got != want {
		t.Errorf("a link node's note holds %q, want %q", got, want)
	}
}

func FuzzDecode(f *testing.F) {
	sample, _ := os.ReadFile("testdata/sample.canvas")
	f.Add(sample)
	f.Add([]byte(`{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":1,"height":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := jsoncanvas.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		r, err := c.ToRows(stamp)
		if err != nil {
			return
		}
		// What is accepted is a valid push.
		p := r.Push()
		if err := p.Validate(); err != nil {
			t.Fatalf("ToRows gave an invalid push: %v", err)
		}
	})
}
