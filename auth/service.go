// Package auth is passwordless login: one-time codes sent by e-mail, and
// server-side sessions referenced by an opaque cookie token.
package auth

import (
	"context"

	"corkboard/board"
)

// Service issues codes and sessions. (Placeholder contract: being built.)
type Service struct{}

// Authenticate returns the e-mail of the live session behind token.
// EUNAUTHORIZED when the token is unknown, forged or expired.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	return "", board.Errorf(board.EUNAUTHORIZED, "Not logged in.")
}
