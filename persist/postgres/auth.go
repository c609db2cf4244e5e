package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"corkboard/persist"
)

func getOTP(ctx context.Context, q querier, email string, lock bool) (*persist.OTP, error) {
	var o persist.OTP
	var exp int64
	found, err := scanByEmail(ctx, q, "SELECT hash, expires_ns, attempts, network FROM otps WHERE email = $1", email, lock,
		&o.Hash, &exp, &o.Attempts, &o.Network)
	if !found {
		return nil, err
	}
	o.ExpiresAt = fromNanos(exp)
	return &o, nil
}

// scanByEmail reads the one row that query selects for email ($1) into
// dest, locked FOR UPDATE when lock; false, and no error, when there is
// none.
func scanByEmail(ctx context.Context, q querier, query, email string, lock bool, dest ...any) (found bool, err error) {
	if lock {
		query += " FOR UPDATE"
	}
	err = q.QueryRow(ctx, query, email).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func putOTP(ctx context.Context, q querier, email string, o *persist.OTP) error {
	hash := o.Hash
	if hash == nil {
		hash = []byte{}
	}
	_, err := q.Exec(ctx, `INSERT INTO otps (email, hash, expires_ns, attempts, network) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (email) DO UPDATE SET hash = excluded.hash, expires_ns = excluded.expires_ns,
			attempts = excluded.attempts, network = excluded.network`,
		email, hash, nanos(o.ExpiresAt), o.Attempts, o.Network)
	return err
}

// PutOTP stores o as the code pending for email, replacing (and so voiding)
// any earlier one.
func (s *Store) PutOTP(ctx context.Context, email string, o persist.OTP) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	return wrap(putOTP(ctx, s.pool, email, &o), "store one-time code")
}

// FindOTP returns the code pending for email. ENOTFOUND when there is none.
func (s *Store) FindOTP(ctx context.Context, email string) (*persist.OTP, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	o, err := getOTP(ctx, s.pool, email, false)
	if err != nil {
		return nil, wrap(err, "find one-time code")
	}
	if o == nil {
		return nil, notFound("Code")
	}
	return o, nil
}

// UpdateOTP runs fn on the code pending for email (nil when there is none)
// inside one transaction holding the code's row lock, then saves, deletes
// or leaves the code as fn answers: two concurrent tries (on any nodes) can
// neither both use one code nor lose a count. fn runs once.
func (s *Store) UpdateOTP(ctx context.Context, email string, fn func(o *persist.OTP) persist.OTPChange) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := s.inTx(ctx, readWrite, false, func(tx pgx.Tx) error {
		o, err := getOTP(ctx, tx, email, true)
		if err != nil {
			return err
		}
		switch fn(o) {
		case persist.OTPSave:
			if o == nil {
				return nil
			}
			return putOTP(ctx, tx, email, o)
		case persist.OTPDelete:
			_, err := tx.Exec(ctx, "DELETE FROM otps WHERE email = $1", email)
			return err
		}
		return nil
	})
	return wrap(err, "update one-time code")
}

// ExpiredOTPs reads up to limit codes (SweepBatch when limit ≤ 0) in
// address order after the address after ("" starts at the first) and
// returns those expired at or before now. next is where a later call goes
// on; "" when the table is done.
func (s *Store) ExpiredOTPs(ctx context.Context, now time.Time, after string, limit int) (emails []string, next string, err error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if limit <= 0 {
		limit = SweepBatch
	}
	// One row more than limit tells whether the table goes on.
	rows, err := s.pool.Query(ctx, `SELECT email, expires_ns <= $2 FROM otps WHERE email > $1 ORDER BY email LIMIT $3`,
		after, nanos(now), limit+1)
	if err != nil {
		return nil, "", wrap(err, "find expired one-time codes")
	}
	var email string
	var dead bool
	read := 0
	_, err = pgx.ForEachRow(rows, []any{&email, &dead}, func() error {
		read++
		if read > limit {
			return nil
		}
		next = email
		if dead {
			emails = append(emails, email)
		}
		return nil
	})
	if err != nil {
		return nil, "", wrap(err, "find expired one-time codes")
	}
	if read <= limit {
		next = ""
	}
	return emails, next, nil
}

// DeleteExpiredOTPs deletes those of the codes pending for emails that are
// still expired at now, in one statement, and returns how many it deleted:
// a code sent since ExpiredOTPs listed the address stays.
func (s *Store) DeleteExpiredOTPs(ctx context.Context, emails []string, now time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, "DELETE FROM otps WHERE email = ANY($1) AND expires_ns <= $2", nonNil(emails), nanos(now))
	if err != nil {
		return 0, wrap(err, "delete expired one-time codes")
	}
	return int(tag.RowsAffected()), nil
}

// SweepOTPs deletes every code that expired at or before now and returns
// how many it deleted, in statements of at most SweepBatch rows.
func (s *Store) SweepOTPs(ctx context.Context, now time.Time) (int, error) {
	n, after := 0, ""
	for {
		emails, next, err := s.ExpiredOTPs(ctx, now, after, SweepBatch)
		if err != nil {
			return n, wrap(err, "sweep")
		}
		if len(emails) > 0 {
			d, err := s.DeleteExpiredOTPs(ctx, emails, now)
			n += d
			if err != nil {
				return n, wrap(err, "sweep")
			}
		}
		if next == "" {
			return n, nil
		}
		after = next
	}
}

// CreateSession stores s under id (the SHA-256 of the session token).
func (s *Store) CreateSession(ctx context.Context, id []byte, sess persist.Session) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO sessions (id, email, created_ns, last_seen_ns) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET email = excluded.email, created_ns = excluded.created_ns, last_seen_ns = excluded.last_seen_ns`,
		id, sess.Email, nanos(sess.CreatedAt), nanos(sess.LastSeen))
	return wrap(err, "create session")
}

// FindSession returns the session stored under id. ENOTFOUND when there is
// none; expiry is the caller's rule, so an expired session is still found.
func (s *Store) FindSession(ctx context.Context, id []byte) (*persist.Session, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var sess persist.Session
	var created, seen int64
	err := s.pool.QueryRow(ctx, "SELECT email, created_ns, last_seen_ns FROM sessions WHERE id = $1", id).Scan(&sess.Email, &created, &seen)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("Session")
	} else if err != nil {
		return nil, wrap(err, "find session")
	}
	sess.CreatedAt, sess.LastSeen = fromNanos(created), fromNanos(seen)
	return &sess, nil
}

// TouchSession moves the session's LastSeen forward to at, in one
// statement: never back, and never recreating a session deleted meanwhile.
func (s *Store) TouchSession(ctx context.Context, id []byte, at time.Time) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, "UPDATE sessions SET last_seen_ns = $2 WHERE id = $1 AND last_seen_ns < $2", id, nanos(at))
	return wrap(err, "touch session")
}

// DeleteSession removes the session stored under id; removing a missing
// session is not an error.
func (s *Store) DeleteSession(ctx context.Context, id []byte) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, "DELETE FROM sessions WHERE id = $1", id)
	return wrap(err, "delete session")
}

// ExpiredSessions reads up to limit sessions (SweepBatch when
// limit ≤ 0) in id order after the id after (nil starts at the first) and
// returns the ids of those last seen at or before idleBefore or created at
// or before createdBefore. next is where a later call goes on; nil when the
// table is done.
func (s *Store) ExpiredSessions(ctx context.Context, idleBefore, createdBefore time.Time, after []byte, limit int) (ids [][]byte, next []byte, err error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if limit <= 0 {
		limit = SweepBatch
	}
	if after == nil {
		after = []byte{}
	}
	rows, err := s.pool.Query(ctx, `SELECT id, last_seen_ns <= $2 OR created_ns <= $3 FROM sessions
		WHERE id > $1 ORDER BY id LIMIT $4`, after, nanos(idleBefore), nanos(createdBefore), limit+1)
	if err != nil {
		return nil, nil, wrap(err, "find expired sessions")
	}
	var id []byte
	var dead bool
	read := 0
	_, err = pgx.ForEachRow(rows, []any{&id, &dead}, func() error {
		read++
		if read > limit {
			return nil
		}
		next = append([]byte(nil), id...)
		if dead {
			ids = append(ids, next)
		}
		return nil
	})
	if err != nil {
		return nil, nil, wrap(err, "find expired sessions")
	}
	if read <= limit {
		next = nil
	}
	return ids, next, nil
}

// DeleteExpiredSessions deletes those of the sessions stored under ids that
// are still expired by the rule of ExpiredSessions, in one statement, and
// returns how many it deleted: a session used since it was listed stays.
func (s *Store) DeleteExpiredSessions(ctx context.Context, ids [][]byte, idleBefore, createdBefore time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if ids == nil {
		ids = [][]byte{}
	}
	tag, err := s.pool.Exec(ctx, "DELETE FROM sessions WHERE id = ANY($1) AND (last_seen_ns <= $2 OR created_ns <= $3)",
		ids, nanos(idleBefore), nanos(createdBefore))
	if err != nil {
		return 0, wrap(err, "delete expired sessions")
	}
	return int(tag.RowsAffected()), nil
}

// SweepSessions deletes every session last seen at or before idleBefore or
// created at or before createdBefore, and returns how many it deleted, in
// statements of at most SweepBatch rows.
func (s *Store) SweepSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error) {
	n := 0
	var after []byte
	for {
		ids, next, err := s.ExpiredSessions(ctx, idleBefore, createdBefore, after, SweepBatch)
		if err != nil {
			return n, wrap(err, "sweep")
		}
		if len(ids) > 0 {
			d, err := s.DeleteExpiredSessions(ctx, ids, idleBefore, createdBefore)
			n += d
			if err != nil {
				return n, wrap(err, "sweep")
			}
		}
		if next == nil {
			return n, nil
		}
		after = next
	}
}
