package transport

import (
	"net/http"
	"time"

	"corkboard/board"
	"corkboard/transport/reqbody"
)

// Body size limits (decided in docs/api.md; reqbody).
const (
	limitAuthBody = reqbody.LimitAuth
	limitJSONBody = reqbody.LimitJSON
	limitPushBody = reqbody.LimitPush
)

// maxLargeBodies is how many bodies over limitJSONBody (pushes and
// changelog writes of up to 64 MiB) are read and decoded at once; others
// wait for a slot. It bounds the memory a burst of large requests can pin.
const maxLargeBodies = 4

// largeBodyWait is how long a large body waits for a slot before 503.
const largeBodyWait = 30 * time.Second

// limitLargeBodies admits at most maxLargeBodies requests whose body may
// be larger than limitJSONBody (declared so, or of unknown length) at once.
// A body declared larger than limit is refused with 413 at once, without
// waiting for a slot or reading it. It belongs after the board guard, so
// strangers cannot take the slots.
func (s *Server) limitLargeBodies(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return s.largeBodyGate(limit, next) }
}

func (s *Server) largeBodyGate(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			reqbody.RefuseBody(w)
			s.writeError(w, r, reqbody.TooLarge(limit))
			return
		}
		if r.ContentLength >= 0 && r.ContentLength <= limitJSONBody {
			next.ServeHTTP(w, r)
			return
		}
		t := time.NewTimer(largeBodyWait)
		defer t.Stop()
		select {
		case s.largeBodies <- struct{}{}:
			defer func() { <-s.largeBodies }()
			next.ServeHTTP(w, r)
		case <-t.C:
			s.writeError(w, r, &board.Error{Code: board.EUNAVAILABLE, Message: "Too many large requests at once; try again shortly.", RetryAfter: 5})
		case <-r.Context().Done():
		}
	})
}
