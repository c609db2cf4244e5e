package transport

import (
	"net/http"

	"corkboard/board"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
)

// pushAction is what the endpoints that act on a board through its room
// share (the timer's and the vote's actions, a dot): the Idempotency-Key,
// the body decoded by into and checked by validate, then the push that
// push builds for the caller's email, sent through the board's room so
// that it takes a version and reaches every client. It answers the error
// itself and returns false then; else the version the push took.
func (s *Server) pushAction(w http.ResponseWriter, r *http.Request, into func(*jsondec.Decoder) error, validate func() error, push func(by string) *board.Push) (int64, bool) {
	a := reqctx.Access(r.Context())
	// A retried action with the key of one already applied is answered
	// without being applied again (an "add" sent twice adds once), as a
	// sync push is (docs/api.md, "The board's timer").
	key, err := idempotencyKey(r)
	if err != nil {
		s.writeError(w, r, err)
		return 0, false
	}
	if err := reqbody.Decode(w, r, limitJSONBody, into); err != nil {
		s.writeError(w, r, err)
		return 0, false
	}
	if err := validate(); err != nil {
		s.writeError(w, r, err)
		return 0, false
	}
	v, _, err := s.hub.Push(r.Context(), a.Board.ID, push(a.Email), key)
	if err != nil {
		s.writeError(w, r, err)
		return 0, false
	}
	return v, true
}
