package transport

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"corkboard/board"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// registerTimerRoutes adds the board's timer and the server's clock
// (docs/api.md, "The board's timer"). The clock needs no session: it says
// nothing about anyone, and whoever shows a board (a read-only link too)
// needs it to count down.
func (s *Server) registerTimerRoutes(r chi.Router) {
	// GET /api/time
	r.Get("/time", s.handleTime)
	r.Group(func(r chi.Router) {
		r.Use(s.requireSession, s.requireBoard)
		// POST /api/boards/{boardId}/timer
		r.Post("/boards/{boardId}/timer", s.ownerOnly(s.handleTimer))
	})
}

// timerActionShape is a POST /timer body: a board.TimerAction, nothing
// else.
var timerActionShape = jsondec.NewShape(jsondec.Refuse[board.TimerAction],
	jsondec.String("action", func(a *board.TimerAction) *string { return &a.Action }),
	jsondec.Int64("durationMs", func(a *board.TimerAction) *int64 { return &a.DurationMs }),
	jsondec.String("phaseId", func(a *board.TimerAction) *string { return &a.PhaseID }),
)

// timerBody is the answer to a timer action: the board's timer (null for
// none) at serverVersion, and the server's clock as it answered.
type timerBody struct {
	Timer         *board.Timer `json:"timer"`
	ServerVersion int64        `json:"serverVersion"`
	ServerTime    int64        `json:"serverTime"`
}

// timeBody is the answer of GET /api/time.
type timeBody struct {
	ServerTime int64 `json:"serverTime"`
}

// handleTime is GET /api/time: the server's clock in unix milliseconds, for
// clients to estimate their offset from it (several samples, the one with
// the shortest round trip kept). It reads nothing and is never cached.
func (s *Server) handleTime(w http.ResponseWriter, r *http.Request) {
	respond.JSON(w, http.StatusOK, timeBody{ServerTime: s.now().UnixMilli()})
	reqctx.LogQuietly(r.Context())
}

// handleTimer is POST /api/boards/{boardId}/timer, for the board's owner
// (its facilitator): the action goes through the board's room as a push,
// so that it takes a version and reaches every client with the board
// header, and the store applies it with its transaction's clock. 400
// naming the field, 409 for pause, resume or add without a timer; the
// answer is the timer as the board has it after the action.
func (s *Server) handleTimer(w http.ResponseWriter, r *http.Request) {
	var act board.TimerAction
	push := func(by string) *board.Push {
		act.By = by
		return &board.Push{Timer: &act}
	}
	if _, ok := s.pushAction(w, r, timerActionShape.Into(&act), act.Validate, push); !ok {
		return
	}
	// Read back rather than kept from the push: the timer and version as
	// stored, which a later action may already have moved.
	b, err := s.db.FindBoard(r.Context(), reqctx.Access(r.Context()).Board.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, timerBody{Timer: b.Timer, ServerVersion: b.Version, ServerTime: s.now().UnixMilli()})
}
