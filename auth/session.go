package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"corkboard/board"
	"corkboard/internal/cache"
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
	id, err := sessionKey(token)
	if err != nil {
		return nil, err
	}
	return id[:], nil
}

// sessionKey is SessionKey without a heap allocation: the request path
// calls it on every authenticated request.
func sessionKey(token string) (sessionID, error) {
	if len(token) != encodedTokenLen {
		return sessionID{}, errors.New("session token has the wrong length")
	}
	var src [encodedTokenLen]byte
	copy(src[:], token)
	var raw [tokenBytes]byte
	if n, err := tokenEncoding.Decode(raw[:], src[:]); err != nil || n != tokenBytes {
		return sessionID{}, errors.New("session token is not base64url")
	}
	return sha256.Sum256(raw[:]), nil
}

// bytes returns id as a new slice, for storage calls. Slicing id itself
// would move it to the heap on every request, cache hits included.
func (id sessionID) bytes() []byte { return append([]byte(nil), id[:]...) }

// encodedTokenLen is a token's length in characters: 43.
const encodedTokenLen = (tokenBytes*8 + 5) / 6

// cachedSession is what the session cache holds for a live session: the
// parts of the stored record the expiry rules read. lastSeen is the last
// use known to be stored (unix nanoseconds); it only moves forward.
type cachedSession struct {
	email     string
	createdAt time.Time
	lastSeen  atomic.Int64
}

func newSessionCache(cfg Config) *cache.Cache[sessionID, *cachedSession] {
	return cache.New[sessionID, *cachedSession](cache.Options[sessionID]{
		Size: cfg.SessionCacheSize,
		TTL:  cfg.SessionCacheTTL,
		// A session ID is a SHA-256: its first bytes are already uniform.
		Hash: func(id sessionID) uint64 { return binary.LittleEndian.Uint64(id[:8]) },
		Now:  cfg.Now,
	})
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

// expired reports whether a session created at createdAt and last used at
// lastSeen has ended at now: idle too long since its recorded last use, or
// older than the absolute cap.
func (s *Service) expired(createdAt, lastSeen, now time.Time) bool {
	return !now.Before(lastSeen.Add(s.cfg.SessionIdle)) || !now.Before(createdAt.Add(s.cfg.SessionMaxAge))
}

// Authenticate returns the e-mail of the live session behind token and
// slides its idle expiry. EUNAUTHORIZED when the token is malformed,
// unknown (forged or logged out) or expired; an expired session is deleted.
//
// A live session is cached for SessionCacheTTL; logout and expiry on this
// node remove it at once, Invalidate when another node reports them. A
// token not found in storage is never cached, so forged tokens cannot
// fill the cache.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	id, err := sessionKey(token)
	if err != nil {
		return "", errNotLoggedIn()
	}
	now := s.now()
	if c, ok := s.sessions.Get(id); ok {
		lastSeen := time.Unix(0, c.lastSeen.Load())
		if !s.expired(c.createdAt, lastSeen, now) {
			s.touch(ctx, id, c, lastSeen, now)
			return c.email, nil
		}
		// The cached last use may be older than the stored one (another
		// node's): storage decides.
	}
	gen := s.sessions.Gen(id)
	key := id.bytes()
	sess, err := s.db.FindSession(ctx, key)
	if board.ErrorCode(err) == board.ENOTFOUND {
		return "", errNotLoggedIn()
	} else if err != nil {
		return "", err
	}
	if s.expired(sess.CreatedAt, sess.LastSeen, now) {
		// Bookkeeping must not fail because the client hung up.
		if err := s.db.DeleteSession(context.WithoutCancel(ctx), key); err != nil {
			s.log.WarnContext(ctx, "delete expired session", slog.Any("err", err))
		}
		s.endSession(key)
		return "", board.Errorf(board.EUNAUTHORIZED, "Your session has expired. Log in again.")
	}
	c := &cachedSession{email: sess.Email, createdAt: sess.CreatedAt}
	c.lastSeen.Store(sess.LastSeen.UnixNano())
	s.touch(ctx, id, c, sess.LastSeen, now)
	s.sessions.Add(id, c, gen)
	return sess.Email, nil
}

// touch records a use of the session at now when the stored one
// (lastSeen) is an hour (LastSeenEvery) stale: a read stays a read on
// almost every request.
func (s *Service) touch(ctx context.Context, id sessionID, c *cachedSession, lastSeen, now time.Time) {
	if now.Sub(lastSeen) < s.cfg.LastSeenEvery {
		return
	}
	if err := s.db.TouchSession(context.WithoutCancel(ctx), id.bytes(), now); err != nil {
		// The session is valid; failing the request would punish the user
		// for a storage hiccup that the next request retries.
		s.log.WarnContext(ctx, "record session use", slog.Any("err", err))
		return
	}
	for {
		old := c.lastSeen.Load()
		if old >= now.UnixNano() || c.lastSeen.CompareAndSwap(old, now.UnixNano()) {
			return
		}
	}
}

// Logout deletes the session behind token and ends its watches, so the
// connections opened with it close at once. A token that is malformed or
// already gone is not an error: the caller is logged out either way.
func (s *Service) Logout(ctx context.Context, token string) error {
	id, err := sessionKey(token)
	if err != nil {
		return nil
	}
	if err := s.db.DeleteSession(ctx, id.bytes()); err != nil {
		return err
	}
	s.endSession(id.bytes())
	return nil
}

// Invalidate drops what the service holds about a record another node
// changed. For cache.Session (the key is the session's 32-byte storage
// key) the session has ended there: it leaves the cache and its watches
// here end, closing its sockets. Other kinds are not the service's.
func (s *Service) Invalidate(kind cache.Kind, key string) {
	if kind != cache.Session || len(key) != sha256.Size {
		return
	}
	s.EndSessionWatches([]byte(key))
}
