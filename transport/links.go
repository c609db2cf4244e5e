package transport

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"corkboard/access"
	"corkboard/auth"
	"corkboard/board"
	"corkboard/persist"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// Read-only links (docs/api.md, "Read-only links"): the owner's routes
// that make, list and revoke them, and the requests made with one. A
// link's request carries its token in the LinkHeader header (the live
// socket, which a browser opens without headers, in the ?link= query
// parameter); requireSession hands it to serveWithLink, which lets it
// reach the few routes that only read the board.

// LinkHeader is the request header that carries a read-only link's token.
const LinkHeader = "X-Corkboard-Link"

// linkQuery is the live socket's query parameter for the token.
const linkQuery = "link"

// linkPathPrefix is where a link opens in the browser: /l/<token>.
const linkPathPrefix = "/l/"

// links is what the link routes ask of access.Service.
type links interface {
	CreateLink(ctx context.Context, a access.Access, key []byte, hours int64) (persist.Link, error)
	Links(ctx context.Context, boardID string) ([]persist.Link, error)
	RevokeLink(ctx context.Context, boardID, id string) (bool, error)
	LinkGuard(ctx context.Context, boardID string, key []byte) (access.Access, error)
	FindLink(ctx context.Context, key []byte) (*persist.Link, error)
}

// linkRoutes are the routes a link's request may reach: the board's pull
// (with long polling), its live channel, and what the link opens. Every
// other route answers 403: no push, no AI, no history, no sharing.
var linkRoutes = map[string]bool{
	"GET /api/boards/{boardId}/sync": true,
	"GET /api/boards/{boardId}/live": true,
	"GET /api/link":                  true,
}

// registerLinkRoutes adds the owner's link routes and GET /api/link.
func (s *Server) registerLinkRoutes(r chi.Router) {
	// GET /api/link: the board a link opens (a link's request only).
	r.Get("/link", s.handleGetLink)
	r.Group(func(r chi.Router) {
		r.Use(s.requireBoard)
		// GET|POST /api/boards/{boardId}/links
		r.Get("/boards/{boardId}/links", s.ownerOnly(s.handleListLinks))
		r.Post("/boards/{boardId}/links", s.ownerOnly(s.handleCreateLink))
		// DELETE /api/boards/{boardId}/links/{linkId}
		r.Delete("/boards/{boardId}/links/{linkId}", s.ownerOnly(s.handleRevokeLink))
	})
}

// linkToken is the link token a request carries: the header, or on the
// live route the query parameter; "" for none.
func linkToken(r *http.Request) string {
	if t := r.Header.Get(LinkHeader); t != "" {
		return t
	}
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() == "/api/boards/{boardId}/live" {
		t, _ := queryValue(r.URL.RawQuery, linkQuery)
		return t
	}
	return ""
}

// serveWithLink serves a request made with a read-only link: the link
// must work (401 "This link no longer works." otherwise: never made,
// revoked, expired, malformed), be a link to the board of the path, and
// the route must be one of linkRoutes (403 otherwise). The request then
// goes on as a viewer whose e-mail is the link's identity.
func (s *Server) serveWithLink(w http.ResponseWriter, r *http.Request, token string, next http.Handler) {
	// Whatever is answered, nothing here may be cached or handed on.
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if s.links == nil {
		s.writeError(w, r, access.ErrLinkViewOnly())
		return
	}
	key, err := auth.LinkKey(token)
	if err != nil {
		key = nil // FindLink answers "no longer works" for it
	}
	boardID := chi.URLParam(r, "boardId")
	if boardID == "" {
		l, err := s.links.FindLink(r.Context(), key)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		boardID = l.BoardID
	}
	a, err := s.links.LinkGuard(r.Context(), boardID, key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !linkRoutes[r.Method+" "+chi.RouteContext(r.Context()).RoutePattern()] {
		s.writeError(w, r, access.ErrLinkViewOnly())
		return
	}
	ctx := reqctx.WithEmail(r.Context(), a.Email)
	ctx = reqctx.WithAccess(ctx, a)
	next.ServeHTTP(w, r.WithContext(ctx))
}

// linkBody is a link as the owner's list shows it: never its token.
type linkBody struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	CreatedBy string    `json:"createdBy"`
}

// newLinkBody is the answer to a creation: the token and the URL, this
// once.
type newLinkBody struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Token     string    `json:"token"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

type createLinkRequest struct {
	ExpiresInHours int64 `json:"expiresInHours"`
	set            bool
}

var createLinkShape = jsondec.NewShape(jsondec.Refuse[createLinkRequest],
	jsondec.Func("expiresInHours", func(d *jsondec.Decoder, v *createLinkRequest) error {
		v.set = true
		return d.Int64(&v.ExpiresInHours)
	}),
)

// handleCreateLink is POST /api/boards/{boardId}/links (owner only):
// {"expiresInHours": N} → 201 with the link's token and URL.
func (s *Server) handleCreateLink(w http.ResponseWriter, r *http.Request) {
	var req createLinkRequest
	if err := reqbody.Decode(w, r, limitJSONBody, createLinkShape.Into(&req)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !req.set {
		s.writeError(w, r, board.FieldErrorf("expiresInHours", "expiresInHours is required: how many hours the link works, %d to %d.", access.MinLinkHours, access.MaxLinkHours))
		return
	}
	token, key, err := auth.NewLinkToken()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	a := reqctx.Access(r.Context())
	l, err := s.links.CreateLink(r.Context(), *a, key, req.ExpiresInHours)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "read-only link created", slog.String("board", l.BoardID), slog.String("link", l.ID), slog.Time("expiresAt", l.ExpiresAt))
	w.Header().Set("Cache-Control", "no-store")
	respond.JSON(w, http.StatusCreated, newLinkBody{ID: l.ID, URL: s.linkURL(token), Token: token, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt})
}

// linkURL is where a link opens in the browser client.
func (s *Server) linkURL(token string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + linkPathPrefix + token
}

// handleListLinks is GET /api/boards/{boardId}/links (owner only).
func (s *Server) handleListLinks(w http.ResponseWriter, r *http.Request) {
	ls, err := s.links.Links(r.Context(), reqctx.Access(r.Context()).Board.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]linkBody, len(ls))
	for i, l := range ls {
		out[i] = linkBody{ID: l.ID, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt, CreatedBy: l.CreatedBy}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"links": out})
}

// maxLinkIDLen bounds {linkId}; the IDs made are 16 characters.
const maxLinkIDLen = 64

// handleRevokeLink is DELETE /api/boards/{boardId}/links/{linkId} (owner
// only): 204, and every socket and held poll opened with the link closes
// (4003), on every node; 404 for a link the board does not have.
func (s *Server) handleRevokeLink(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "linkId")
	if id == "" || len(id) > maxLinkIDLen || !reqbody.VisibleASCII(id) {
		s.writeError(w, r, board.FieldErrorf("linkId", "linkId must be a link's id, at most %d characters.", maxLinkIDLen))
		return
	}
	b := reqctx.Access(r.Context()).Board
	ok, err := s.links.RevokeLink(r.Context(), b.ID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !ok {
		s.writeError(w, r, board.Errorf(board.ENOTFOUND, "This board has no link %s.", id))
		return
	}
	if s.hub != nil {
		// Access is withdrawn now, not at the viewers' next reconnect.
		s.hub.Kick(b.ID, access.LinkEmail(id))
	}
	s.log.InfoContext(r.Context(), "read-only link revoked", slog.String("board", b.ID), slog.String("link", id))
	w.WriteHeader(http.StatusNoContent)
}

// linkInfoBody is what a link opens: GET /api/link.
type linkInfoBody struct {
	BoardID   string    `json:"boardId"`
	BoardName string    `json:"boardName"`
	ExpiresAt time.Time `json:"expiresAt"`
	CanEdit   bool      `json:"canEdit"`
}

// handleGetLink is GET /api/link, made with a link: the board it opens and
// when it ends. A request with a session but no link is 403.
func (s *Server) handleGetLink(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	if a == nil || a.Link == nil {
		s.writeError(w, r, board.FieldErrorf(LinkHeader, "Send the link's token in %s.", LinkHeader))
		return
	}
	respond.JSON(w, http.StatusOK, linkInfoBody{BoardID: a.Board.ID, BoardName: a.Board.Name, ExpiresAt: a.Link.ExpiresAt})
}

// redactPath is a request's path as the log shows it: a link's token
// never reaches the log.
func redactPath(p string) string {
	if strings.HasPrefix(p, linkPathPrefix) {
		return linkPathPrefix + "…"
	}
	return p
}
