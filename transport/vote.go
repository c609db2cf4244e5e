package transport

import (
	"crypto/rand"
	"net/http"

	"github.com/go-chi/chi/v5"

	"corkboard/board"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// registerVoteRoutes adds the board's dot vote (docs/api.md, "Dot
// voting"): the owner runs it, every member votes, viewers too: a dot is
// not an edit of the board (it changes no note), as a pointer is not.
func (s *Server) registerVoteRoutes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(s.requireSession, s.requireBoard)
		// POST /api/boards/{boardId}/vote
		r.Post("/boards/{boardId}/vote", s.ownerOnly(s.handleVote))
		// POST /api/boards/{boardId}/votes
		r.Post("/boards/{boardId}/votes", s.handleDot)
		// GET /api/boards/{boardId}/votes/mine
		r.Get("/boards/{boardId}/votes/mine", s.handleMyDots)
	})
}

// voteScopeShape is a vote's scope object.
var voteScopeShape = jsondec.NewShape(jsondec.Refuse[board.VoteScope],
	jsondec.String("kind", func(sc *board.VoteScope) *string { return &sc.Kind }),
	jsondec.String("frameId", func(sc *board.VoteScope) *string { return &sc.FrameID }),
	jsondec.String("type", func(sc *board.VoteScope) *string { return &sc.Type }),
)

// voteActionShape is a POST /vote body. Fields left out keep the defaults
// board.NewVoteAction gives; a scope given replaces the default whole.
var voteActionShape = jsondec.NewShape(jsondec.Refuse[board.VoteAction],
	jsondec.String("action", func(a *board.VoteAction) *string { return &a.Action }),
	jsondec.Int("perPerson", func(a *board.VoteAction) *int { return &a.PerPerson }),
	jsondec.Int("perNote", func(a *board.VoteAction) *int { return &a.PerNote }),
	jsondec.Bool("anonymous", func(a *board.VoteAction) *bool { return &a.Anonymous }),
	jsondec.Bool("endsWithTimer", func(a *board.VoteAction) *bool { return &a.EndsWithTimer }),
	jsondec.Func("scope", func(d *jsondec.Decoder, a *board.VoteAction) error {
		a.Scope = board.VoteScope{}
		return voteScopeShape.Decode(d, &a.Scope)
	}),
)

// voteDotShape is a POST /votes body.
var voteDotShape = jsondec.NewShape(jsondec.Refuse[board.VoteDot],
	jsondec.String("noteId", func(d *board.VoteDot) *string { return &d.NoteID }),
	jsondec.Int("delta", func(d *board.VoteDot) *int { return &d.Delta }),
)

// myDotsBody is a person's own dots: POST /votes's and GET /votes/mine's
// answer. VoteID is "" when the board has no vote; Left is 0 unless the
// vote is open.
type myDotsBody struct {
	VoteID string         `json:"voteId"`
	Mine   map[string]int `json:"mine"`
	Left   int            `json:"left"`
	// ServerVersion, POST /votes's only, is the version the dot took (a
	// replay's: the one it first took): the client knows its own changes
	// message by it.
	ServerVersion int64 `json:"serverVersion,omitempty"`
}

// newVoteID is a new vote's ID: "v" and 80 random bits in base32.
func newVoteID() string {
	return "v" + rand.Text()[:16]
}

// handleVote is POST /api/boards/{boardId}/vote, for the board's owner:
// start, close, reveal or clear the vote. Like the timer's actions, it
// goes through the board's room as a push, so that it takes a version and
// reaches every client with the board header, and the store applies it
// in its transaction with the vote's rows (a reveal ranks them there).
// Idempotency-Key as a sync push. 200 with the vote, 204 for clear.
func (s *Server) handleVote(w http.ResponseWriter, r *http.Request) {
	act := board.NewVoteAction()
	push := func(by string) *board.Push {
		act.By, act.ID = by, newVoteID()
		return &board.Push{Vote: &act}
	}
	if _, ok := s.pushAction(w, r, voteActionShape.Into(&act), act.Validate, push); !ok {
		return
	}
	if act.Action == board.VoteClear {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// Read back: the vote as stored, which a replay answers too.
	b, err := s.db.FindBoard(r.Context(), reqctx.Access(r.Context()).Board.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if b.Vote == nil { // cleared since
		s.writeError(w, r, board.Errorf(board.ECONFLICT, "The vote was cleared meanwhile."))
		return
	}
	respond.JSON(w, http.StatusOK, b.Vote)
}

// handleDot is POST /api/boards/{boardId}/votes, for every member: put a
// dot on a note (delta 1) or take one back (-1). The store checks the
// vote, the note and the person's limits in the push's transaction, so
// that two dots at once never pass a limit together. 200 with the
// person's dots after it.
func (s *Server) handleDot(w http.ResponseWriter, r *http.Request) {
	var dot board.VoteDot
	push := func(by string) *board.Push {
		dot.By = by
		return &board.Push{Dot: &dot}
	}
	v, ok := s.pushAction(w, r, voteDotShape.Into(&dot), dot.Validate, push)
	if !ok {
		return
	}
	s.writeMyDots(w, r, v)
}

// handleMyDots is GET /api/boards/{boardId}/votes/mine: the caller's own
// dots in the board's vote (never anyone else's).
func (s *Server) handleMyDots(w http.ResponseWriter, r *http.Request) {
	s.writeMyDots(w, r, 0)
}

// writeMyDots answers the caller's dots as stored now, with version (0:
// left out).
func (s *Server) writeMyDots(w http.ResponseWriter, r *http.Request, version int64) {
	a := reqctx.Access(r.Context())
	vote, mine, err := s.db.MyDots(r.Context(), a.Board.ID, a.Email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := myDotsBody{Mine: mine, Left: board.DotsLeft(vote, mine), ServerVersion: version}
	if vote != nil {
		out.VoteID = vote.ID
	}
	respond.JSON(w, http.StatusOK, out)
}
