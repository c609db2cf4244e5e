// Package access decides what a person may do to a board: the board guard
// (member or not, edit or view), the board cache it reads through, the
// writes that change who may do what (claim, phases, invites), and what a
// plan change means for the boards a person is invited to. REST, long
// polling and the live channel all ask it; transport only renders its
// answers.
package access

import (
	"context"
	"fmt"
	"time"

	"corkboard/billing"
	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/persist"
)

// Meter answers whether a member may edit a board, from their plan
// (billing.Meter).
type Meter interface {
	CanEdit(ctx context.Context, b *board.Board, email string) (bool, error)
	PlanOf(ctx context.Context, email string) (billing.Plan, error)
	Plans() billing.Plans
}

// Options configure a Service. The zero value is usable.
type Options struct {
	// CacheSize bounds how many boards' access facts are kept in memory;
	// 0 is 10,000.
	CacheSize int
	// CacheTTL is how long a cached board is trusted before it is read
	// again: the longest an invite removal or a phase change made on
	// another node can go unnoticed here. 0 is 5 seconds.
	CacheTTL time.Duration
	// Now is the cache's clock; nil is time.Now.
	Now func() time.Time
	// Announce tells the other nodes that a board changed here; nil on a
	// single node.
	Announce func(kind cache.Kind, key string)
	// Links keeps the boards' read-only links (links.go); nil refuses
	// every link.
	Links persist.LinkStore
}

// Service owns what a person may do to a board. Build it with New.
type Service struct {
	boards *cachedBoards
	meter  Meter
	links  linkService
}

// New builds the service on store's boards and meter's plans.
func New(store persist.BoardStore, meter Meter, opts Options) *Service {
	return &Service{boards: newCachedBoards(store, opts), meter: meter, links: newLinkService(opts)}
}

// Access is what the board guard learned about a member and a board. The
// board is shared with the cache: callers must not change it.
type Access struct {
	Board   *board.Board
	Email   string
	IsOwner bool
	CanEdit bool
	// Link is the read-only link the request came with (links.go); nil
	// for a member. Email is then LinkEmail(Link.ID), and CanEdit false.
	Link *persist.Link
}

// RequireEdit is EFORBIDDEN when the member may only view the board: the
// answer every push (REST or live) gives a viewer.
func (a Access) RequireEdit() error {
	if !a.CanEdit {
		return board.Errorf(board.EFORBIDDEN, "You can view this board but not edit it.")
	}
	return nil
}

// Guard is the central board guard: EINVALID (field boardId) for a
// malformed ID, ENOTFOUND for an unclaimed board, EFORBIDDEN when email
// neither owns it nor is invited; otherwise who they are to the board.
// The answer is a value, so that a cached board is guarded without an
// allocation (the request keeps it in its own state).
func (s *Service) Guard(ctx context.Context, boardID, email string) (Access, error) {
	if err := board.ValidateBoardID("boardId", boardID); err != nil {
		return Access{}, err
	}
	b, err := s.boards.FindBoard(ctx, boardID)
	if err != nil {
		return Access{}, err
	}
	if !b.HasMember(email) {
		return Access{}, board.Errorf(board.EFORBIDDEN, "You do not have access to this board.")
	}
	a := Access{Board: b, Email: email, IsOwner: b.OwnerEmail == email}
	if a.CanEdit, err = s.meter.CanEdit(ctx, b, email); err != nil {
		return Access{}, err
	}
	return a, nil
}

// Standing is what anyone logged in may learn about a board ID, member or
// not, so that a client can tell "claim it" from "ask the owner".
type Standing struct {
	Unclaimed bool
	IsMember  bool
	IsOwner   bool
	// CanEdit and Phases are told to members only.
	CanEdit bool
	Phases  *board.Phases
}

// Look answers email's standing on boardID. The ID must be valid already.
func (s *Service) Look(ctx context.Context, boardID, email string) (Standing, error) {
	b, err := s.boards.FindBoard(ctx, boardID)
	if board.ErrorCode(err) == board.ENOTFOUND {
		return Standing{Unclaimed: true}, nil
	} else if err != nil {
		return Standing{}, err
	}
	st := Standing{IsMember: b.HasMember(email), IsOwner: b.OwnerEmail == email}
	if st.IsMember {
		if st.CanEdit, err = s.meter.CanEdit(ctx, b, email); err != nil {
			return Standing{}, err
		}
		st.Phases = b.Phases
	}
	return st, nil
}

// Claim makes email the owner of the unclaimed board id. Claiming a board
// email already owns is no error (a retry is harmless); a board someone
// else owns is ECONFLICT.
func (s *Service) Claim(ctx context.Context, id, email string) error {
	_, err := s.boards.ClaimBoard(ctx, id, email)
	if board.ErrorCode(err) == board.ECONFLICT {
		if b, ferr := s.boards.FindBoard(ctx, id); ferr == nil && b.OwnerEmail == email {
			return nil
		}
	}
	return err
}

// SetPhases saves the board's phases; the guard sees them at once.
func (s *Service) SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error) {
	return s.boards.SetPhases(ctx, id, ph)
}

// AddInvite invites email to the board and reports whether they were new;
// the guard lets them in at once.
func (s *Service) AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	return s.boards.AddInvite(ctx, id, email)
}

// RemoveInvite withdraws email's invitation and reports whether they were
// invited; the guard refuses them at their next request on this node.
func (s *Service) RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	return s.boards.RemoveInvite(ctx, id, email)
}

// Invalidate forgets what the service holds about a board that changed
// elsewhere (kind cache.Board); other kinds are not its own.
func (s *Service) Invalidate(kind cache.Kind, key string) {
	if kind == cache.Board {
		s.boards.cache.Delete(key)
	}
}

// Invitee is what an invitee may do on a board, and the plan that
// decides it.
type Invitee struct {
	Email   string
	CanEdit bool
	Plan    string
}

// Invitees answers what each of emails, invited to a board, may do on it,
// in order: what the share dialog tells the owner before and after
// inviting.
func (s *Service) Invitees(ctx context.Context, emails []string) ([]Invitee, error) {
	out := make([]Invitee, 0, len(emails))
	for _, e := range emails {
		p, err := s.meter.PlanOf(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("plan of invitee %s: %w", e, err)
		}
		out = append(out, Invitee{Email: e, CanEdit: p.CanEdit(false), Plan: p.Name})
	}
	return out, nil
}

// EditPlans names the plans whose invitees edit, in the plan table's
// order (never nil).
func (s *Service) EditPlans() []string {
	names := []string{}
	for _, p := range s.meter.Plans().All() {
		if p.InviteeCanEdit {
			names = append(names, p.Name)
		}
	}
	return names
}

// InvitedAccess is what a plan change means for email: the boards they are
// invited to (not their own: owners always edit) and whether their plan
// lets them edit those now. Boards is empty when they are invited nowhere.
func (s *Service) InvitedAccess(ctx context.Context, email string) (boards []string, canEdit bool, err error) {
	all, err := s.boards.ListBoardsFor(ctx, email)
	if err != nil {
		return nil, false, fmt.Errorf("list the boards of %s: %w", email, err)
	}
	for i := range all {
		b := &all[i]
		if b.OwnerEmail == email {
			continue
		}
		if len(boards) == 0 {
			if canEdit, err = s.meter.CanEdit(ctx, b, email); err != nil {
				return nil, false, fmt.Errorf("access of %s: %w", email, err)
			}
		}
		boards = append(boards, b.ID)
	}
	return boards, canEdit, nil
}
