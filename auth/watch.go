package auth

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"time"

	"corkboard/board"
)

// sessionID is a session's storage key (SHA-256 of its token) as a map key.
type sessionID [sha256.Size]byte

// SessionWatch tells a long-lived connection (a WebSocket) that the session
// it was opened with has ended: logged out, found expired when presented,
// or found expired by the sweep. Build it with Service.WatchSession.
type SessionWatch struct {
	svc   *Service
	id    sessionID
	ended chan struct{}
	once  sync.Once
}

// Ended is closed when the session ends.
func (w *SessionWatch) Ended() <-chan struct{} { return w.ended }

// Stop releases the watch. Safe to call twice, after the session ended,
// and on nil.
func (w *SessionWatch) Stop() {
	if w == nil {
		return // a socket without a session (a read-only link's)
	}
	w.svc.watchMu.Lock()
	defer w.svc.watchMu.Unlock()
	if set := w.svc.watched[w.id]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(w.svc.watched, w.id)
		}
	}
}

func (w *SessionWatch) end() { w.once.Do(func() { close(w.ended) }) }

// WatchSession starts watching the live session behind token. The watch is
// registered before the session is checked, so a logout racing with it is
// never missed: either the check fails or the logout ends the watch.
// EUNAUTHORIZED when the session is not live (nothing is then registered).
// Checking does not count as a use of the session.
func (s *Service) WatchSession(ctx context.Context, token string) (*SessionWatch, error) {
	key, err := SessionKey(token)
	if err != nil {
		return nil, errNotLoggedIn()
	}
	w := &SessionWatch{svc: s, id: sessionID(key), ended: make(chan struct{})}
	s.watchMu.Lock()
	if s.watched[w.id] == nil {
		s.watched[w.id] = map[*SessionWatch]struct{}{}
	}
	s.watched[w.id][w] = struct{}{}
	s.watchMu.Unlock()
	sess, err := s.db.FindSession(ctx, key)
	if err == nil && s.expired(sess.CreatedAt, sess.LastSeen, s.now()) {
		err = board.Errorf(board.EUNAUTHORIZED, "Your session has expired. Log in again.")
	}
	if err != nil {
		w.Stop()
		if board.ErrorCode(err) == board.ENOTFOUND {
			return nil, errNotLoggedIn()
		}
		return nil, err
	}
	return w, nil
}

// endSession forgets the session id (logged out or expired) here and,
// through Config.SessionEnded, on the other nodes.
func (s *Service) endSession(id []byte) {
	s.EndSessionWatches(id)
	if s.cfg.SessionEnded != nil {
		s.cfg.SessionEnded(id)
	}
}

// EndSessionWatches forgets the session whose storage key is id on this
// node only: it leaves the session cache, and every watch of it ends, so
// the connections opened with it close. Another node ended the session;
// nothing is announced again.
func (s *Service) EndSessionWatches(id []byte) {
	s.sessions.Delete(sessionID(id))
	s.watchMu.Lock()
	set := s.watched[sessionID(id)]
	delete(s.watched, sessionID(id))
	s.watchMu.Unlock()
	for w := range set {
		w.end()
	}
}

// Watched returns how many sessions are being watched.
func (s *Service) Watched() int {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	return len(s.watched)
}

// sweepWatched ends the watched sessions that are gone or expired at now,
// deleting the expired ones. Only sessions with an open connection are
// looked at, so this costs one read per such session, not a scan.
func (s *Service) sweepWatched(ctx context.Context, now time.Time) int {
	s.watchMu.Lock()
	ids := make([]sessionID, 0, len(s.watched))
	for id := range s.watched {
		ids = append(ids, id)
	}
	s.watchMu.Unlock()
	n := 0
	for _, id := range ids {
		sess, err := s.db.FindSession(ctx, id[:])
		switch {
		case board.ErrorCode(err) == board.ENOTFOUND:
		case err != nil:
			s.log.WarnContext(ctx, "check watched session", slog.Any("err", err))
			continue
		case s.expired(sess.CreatedAt, sess.LastSeen, now):
			if err := s.db.DeleteSession(ctx, id[:]); err != nil {
				s.log.WarnContext(ctx, "delete expired session", slog.Any("err", err))
				continue
			}
		default:
			continue
		}
		s.endSession(id[:])
		n++
	}
	return n
}
