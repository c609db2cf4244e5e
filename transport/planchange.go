package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"corkboard/board"
	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// planChangeTimeout bounds what telling open boards of a plan change may
// take: one read of the person's boards and their new plan.
const planChangeTimeout = 5 * time.Second

// PlanChanged pushes the new access of email, whose plan changed, to
// every live connection email has open on this node to a board they are
// invited to (not their own: owners always edit): an "access" message
// with what the board guard answers now, so that a view-only board turns
// editable without a reload, and back (docs/live-protocol.md, "access").
// Call it after the Meter forgot the old plan. Pushes already pass the
// guard again; this is for the client's screen. Failures are logged: the
// connection learns its access at the next reconnect anyway.
func (s *Server) PlanChanged(ctx context.Context, email string) {
	if s.hub == nil || s.members == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planChangeTimeout)
	defer cancel()
	boards, canEdit, err := s.members.InvitedAccess(ctx, email)
	if err != nil {
		s.log.WarnContext(ctx, "plan change", slog.String("email", email), slog.Any("err", err))
		return
	}
	if len(boards) == 0 {
		return
	}
	data, err := json.Marshal(livewire.AccessMessage{Type: livewire.TypeAccess, CanEdit: canEdit})
	if err != nil {
		return
	}
	msg := rooms.NewMessage(data)
	for _, id := range boards {
		// With a role other than edit on this board (roles.go), the
		// message says the role the plan now leaves them.
		if b, err := s.members.FindBoard(ctx, id); err == nil && b.RoleOf(email) != board.RoleEdit {
			s.roleChanged(ctx, id, email)
			continue
		}
		s.hub.SendTo(id, email, msg)
	}
}
