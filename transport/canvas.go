package transport

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"corkboard/board"
	"corkboard/jsoncanvas"
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
	a := boardAccess(r.Context())
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
	writeJSON(w, http.StatusOK, jsoncanvas.FromState(st))
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
	a := boardAccess(r.Context())
	if !a.CanEdit {
		s.writeError(w, r, board.Errorf(board.EFORBIDDEN, "You can view this board but not edit it, so you cannot import into it."))
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := bodyReader(w, r, limitPushBody)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := jsoncanvas.Decode(body)
	if err != nil {
		s.writeError(w, r, readError(err, limitPushBody))
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
	version, _, err := s.hub.Push(r.Context(), a.Board.ID, &push, key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, canvasImported{ServerVersion: version, Notes: len(rows.Notes), Frames: len(rows.Frames), Connectors: len(rows.Connectors)})
}
