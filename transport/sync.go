package transport

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/transport/live"
	"corkboard/transport/pullstream"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// registerSyncRoutes adds pull, push and the live channel, behind the board
// guard.
func (s *Server) registerSyncRoutes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(s.requireBoard)
		// GET /api/boards/{boardId}/sync?since=N
		r.Get("/boards/{boardId}/sync", s.handlePull)
		// POST /api/boards/{boardId}/sync
		r.With(s.limitLargeBodies(limitPushBody)).Post("/boards/{boardId}/sync", s.handlePush)
		// GET /api/boards/{boardId}/live (WebSocket)
		r.Get("/boards/{boardId}/live", s.handleLive)
	})
}

// handleLive is GET /api/boards/{boardId}/live: the live channel
// (live.Channel.Serve) behind the session and the board guard. ?since=N
// sends what the client missed after version N right after hello.
func (s *Server) handleLive(w http.ResponseWriter, r *http.Request) {
	since, err := parseSince(r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	a := reqctx.Access(r.Context())
	req := live.Request{Access: a, Token: sessionToken(r), Since: since}
	if a.Link != nil {
		// A read-only link's socket (links.go): no session, and the link
		// is asked again once the socket has joined.
		key := a.Link.Hash
		req.Token, req.Recheck = "", func(ctx context.Context) error {
			_, err := s.links.FindLink(ctx, key)
			return err
		}
	}
	s.live.Serve(w, r, req)
}

// parseSince reads the since query parameter: a non-negative integer,
// required when required is set (absent otherwise gives -1).
func parseSince(r *http.Request, required bool) (int64, error) {
	raw, ok := queryValue(r.URL.RawQuery, "since")
	if !ok {
		if required {
			return 0, board.FieldErrorf("since", "since is required: the version you last saw, 0 for everything.")
		}
		return -1, nil
	}
	since, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || since < 0 {
		return 0, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	return since, nil
}

// versionBody is the answer to a push, and to a pull with nothing new.
type versionBody struct {
	ServerVersion int64 `json:"serverVersion"`
}

// handlePull is GET /api/boards/{boardId}/sync?since=N[&wait=S]. With
// nothing newer than since it answers {serverVersion} alone, from the
// room's memory; with wait it first holds the request up to S seconds for
// the board to pass since (longpoll.go). Otherwise the answer is streamed
// from the store as it is read (pullstream.go); one larger than 64 KiB
// takes a slot of the large-read gate first (429 or 503 with Retry-After
// when there is none, before a byte of it is sent) and is spooled to a
// file until the store's read is over, then sent (spool.go).
func (s *Server) handlePull(w http.ResponseWriter, r *http.Request) {
	since, err := parseSince(r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	wait, err := parseWait(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	a := reqctx.Access(r.Context())
	release := func() {}
	defer func() { release() }()
	out := &pullstream.HeldAnswer{
		Ctx:      r.Context(),
		SpoolDir: s.cfg.SpoolDir,
		Buf:      append(make([]byte, 0, 4<<10), '{'),
		Admit: func() error {
			rel, err := s.largeReads.Acquire(r.Context(), a.Email)
			if err == nil {
				release = rel
			}
			return err
		},
		Start: pullstream.JSONStarter(w),
		Send:  pullstream.HTTPSender(w),
	}
	defer out.Discard()
	enc := pullstream.NewChangesEncoder(out)
	v, changed, err := s.hub.PullTo(r.Context(), a.Board.ID, since, enc.Part)
	if err == nil && changed {
		err = enc.Finish("\n")
		if err == nil {
			err = out.Close()
		}
	}
	if err != nil {
		if !out.Started() {
			s.writeError(w, r, err)
			return
		}
		// Part of the answer has left with status 200: cut the
		// connection, so that the client sees a broken answer rather
		// than a short one.
		if r.Context().Err() == nil {
			s.log.ErrorContext(r.Context(), "streamed pull failed", slog.String("board", a.Board.ID), slog.Any("err", err))
		}
		panic(http.ErrAbortHandler)
	}
	if !changed {
		if wait > 0 {
			s.holdPull(w, r, since, wait)
			return
		}
		writeVersion(w, v)
		reqctx.LogQuietly(r.Context())
	}
}

// idempotencyKey reads the optional Idempotency-Key header: at most 128
// visible ASCII characters.
func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > persist.MaxIdempotencyKeyLen {
		return "", board.FieldErrorf("Idempotency-Key", "Idempotency-Key must be at most %d characters.", persist.MaxIdempotencyKeyLen)
	}
	if !reqbody.VisibleASCII(key) {
		return "", board.FieldErrorf("Idempotency-Key", "Idempotency-Key must be visible ASCII characters.")
	}
	return key, nil
}

// handlePush is POST /api/boards/{boardId}/sync. Order: 403 for a viewer
// (before the body is read), the Idempotency-Key header, then the body:
// a Content-Length over the limit is 413 at once; streaming decoding and
// the whole push's validation, each a 400 naming the
// field with nothing applied. A replayed key answers the original version
// with Idempotent-Replayed: true.
func (s *Server) handlePush(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	if err := a.RequireEdit(); err != nil {
		s.writeError(w, r, err)
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var push board.Push
	if err := reqbody.Decode(w, r, limitPushBody, reqbody.PushShape.Into(&push)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := push.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	version, replayed, err := s.hub.Push(r.Context(), a.Board.ID, &push, key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	respond.JSON(w, http.StatusOK, versionBody{version})
}
