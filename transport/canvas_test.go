package transport_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/jsoncanvas"
)

// noteRows keeps of notes what a person sees (not versions or times).
func noteRows(ns []board.Note) []board.Note {
	out := make([]board.Note, len(ns))
	for i, n := range ns {
		out[i] = board.Note{ID: n.ID, Title: n.Title, Content: n.Content, X: n.X, Y: n.Y, W: n.W, H: n.H, Color: n.Color, Type: n.Type}
	}
	return out
}

// sameStructure fails unless two boards' frames and connectors are the same rows (versions and times aside).
func sameStructure(t *testing.T, first, second *board.Changes) {
	t.Helper()
	for i := range first.Frames {
		first.Frames[i].Version, first.Frames[i].UpdatedAt = 0, ""
	}
	for i := range second.Frames {
		second.Frames[i].Version, second.Frames[i].UpdatedAt = 0, ""
	}
	if !jsonEqual(second.Frames, first.Frames) {
		t.Errorf("the imported board's frames:\n got %+v\nwant %+v", second.Frames, first.Frames)
	}
	for i := range first.Connectors {
		first.Connectors[i].Version, first.Connectors[i].UpdatedAt = 0, ""
	}
	for i := range second.Connectors {
		second.Connectors[i].Version, second.Connectors[i].UpdatedAt = 0, ""
	}
	if !jsonEqual(second.Connectors, first.Connectors) || len(second.Connectors) != 2 {
		t.Errorf("the imported board's connectors:\n got %+v\nwant %+v", second.Connectors, first.Connectors)
	}
}

// TestCanvasExportImport: a board exported as JSON Canvas and imported into a
// new board gives that board the same notes.
func TestCanvasExportImport(t *testing.T) {
	e := newEnv(t)
	ada := e.claim("ada@example.com", "first")
	const at = "2026-11-27T01:00:00Z"
	p := notePush(
		board.Note{ID: "a", Title: "Plan", Content: "Some **bold** text\n\n- one", X: 10, Y: -20, W: 300, H: 240, Color: "blue", Type: "sticky", UpdatedAt: at},
		board.Note{ID: "b", Content: "No title", X: 400, Y: 0, Color: "gray", Type: "decision", UpdatedAt: at},
	)
	p.Frames.Upserted = []board.Frame{{ID: "f", Title: "Sprint", X: -40, Y: -60, W: 800, H: 400, Color: "green", Locked: true, UpdatedAt: at}}
	p.Connectors.Upserted = []board.Connector{{ID: "k", From: "a", To: "b", Label: "then", Style: board.StyleArrow, Color: "blue", UpdatedAt: at}, {ID: "l", From: "b", To: "f", Style: board.StyleLine, Dash: board.DashDashed, UpdatedAt: at}}
	e.pushOK(ada, "first", p)

	r := e.do("GET", "/api/boards/first/canvas?download=1", ada, nil)
	r.wantStatus(t, http.StatusOK)
	if cd := r.header.Get("Content-Disposition"); !strings.Contains(cd, "first.canvas") {
		t.Errorf("Content-Disposition = %q, want an attachment first.canvas", cd)
	}
	var c jsoncanvas.Canvas
	if err := json.Unmarshal(r.body, &c); err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Nodes), 3; got != want || c.Nodes[0].Type != "group" || c.Nodes[1].Text != "# Plan\n\nSome **bold** text\n\n- one" || c.Nodes[1].Color != "5" || len(c.Edges) != 2 {
		t.Fatalf("export = %s: want a group, then 2 text nodes, the first with the note's Markdown and colour 5, and 2 edges", r.body)
	}

	e.claimAs(ada, "second")
	imp := e.post("/api/boards/second/canvas", ada, r.body).wantObject(t, http.StatusOK)
	if imp["notes"] != 2.0 || imp["frames"] != 1.0 || imp["connectors"] != 2.0 || imp["serverVersion"] != 1.0 {
		t.Errorf("import answered %v", imp)
	}
	first, second := e.pull(ada, "first", 0), e.pull(ada, "second", 0)
	if got, want := noteRows(second.Notes), noteRows(first.Notes); !jsonEqual(got, want) {
		t.Errorf("the imported board's notes:\n got %+v\nwant %+v", got, want)
	}
	sameStructure(t, first, second)
	// Imported again into the same board: the rows with the same ids are replaced, not doubled.
	e.post("/api/boards/second/canvas", ada, r.body).wantStatus(t, http.StatusOK)
	if got := len(e.pull(ada, "second", 0).Notes); got != 2 {
		t.Errorf("after a second import the board has %d notes, want 2", got)
	}
}

func TestCanvasImportRefusals(t *testing.T) {
	e := newEnv(t)
	ada := e.claim("ada@example.com", "board")
	node := func(id, text string) string {
		return `{"id":"` + id + `","type":"text","x":0,"y":0,"width":300,"height":200,"text":"` + text + `"}`
	}
	nodes := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(node(fmt.Sprintf("n%d", i), "x"))
		}
		return b.String()
	}
	for _, tt := range []struct {
		name, body, field string
		status            int
	}{
		{"NotJSON", `{"nodes":`, "", http.StatusBadRequest},
		{"EdgeToNowhere", `{"nodes":[` + node("a", "x") + `],"edges":[{"id":"e","fromNode":"a","toNode":"zz"}]}`, "edges[0].toNode", http.StatusBadRequest},
		// The first node is fine, the second is not: nothing is applied.
		{"SecondNodeTooLong", `{"nodes":[` + node("a", "x") + `,` + node("b", strings.Repeat("y", board.MaxNoteContent+1)) + `]}`, "nodes[1].text", http.StatusBadRequest},
		{"WidthZero", `{"nodes":[{"id":"a","type":"text","x":0,"y":0,"width":0,"height":200}]}`, "nodes[0].width", http.StatusBadRequest},
		{"XNotANumber", `{"nodes":[{"id":"a","type":"text","x":"left","y":0,"width":300,"height":200}]}`, "nodes[0].x", http.StatusBadRequest},
		{"NodesOverLimit", `{"nodes":[` + strings.Repeat(node("a", "x")+",", jsoncanvas.MaxNodes) + node("z", "x") + `]}`, "nodes", http.StatusBadRequest},
		{"TextNodesOverLimit", `{"nodes":[` + nodes(jsoncanvas.MaxTextNodes+1) + `]}`, "nodes", http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.post("/api/boards/board/canvas", ada, tt.body).wantError(t, tt.status, tt.field)
		})
	}
	if ch := e.pull(ada, "board", 0); ch.ServerVersion != 0 || len(ch.Notes) != 0 {
		t.Errorf("after the refusals the board is at version %d with %d notes, want nothing applied", ch.ServerVersion, len(ch.Notes))
	}

	t.Run("TextNodesAtLimit", func(t *testing.T) {
		e.claimAs(ada, "full")
		got := e.post("/api/boards/full/canvas", ada, `{"nodes":[`+nodes(jsoncanvas.MaxTextNodes)+`]}`).wantObject(t, http.StatusOK)
		if got["notes"] != float64(jsoncanvas.MaxTextNodes) {
			t.Errorf("answer %v, want %d notes", got, jsoncanvas.MaxTextNodes)
		}
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		// Refused on its Content-Length, before a byte is read.
		e.post("/api/boards/board/canvas", ada, strings.Repeat(" ", 64<<20+1)).wantStatus(t, http.StatusRequestEntityTooLarge)
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		viewer := e.invite(ada, "board", "viewer@example.com", "free")
		e.post("/api/boards/board/canvas", viewer, `{"nodes":[`+node("a", "x")+`]}`).wantStatus(t, http.StatusForbidden)
		// A viewer may export.
		e.do("GET", "/api/boards/board/canvas", viewer, nil).wantStatus(t, http.StatusOK)
	})
	t.Run("ErrNotAMember", func(t *testing.T) {
		eve := e.login("eve@example.com")
		e.do("GET", "/api/boards/board/canvas", eve, nil).wantStatus(t, http.StatusForbidden)
	})
}
