package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// tokenBytes is the session token's entropy: 256 bits.
const tokenBytes = 32

// tokenEncoding is base64url without padding, strict so that each token has
// exactly one spelling.
var tokenEncoding = base64.RawURLEncoding.Strict()

// SessionKey returns the storage key of a session token: SHA-256 of the
// token's 32 decoded bytes. It fails for anything that is not a token's
// shape (43 characters of base64url), so garbage never reaches storage.
func SessionKey(token string) ([]byte, error) {
	if len(token) != tokenEncoding.EncodedLen(tokenBytes) {
		return nil, errors.New("session token has the wrong length")
	}
	raw, err := tokenEncoding.DecodeString(token)
	if err != nil || len(raw) != tokenBytes {
		return nil, errors.New("session token is not base64url")
	}
	sum := sha256.Sum256(raw)
	return sum[:], nil
}

// newSession stores a fresh session for email and returns its token.
func (s *Service) newSession(ctx context.Context, email string, now time.Time) (*Login, error) {
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate session token: %w", err)
	}
	token := tokenEncoding.EncodeToString(raw)
	id := sha256.Sum256(raw)
	if err := s.db.CreateSession(ctx, id[:], persist.Session{Email: email, CreatedAt: now, LastSeen: now}); err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "login", slog.String("email", email))
	return &Login{Email: email, Token: token, MaxAge: s.cfg.SessionMaxAge}, nil
}

func errNotLoggedIn() error { return board.Errorf(board.EUNAUTHORIZED, "Not logged in.") }

// expired reports whether sess has ended at now: idle too long since its
// recorded last use, or older than the absolute cap.
func (s *Service) expired(sess *persist.Session, now time.Time) bool {
	return !now.Before(sess.LastSeen.Add(s.cfg.SessionIdle)) || !now.Before(sess.CreatedAt.Add(s.cfg.SessionMaxAge))
}

// Authenticate returns the e-mail of the live session behind token and
// slides its idle expiry. EUNAUTHORIZED when the token is malformed,
// unknown (forged or logged out) or expired; an expired session is deleted.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	id, err := SessionKey(token)
	if err != nil {
		return "", errNotLoggedIn()
	}
	sess, err := s.db.FindSession(ctx, id)
	if board.ErrorCode(err) == board.ENOTFOUND {
		return "", errNotLoggedIn()
	} else if err != nil {
		return "", err
	}
	now := s.now()
	// Bookkeeping below must not fail because the client hung up.
	bg := context.WithoutCancel(ctx)
	if s.expired(sess, now) {
		if err := s.db.DeleteSession(bg, id); err != nil {
			s.log.WarnContext(ctx, "delete expired session", slog.Any("err", err))
		}
		s.endSession(id)
		return "", board.Errorf(board.EUNAUTHORIZED, "Your session has expired. Log in again.")
	}
	// Record the use only when the stored one is an hour (LastSeenEvery)
	// stale: a read stays a read on almost every request.
	if now.Sub(sess.LastSeen) >= s.cfg.LastSeenEvery {
		if err := s.db.TouchSession(bg, id, now); err != nil {
			// The session is valid; failing the request would punish the user
			// for a storage hiccup that the next request retries.
			s.log.WarnContext(ctx, "record session use", slog.Any("err", err))
		}
	}
	return sess.Email, nil
}

// Logout deletes the session behind token and ends its watches, so the
// connections opened with it close at once. A token that is malformed or
// already gone is not an error: the caller is logged out either way.
func (s *Service) Logout(ctx context.Context, token string) error {
	id, err := SessionKey(token)
	if err != nil {
		return nil
	}
	if err := s.db.DeleteSession(ctx, id); err != nil {
		return err
	}
	s.endSession(id)
	return nil
}
