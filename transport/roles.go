package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"corkboard/auth/mailaddr"
	"corkboard/board"
	"corkboard/rooms"
	"corkboard/transport/livewire"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// Roles (docs/api.md, "Locks and roles"): the owner gives each invitee
// "view", "add" or "edit" with POST /invite's optional role or with PATCH
// /invite; access.Service decides what that comes to with their plan, and
// the store enforces it on every push (board.SettleRights).

// inviteWithRole reads an {email, role} body: role optional (""), or
// required when must is set; EINVALID naming the field otherwise.
func inviteWithRole(w http.ResponseWriter, r *http.Request, must bool) (email, role string, err error) {
	var req inviteRequest
	role = "\x00" // tells "not sent" from ""
	req.Role = role
	if err := reqbody.Decode(w, r, limitJSONBody, decodeStringFields(map[string]*string{"email": &req.Email, "role": &req.Role})); err != nil {
		return "", "", err
	}
	switch {
	case req.Role == role && must:
		return "", "", board.FieldErrorf("role", "role is required: %q, %q or %q.", board.RoleView, board.RoleAdd, board.RoleEdit)
	case req.Role == role:
		req.Role = ""
	case !board.ValidRole(req.Role):
		return "", "", board.FieldErrorf("role", "role must be %q, %q or %q.", board.RoleView, board.RoleAdd, board.RoleEdit)
	}
	email, err = mailaddr.Canonical("email", req.Email)
	return email, req.Role, err
}

// handleSetRole is PATCH /api/boards/{boardId}/invite (owner only): {email,
// role} changes an invitee's role. 404 naming email when the address is
// not invited. Open sockets of the invitee get an "access" message.
func (s *Server) handleSetRole(w http.ResponseWriter, r *http.Request) {
	email, role, err := inviteWithRole(w, r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b, changed, err := s.members.SetRole(r.Context(), reqctx.Access(r.Context()).Board.ID, email, role)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if changed {
		s.roleChanged(r.Context(), b.ID, email)
	}
	invitees, invitee, err := s.inviteeOf(r.Context(), b, email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"ok": true, "changed": changed, "invitedEmails": b.InvitedEmails,
		"invitee": invitee, "invitees": invitees, "editPlans": s.editPlans()})
}

// roleChanged tells email's live connections to boardID on this node what
// they may do now (an "access" message with the role). Other nodes learn
// of the change through the board's cache invalidation (boardChanged).
// Pushes pass the guard again anyway; this is for the client's screen.
func (s *Server) roleChanged(ctx context.Context, boardID, email string) {
	if s.hub == nil || s.guard == nil {
		return
	}
	a, err := s.guard.Guard(ctx, boardID, email)
	if err != nil {
		if board.ErrorCode(err) != board.EFORBIDDEN {
			s.log.WarnContext(ctx, "role change", slog.String("board", boardID), slog.Any("err", err))
		}
		return
	}
	data, err := json.Marshal(livewire.AccessMessage{Type: livewire.TypeAccess, CanEdit: a.CanEdit, Role: a.Role})
	if err != nil {
		return
	}
	s.hub.SendTo(boardID, email, rooms.NewMessage(data))
}

// boardChanged is a board cache invalidation from another node: its
// invitees' roles may have changed there, so each invitee's connections
// here are told what the guard answers now (an "access" message; one
// that did not change is harmless to repeat). Board changes are rare
// (invites, phases, roles). A node with no room for the board has no
// one to tell, and reads nothing: a read here would put the board in this
// node's cache as it was before a later change whose note is still on its
// way (TestTwoNodesCachesDropAnotherNodesChanges).
func (s *Server) boardChanged(boardID string) {
	if s.hub == nil || s.guard == nil || s.members == nil || !s.hub.HasRoom(boardID) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), planChangeTimeout)
		defer cancel()
		st, err := s.members.FindBoard(ctx, boardID)
		if err != nil {
			return
		}
		for _, email := range st.InvitedEmails {
			s.roleChanged(ctx, boardID, email)
		}
	}()
}

// inviteeOf is what an invite answer tells: every invitee's access to b
// and email's among them (zero when email is not invited).
func (s *Server) inviteeOf(ctx context.Context, b *board.Board, email string) ([]inviteeInfo, inviteeInfo, error) {
	invitees, err := s.inviteeAccess(ctx, b)
	if err != nil {
		return nil, inviteeInfo{}, err
	}
	for _, in := range invitees {
		if in.Email == email {
			return invitees, in, nil
		}
	}
	return invitees, inviteeInfo{}, nil
}
