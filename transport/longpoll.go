package transport

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"corkboard/board"
	"corkboard/rooms"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// Long polls (docs/sync.md, "Long polling").
const (
	// maxWait caps ?wait=: larger values are clamped to it. It stays under
	// the 60 s read timeout common proxies give an answer that has not
	// started.
	maxWait = 30
	// waitWriteSlack is how long after its wait a long poll's answer may
	// take to be written before the connection is given up.
	waitWriteSlack = 10 * time.Second
)

// longPolls ends held long polls when the server shuts down.
type longPolls struct {
	once     sync.Once
	draining chan struct{}
	// held, if set, is called when a long poll is held (tests only).
	held func()
}

// EndWaits answers every held long poll at once with the board's current
// version, and every later one without holding it. Call it when the HTTP
// server starts shutting down (http.Server.RegisterOnShutdown), so that
// Shutdown does not wait for long polls to run out. Safe to call twice.
func (s *Server) EndWaits() {
	s.polls.once.Do(func() { close(s.polls.draining) })
}

// parseWait reads the optional wait query parameter: whole seconds, 0 (or
// absent) for a plain pull, larger than maxWait clamped to it.
func parseWait(r *http.Request) (time.Duration, error) {
	raw, ok := queryValue(r.URL.RawQuery, "wait")
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange || raw[0] == '-' {
			return 0, board.FieldErrorf("wait", "wait must be a whole number of seconds from 0 to %d.", maxWait)
		}
		n = maxWait // an integer too large to read is above the cap too
	}
	if n < 0 {
		return 0, board.FieldErrorf("wait", "wait must be a whole number of seconds from 0 to %d.", maxWait)
	}
	return time.Duration(min(n, maxWait)) * time.Second, nil
}

// holdPull answers a pull that found nothing new and asked to wait: it
// holds the request in the board's room until the board passes since, the
// wait runs out, the session ends, access is withdrawn or the server shuts
// down, and answers {serverVersion} (or 401, 403). Nothing is written
// before then, so a proxy sees one ordinary answer.
func (s *Server) holdPull(w http.ResponseWriter, r *http.Request, since int64, wait time.Duration) {
	ctx := r.Context()
	a := reqctx.Access(ctx)
	// The server's Read and WriteTimeout count from the request's arrival;
	// a hold must not be cut by them. Errors mean the writer cannot set
	// deadlines (not a real connection), and then none applies anyway.
	deadline := time.Now().Add(wait + waitWriteSlack)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
	// Logout or expiry during the hold answers 401 at once, as a socket of
	// the same session is closed.
	// A read-only link's poll has no session: revoking the link ends it
	// (a kick, 403), and its expiry is checked at the next poll.
	var sessionEnded <-chan struct{}
	if a.Link == nil {
		watch, err := s.auth.WatchSession(ctx, sessionToken(r))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		defer watch.Stop()
		sessionEnded = watch.Ended()
	}
	waiter, err := s.hub.Wait(ctx, a.Board.ID, a.Email, since)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer waiter.Stop()
	if s.polls.held != nil {
		s.polls.held()
	}
	// One runtime timer per hold, no goroutine: the handler's own
	// goroutine is the only one a long poll costs.
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case end := <-waiter.Ended():
		if end.Reason == rooms.WaitKicked {
			s.writeError(w, r, board.Errorf(board.EFORBIDDEN, "Your access to this board was withdrawn."))
			return
		}
		respond.JSON(w, http.StatusOK, versionBody{end.Version})
	case <-timer.C:
		waiter.Stop()
		respond.JSON(w, http.StatusOK, versionBody{waiter.Version()})
	case <-s.polls.draining:
		waiter.Stop()
		respond.JSON(w, http.StatusOK, versionBody{waiter.Version()})
	case <-sessionEnded:
		s.writeError(w, r, board.Errorf(board.EUNAUTHORIZED, "Your session ended. Log in again."))
	case <-ctx.Done():
		// The client went away: nobody reads an answer; Stop frees the slot.
	}
}
