package transport

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"corkboard/access"
	"corkboard/auth"
	"corkboard/auth/mailaddr"
	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// guard is the board guard the handlers, the AI gate's payer check and
// every live push ask (access.Service).
type guard interface {
	Guard(ctx context.Context, boardID, email string) (access.Access, error)
}

// memberships is what the board routes and plan changes ask of
// access.Service beyond the guard: a non-member's view of a board, and
// the writes that change who may do what.
type memberships interface {
	Look(ctx context.Context, boardID, email string) (access.Standing, error)
	Claim(ctx context.Context, id, email string) error
	SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error)
	AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error)
	RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error)
	InvitedAccess(ctx context.Context, email string) (boards []string, canEdit bool, err error)
	Invitees(ctx context.Context, emails []string) ([]access.Invitee, error)
	InviteesOf(ctx context.Context, b *board.Board) ([]access.Invitee, error)
	SetRole(ctx context.Context, id, email, role string) (*board.Board, bool, error)
	FindBoard(ctx context.Context, id string) (*board.Board, error)
	EditPlans() []string
	Invalidate(kind cache.Kind, key string)
}

// registerBoardRoutes adds the board list, access and invite endpoints.
func (s *Server) registerBoardRoutes(r chi.Router) {
	// GET /api/boards
	r.Get("/boards", s.handleListBoards)
	// GET|POST /api/boards/{boardId}/access: open to any logged-in user, so
	// that unclaimed boards can be seen and claimed.
	r.Get("/boards/{boardId}/access", s.handleGetAccess)
	r.Post("/boards/{boardId}/access", s.handleClaimBoard)

	r.Group(func(r chi.Router) {
		r.Use(s.requireBoard)
		// PATCH /api/boards/{boardId}/access
		r.Patch("/boards/{boardId}/access", s.ownerOnly(s.handleSetPhases))
		// GET|POST|DELETE /api/boards/{boardId}/invite
		r.Get("/boards/{boardId}/invite", s.ownerOnly(s.handleListInvites))
		r.Post("/boards/{boardId}/invite", s.ownerOnly(s.handleAddInvite))
		r.Delete("/boards/{boardId}/invite", s.ownerOnly(s.handleRemoveInvite))
		// PATCH /api/boards/{boardId}/invite: an invitee's role (roles.go)
		r.Patch("/boards/{boardId}/invite", s.ownerOnly(s.handleSetRole))
	})
}

// boardIDParam validates the {boardId} path segment.
func boardIDParam(r *http.Request) (string, error) {
	id := chi.URLParam(r, "boardId")
	if err := board.ValidateBoardID("boardId", id); err != nil {
		return "", err
	}
	return id, nil
}

// requireBoard runs the board guard for {boardId} routes: 400 for a
// malformed ID, 404 for an unclaimed board, 403 when the caller neither
// owns it nor is invited.
func (s *Server) requireBoard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := reqctx.Access(r.Context()); a != nil && a.Link != nil {
			next.ServeHTTP(w, r) // guarded by the link already (serveWithLink)
			return
		}
		a, err := s.guard.Guard(r.Context(), chi.URLParam(r, "boardId"), reqctx.Email(r.Context()))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// The request's own State holds it: no request copy then.
		if ctx := reqctx.WithAccess(r.Context(), a); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// ownerOnly wraps a guarded handler so only the board's owner gets through.
func (s *Server) ownerOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a := reqctx.Access(r.Context()); a == nil || !a.IsOwner {
			s.writeError(w, r, board.Errorf(board.EFORBIDDEN, "Only the board's owner can do this."))
			return
		}
		h(w, r)
	}
}

type boardListItem struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	CreatedAt  time.Time `json:"createdAt"`
	OwnerEmail string    `json:"ownerEmail"`
}

// handleListBoards is GET /api/boards.
func (s *Server) handleListBoards(w http.ResponseWriter, r *http.Request) {
	boards, err := s.db.ListBoardsFor(r.Context(), reqctx.Email(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]boardListItem, len(boards))
	for i, b := range boards {
		out[i] = boardListItem{ID: b.ID, Name: b.Name, CreatedAt: b.CreatedAt, OwnerEmail: b.OwnerEmail}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"boards": out})
}

type accessBody struct {
	HasAccess   bool `json:"hasAccess"`
	IsOwner     bool `json:"isOwner"`
	IsUnclaimed bool `json:"isUnclaimed"`
	CanEdit     bool `json:"canEdit"`
	// Role is the member's effective role (docs/api.md, "Locks and
	// roles"); left out for non-members.
	Role   string        `json:"role,omitempty"`
	Phases *board.Phases `json:"phases,omitempty"`
}

// handleGetAccess is GET /api/boards/{boardId}/access. It answers 200 for
// boards the caller cannot open too, so a client can tell "claim it" from
// "ask the owner".
func (s *Server) handleGetAccess(w http.ResponseWriter, r *http.Request) {
	id, err := boardIDParam(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := s.members.Look(r.Context(), id, reqctx.Email(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, accessBody{HasAccess: st.IsMember, IsOwner: st.IsOwner, IsUnclaimed: st.Unclaimed, CanEdit: st.CanEdit, Role: st.Role, Phases: st.Phases})
}

// handleClaimBoard is POST /api/boards/{boardId}/access. Claiming a board
// you already own answers 200 again (a retry is harmless); a board someone
// else owns is 409.
func (s *Server) handleClaimBoard(w http.ResponseWriter, r *http.Request) {
	id, err := boardIDParam(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	email := reqctx.Email(r.Context())
	if err := s.members.Claim(r.Context(), id, email); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.log.InfoContext(r.Context(), "board claimed", "board", id, "owner", email)
	respond.JSON(w, http.StatusOK, respond.OK)
}

type phasesRequest struct {
	Phases *board.Phases `json:"phases"`
}

// handleSetPhases is PATCH /api/boards/{boardId}/access (owner only).
func (s *Server) handleSetPhases(w http.ResponseWriter, r *http.Request) {
	var req phasesRequest
	if err := reqbody.Decode(w, r, limitJSONBody, phasesRequestShape.Into(&req)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Phases == nil {
		s.writeError(w, r, board.FieldErrorf("phases", "phases is required."))
		return
	}
	if req.Phases.Phases == nil {
		s.writeError(w, r, board.FieldErrorf("phases.phases", "phases.phases must be an array."))
		return
	}
	if err := req.Phases.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	b, err := s.members.SetPhases(r.Context(), reqctx.Access(r.Context()).Board.ID, req.Phases)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"ok": true, "phases": b.Phases})
}

// handleListInvites is GET /api/boards/{boardId}/invite (owner only).
// Beside the spec's invitedEmails it says what each invitee may do and
// why (their plan), and which plans let invitees edit, so the share
// dialog can tell the owner before and after inviting (docs/api.md).
func (s *Server) handleListInvites(w http.ResponseWriter, r *http.Request) {
	b := reqctx.Access(r.Context()).Board
	invitees, err := s.inviteeAccess(r.Context(), b)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"invitedEmails": b.InvitedEmails, "invitees": invitees, "editPlans": s.editPlans()})
}

// inviteeInfo is what an invitee may do on a board, and the plan that
// decides it.
type inviteeInfo struct {
	Email   string `json:"email"`
	CanEdit bool   `json:"canEdit"`
	Plan    string `json:"plan"`
	// Role is what the invitee may do (the lesser of the owner's choice
	// and their plan's); ChosenRole is the owner's choice, which the
	// share dialog's select shows (docs/api.md, "Locks and roles").
	Role       string `json:"role"`
	ChosenRole string `json:"chosenRole"`
}

// inviteeAccess answers inviteeInfo for each of b's invitees, in order.
func (s *Server) inviteeAccess(ctx context.Context, b *board.Board) ([]inviteeInfo, error) {
	in, err := s.members.InviteesOf(ctx, b)
	if err != nil {
		return nil, err
	}
	out := make([]inviteeInfo, len(in))
	for i, e := range in {
		out[i] = inviteeInfo{Email: e.Email, CanEdit: e.CanEdit, Plan: e.Plan, Role: e.Role, ChosenRole: e.Chosen}
	}
	return out, nil
}

// editPlans names the plans whose invitees edit, in the table's order.
func (s *Server) editPlans() []string { return s.members.EditPlans() }

// boardLink is the board's address in the browser client.
func (s *Server) boardLink(id string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/b/" + url.PathEscape(id)
}

type inviteRequest struct {
	Email string `json:"email"`
	// Role is POST's and PATCH's (roles.go); DELETE refuses it.
	Role string `json:"role"`
}

// inviteEmail reads the {email} body (or, for DELETE, ?email= when the
// body is empty: some HTTP clients cannot send a DELETE body).
func inviteEmail(w http.ResponseWriter, r *http.Request) (string, error) {
	var req inviteRequest
	if r.Method == http.MethodDelete && r.ContentLength == 0 && r.URL.Query().Has("email") {
		req.Email = r.URL.Query().Get("email")
	} else if err := reqbody.Decode(w, r, limitJSONBody, decodeStringFields(map[string]*string{"email": &req.Email})); err != nil {
		return "", err
	}
	return mailaddr.Canonical("email", req.Email)
}

// handleAddInvite is POST /api/boards/{boardId}/invite (owner only).
// Inviting an address twice is not an error: added tells whether it was new.
func (s *Server) handleAddInvite(w http.ResponseWriter, r *http.Request) {
	email, role, err := inviteWithRole(w, r, false)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	a := reqctx.Access(r.Context())
	// Only a new invitation sends mail, so only a new one counts against
	// the owner's invitation limit; inviting again answers added false.
	if !a.Board.HasMember(email) && s.auth != nil {
		if err := s.auth.AllowInvite(a.Email); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	b, added, err := s.members.AddInvite(r.Context(), a.Board.ID, email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if role != "" {
		// An optional role (checked before the invitation was written):
		// the invitee's, new or not.
		var changed bool
		if b, changed, err = s.members.SetRole(r.Context(), a.Board.ID, email, role); err != nil {
			s.writeError(w, r, err)
			return
		}
		if changed && !added {
			s.roleChanged(r.Context(), b.ID, email)
		}
	}
	invitees, invitee, err := s.inviteeOf(r.Context(), b, email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mailed := false
	if added && s.auth != nil {
		s.auth.SendInvite(r.Context(), auth.Invitation{
			From: a.Email, To: email, BoardName: b.Name, Link: s.boardLink(b.ID),
			CanEdit: invitee.CanEdit, Plan: invitee.Plan, EditPlans: s.editPlans(),
		})
		mailed = true
	}
	respond.JSON(w, http.StatusOK, map[string]any{"ok": true, "added": added, "invitedEmails": b.InvitedEmails,
		"invitee": invitee, "invitees": invitees, "editPlans": s.editPlans(), "mailed": mailed})
}

// handleRemoveInvite is DELETE /api/boards/{boardId}/invite (owner only).
// Removing an address that is not invited is not an error: removed tells.
func (s *Server) handleRemoveInvite(w http.ResponseWriter, r *http.Request) {
	email, err := inviteEmail(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b, removed, err := s.members.RemoveInvite(r.Context(), reqctx.Access(r.Context()).Board.ID, email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if removed && s.hub != nil {
		// Access is withdrawn now, not at their next reconnect.
		s.hub.Kick(b.ID, email)
	}
	invitees, err := s.inviteeAccess(r.Context(), b)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"ok": true, "removed": removed, "invitedEmails": b.InvitedEmails, "invitees": invitees, "editPlans": s.editPlans()})
}
