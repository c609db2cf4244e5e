package access

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// Read-only links (docs/api.md, "Read-only links"): the owner makes a link
// whose holder may view the board without an account, until it expires or
// is revoked. What a link may do is decided here: view, nothing else. The
// token and its hashing are auth's; this package sees only the storage key.

// Limits of read-only links.
const (
	// MaxLinksPerBoard is how many links a board may have at once (expired
	// ones do not count): enough for one per audience, few enough that the
	// owner can still see who holds what.
	MaxLinksPerBoard = 50
	// MinLinkHours and MaxLinkHours bound a link's life. Every link ends:
	// a link forgotten in a chat or a wiki must not open the board
	// forever, and a year is long enough to be renewed by hand.
	MinLinkHours = 1
	MaxLinkHours = 8760
)

// linkEmailPrefix starts the identity a link's requests and sockets carry
// where a person's e-mail would be (connection caps, kicks, logs). No
// account's address can be one: a canonical address has an @, this has
// none.
const linkEmailPrefix = "link:"

// LinkEmail is the identity of requests made with link id: what the hub's
// caps count and what Kick closes when the link is revoked.
func LinkEmail(id string) string { return linkEmailPrefix + id }

// IsLinkEmail reports whether email is a link's identity, not a person's.
func IsLinkEmail(email string) bool { return strings.HasPrefix(email, linkEmailPrefix) }

type linkService struct {
	store persist.LinkStore
	now   func() time.Time
}

func newLinkService(opts Options) linkService {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return linkService{store: opts.Links, now: now}
}

// errNoLinks answers when the deployment keeps no links.
var errNoLinks = board.Errorf(board.EUNAVAILABLE, "Read-only links are not available on this server.")

// errLinkGone is the answer to a link that is malformed, unknown, revoked
// or expired: one message for all, so that a holder learns nothing but
// that it no longer works.
func errLinkGone() error {
	return board.Errorf(board.EUNAUTHORIZED, "This link no longer works.")
}

// errLinkViewOnly is the answer to a link asking for more than a view.
func errLinkViewOnly() error {
	return board.Errorf(board.EFORBIDDEN, "A read-only link can only view the board.")
}

// ErrLinkViewOnly is what a request made with a link gets for anything
// but viewing the board (pushes, AI, history, sharing).
func ErrLinkViewOnly() error { return errLinkViewOnly() }

// CreateLink makes a read-only link to a's board for the owner, stored
// under key (auth.NewLinkToken), ending hours from now. EFORBIDDEN for
// anyone but the owner; EINVALID (field expiresInHours) outside
// MinLinkHours..MaxLinkHours; ECONFLICT past MaxLinksPerBoard.
func (s *Service) CreateLink(ctx context.Context, a Access, key []byte, hours int64) (persist.Link, error) {
	if !a.IsOwner || a.Link != nil {
		return persist.Link{}, board.Errorf(board.EFORBIDDEN, "Only the board's owner can do this.")
	}
	if hours < MinLinkHours || hours > MaxLinkHours {
		e := board.FieldErrorf("expiresInHours", "expiresInHours must be a whole number of hours from %d to %d.", MinLinkHours, MaxLinkHours)
		e.Limit = MaxLinkHours
		return persist.Link{}, e
	}
	if s.links.store == nil {
		return persist.Link{}, errNoLinks
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id) // never fails (crypto/rand)
	now := s.links.now().UTC().Truncate(time.Millisecond)
	l := persist.Link{ID: base64.RawURLEncoding.EncodeToString(id), BoardID: a.Board.ID, Hash: key, CreatedBy: a.Email,
		CreatedAt: now, ExpiresAt: now.Add(time.Duration(hours) * time.Hour)}
	if err := s.links.store.CreateLink(ctx, l, now, MaxLinksPerBoard); err != nil {
		return persist.Link{}, fmt.Errorf("create a link to board %s: %w", a.Board.ID, err)
	}
	return l, nil
}

// Links lists the board's working links, oldest first.
func (s *Service) Links(ctx context.Context, boardID string) ([]persist.Link, error) {
	if s.links.store == nil {
		return []persist.Link{}, nil
	}
	links, err := s.links.store.ListLinks(ctx, boardID, s.links.now())
	if err != nil {
		return nil, fmt.Errorf("list the links of board %s: %w", boardID, err)
	}
	return links, nil
}

// RevokeLink deletes the board's link id and reports whether it was there.
// The caller closes what was opened with it (hub.Kick of LinkEmail(id)).
func (s *Service) RevokeLink(ctx context.Context, boardID, id string) (bool, error) {
	if s.links.store == nil {
		return false, nil
	}
	ok, err := s.links.store.DeleteLink(ctx, boardID, id)
	if err != nil {
		return false, fmt.Errorf("revoke link %s of board %s: %w", id, boardID, err)
	}
	return ok, nil
}

// LinkGuard is the board guard for a request made with a read-only link
// whose token's storage key is key: the link must exist, not be expired,
// and be a link to boardID. The answer views and never edits; its Email is
// LinkEmail of the link. EUNAUTHORIZED ("This link no longer works.") for
// a link that is not (or no more), EFORBIDDEN for another board's.
func (s *Service) LinkGuard(ctx context.Context, boardID string, key []byte) (Access, error) {
	if err := board.ValidateBoardID("boardId", boardID); err != nil {
		return Access{}, err
	}
	l, err := s.FindLink(ctx, key)
	if err != nil {
		return Access{}, err
	}
	if l.BoardID != boardID {
		return Access{}, errLinkViewOnly()
	}
	b, err := s.boards.FindBoard(ctx, boardID)
	if err != nil {
		return Access{}, err
	}
	return Access{Board: b, Email: LinkEmail(l.ID), Link: l}, nil
}

// FindLink returns the working link stored under key; EUNAUTHORIZED when
// there is none (never made, revoked or expired). The key found is
// compared again in constant time before it is trusted.
func (s *Service) FindLink(ctx context.Context, key []byte) (*persist.Link, error) {
	if s.links.store == nil || len(key) == 0 {
		return nil, errLinkGone()
	}
	l, err := s.links.store.FindLink(ctx, key, s.links.now())
	if board.ErrorCode(err) == board.ENOTFOUND {
		return nil, errLinkGone()
	} else if err != nil {
		return nil, fmt.Errorf("find a link: %w", err)
	}
	if subtle.ConstantTimeCompare(l.Hash, key) != 1 {
		return nil, errLinkGone()
	}
	return l, nil
}
