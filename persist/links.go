package persist

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Link is a read-only link to a board (docs/api.md, "Read-only links"):
// whoever holds its token may view the board, without an account, until
// ExpiresAt or until the owner revokes it. The token itself is never
// stored: Hash is the SHA-256 of its 32 random bytes (auth.LinkKey), and
// the link is found by it.
type Link struct {
	// ID names the link in the owner's list and in revocations; it is
	// random and tells nothing about the token.
	ID        string
	BoardID   string
	Hash      []byte
	CreatedBy string
	CreatedAt time.Time
	// ExpiresAt is when the link stops working; every link has one.
	ExpiresAt time.Time
}

// Expired reports whether the link no longer works at now.
func (l *Link) Expired(now time.Time) bool { return !now.Before(l.ExpiresAt) }

// LinkStore keeps boards' read-only links. Expiry is the caller's clock:
// the store applies the now it is given.
type LinkStore interface {
	// CreateLink stores l. When the board
	// already has max links that are not expired at now, it is ECONFLICT
	// with nothing written (of concurrent creations, never more than max
	// pass); expired links of the board are deleted on the way.
	// ENOTFOUND for an unclaimed board; ECONFLICT for an ID or hash
	// already stored.
	CreateLink(ctx context.Context, l Link, now time.Time, max int) error
	// ListLinks returns the board's links not expired at now, oldest first
	// (then by ID); an empty (not nil) slice for none.
	ListLinks(ctx context.Context, boardID string, now time.Time) ([]Link, error)
	// FindLink returns the link whose token hashes to hash; ENOTFOUND when
	// there is none or it is expired at now.
	FindLink(ctx context.Context, hash []byte, now time.Time) (*Link, error)
	// DeleteLink removes the board's link id and reports whether it was
	// there (a link of another board is not).
	DeleteLink(ctx context.Context, boardID, id string) (bool, error)
}

// SortLinks puts links in the order ListLinks answers: oldest first, then
// by ID.
func SortLinks(links []Link) {
	slices.SortFunc(links, func(a, b Link) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
