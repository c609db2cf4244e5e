package transport

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"corkboard/board"
	"corkboard/jsoncanvas"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// canvasShape is a JSON Canvas document (POST /canvas), read as it streams
// like every body (docs/api.md, "How bodies are decoded"). JSON Canvas is an
// open format whose readers ignore what they do not know, so unknown keys
// are skipped. The lists are bounded while read; the kinds of nodes are
// counted by Check.
var canvasShape = jsondec.NewShape(jsondec.Skip[jsoncanvas.Canvas],
	jsondec.Array("nodes", jsoncanvas.MaxNodes, func(c *jsoncanvas.Canvas) *[]jsoncanvas.Node { return &c.Nodes }, canvasNodeShape.Decode),
	jsondec.Array("edges", jsoncanvas.MaxEdges, func(c *jsoncanvas.Canvas) *[]jsoncanvas.Edge { return &c.Edges }, canvasEdgeShape.Decode),
)

var canvasNodeShape = jsondec.NewShape(jsondec.Skip[jsoncanvas.Node],
	jsondec.String("id", func(n *jsoncanvas.Node) *string { return &n.ID }),
	jsondec.String("type", func(n *jsoncanvas.Node) *string { return &n.Type }),
	jsondec.Int64("x", func(n *jsoncanvas.Node) *int64 { return &n.X }),
	jsondec.Int64("y", func(n *jsoncanvas.Node) *int64 { return &n.Y }),
	jsondec.Int64("width", func(n *jsoncanvas.Node) *int64 { return &n.Width }),
	jsondec.Int64("height", func(n *jsoncanvas.Node) *int64 { return &n.Height }),
	jsondec.String("color", func(n *jsoncanvas.Node) *string { return &n.Color }),
	jsondec.String("text", func(n *jsoncanvas.Node) *string { return &n.Text }),
	jsondec.String("file", func(n *jsoncanvas.Node) *string { return &n.File }),
	jsondec.String("subpath", func(n *jsoncanvas.Node) *string { return &n.Subpath }),
	jsondec.String("url", func(n *jsoncanvas.Node) *string { return &n.URL }),
	jsondec.String("label", func(n *jsoncanvas.Node) *string { return &n.Label }),
	jsondec.String("background", func(n *jsoncanvas.Node) *string { return &n.Background }),
	jsondec.String("backgroundStyle", func(n *jsoncanvas.Node) *string { return &n.BackgroundStyle }),
	jsondec.String("noteType", func(n *jsoncanvas.Node) *string { return &n.NoteType }),
	jsondec.Bool("locked", func(n *jsoncanvas.Node) *bool { return &n.Locked }),
)

var canvasEdgeShape = jsondec.NewShape(jsondec.Skip[jsoncanvas.Edge],
	jsondec.String("id", func(e *jsoncanvas.Edge) *string { return &e.ID }),
	jsondec.String("fromNode", func(e *jsoncanvas.Edge) *string { return &e.FromNode }),
	jsondec.String("fromSide", func(e *jsoncanvas.Edge) *string { return &e.FromSide }),
	jsondec.String("fromEnd", func(e *jsoncanvas.Edge) *string { return &e.FromEnd }),
	jsondec.String("toNode", func(e *jsoncanvas.Edge) *string { return &e.ToNode }),
	jsondec.String("toSide", func(e *jsoncanvas.Edge) *string { return &e.ToSide }),
	jsondec.String("toEnd", func(e *jsoncanvas.Edge) *string { return &e.ToEnd }),
	jsondec.String("color", func(e *jsoncanvas.Edge) *string { return &e.Color }),
	jsondec.String("label", func(e *jsoncanvas.Edge) *string { return &e.Label }),
	jsondec.String("dash", func(e *jsoncanvas.Edge) *string { return &e.Dash }),
)

func (s *Server) registerCanvasRoutes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(s.requireBoard)
		// GET /api/boards/{boardId}/canvas[?download=1]
		r.Get("/boards/{boardId}/canvas", s.handleExportCanvas)
		// POST /api/boards/{boardId}/canvas
		r.With(s.limitLargeBodies(limitPushBody)).Post("/boards/{boardId}/canvas", s.handleImportCanvas)
	})
}

// handleExportCanvas is GET /api/boards/{boardId}/canvas: the board as a
// JSON Canvas 1.0 document (docs/jsoncanvas.md); ?download=1 adds
// Content-Disposition: attachment, <board name>.canvas. Viewers may export.
func (s *Server) handleExportCanvas(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	download, err := boolParam(r, "download")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := s.db.BoardState(r.Context(), a.Board.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if download {
		// The state's name, not the access record's: that one is cached and may miss a recent rename.
		name := st.Board.Name
		if name == "" {
			name = a.Board.ID
		}
		w.Header().Set("Content-Disposition", attachment(name+".canvas", a.Board.ID+".canvas"))
	}
	respond.JSON(w, http.StatusOK, jsoncanvas.FromState(st))
}

// canvasImported is the answer to an import: the board's version after it
// and how many rows the document wrote.
type canvasImported struct {
	ServerVersion int64 `json:"serverVersion"`
	Notes         int   `json:"notes"`
	Frames        int   `json:"frames"`
	Connectors    int   `json:"connectors"`
}

// handleImportCanvas is POST /api/boards/{boardId}/canvas: the body is a
// JSON Canvas document, written to the board as one push (notes, frames
// and connectors with the document's ids; a row of the board with the same
// id is replaced, the others are added). Order: 403 for a viewer before
// the body is read, the Idempotency-Key header, a body over 64 MiB 413,
// then 400 naming the document's field ("nodes[3].text") with nothing
// applied.
func (s *Server) handleImportCanvas(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	if !a.CanEdit {
		s.writeError(w, r, board.Errorf(board.EFORBIDDEN, "You can view this board but not edit it, so you cannot import into it."))
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var c jsoncanvas.Canvas
	if err := reqbody.Decode(w, r, limitPushBody, canvasShape.Into(&c)); err != nil {
		s.writeError(w, r, err)
		return
	}
	rows, err := c.ToRows(s.now().UTC().Format(time.RFC3339))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	push := rows.Push()
	if err := push.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The document's rows are whole: their locks are as the document
	// says (only the owner may set one, board.SettleRights).
	for i := range push.Frames.Upserted {
		push.Frames.Upserted[i].LockedSent = true
	}
	push.Author = a.Author()
	version, _, err := s.hub.Push(r.Context(), a.Board.ID, &push, key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, canvasImported{ServerVersion: version, Notes: len(rows.Notes), Frames: len(rows.Frames), Connectors: len(rows.Connectors)})
}
