package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/persist"
)

func getOTP(tx *bbolt.Tx, email string) (*persist.OTP, error) {
	v := tx.Bucket(bucketOTP).Get([]byte(email))
	if v == nil {
		return nil, nil
	}
	var o persist.OTP
	if err := json.Unmarshal(v, &o); err != nil {
		return nil, fmt.Errorf("decode one-time code: %w", err)
	}
	return &o, nil
}

func putOTP(tx *bbolt.Tx, email string, o *persist.OTP) error {
	v, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode one-time code: %w", err)
	}
	return tx.Bucket(bucketOTP).Put([]byte(email), v)
}

// PutOTP stores o as the code pending for email, replacing (and so voiding)
// any earlier one.
func (db *DB) PutOTP(ctx context.Context, email string, o persist.OTP) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		return putOTP(tx, email, &o)
	})
	if err != nil {
		return fmt.Errorf("store one-time code: %w", err)
	}
	return nil
}

// FindOTP returns the code pending for email. ENOTFOUND when there is none.
func (db *DB) FindOTP(ctx context.Context, email string) (*persist.OTP, error) {
	return findOne(ctx, db, "find one-time code", "Code", func(tx *bbolt.Tx) (*persist.OTP, error) {
		return getOTP(tx, email)
	})
}

// findOne reads one record in a read transaction: what get answers, or
// ENOTFOUND naming what when get finds none; doing names the call in a
// storage error.
func findOne[T any](ctx context.Context, db *DB, doing, what string, get func(tx *bbolt.Tx) (*T, error)) (*T, error) {
	var v *T
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		v, err = get(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	if v == nil {
		return nil, notFound(what)
	}
	return v, nil
}

// UpdateOTP runs fn on the code pending for email (nil when there is none)
// inside one write transaction, then saves, deletes or leaves the code as fn
// answers. Checking a code and counting the try happen together, so two
// concurrent tries can neither both use one code nor lose a count.
func (db *DB) UpdateOTP(ctx context.Context, email string, fn func(o *persist.OTP) persist.OTPChange) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		o, err := getOTP(tx, email)
		if err != nil {
			return err
		}
		switch fn(o) {
		case persist.OTPSave:
			if o == nil {
				return nil
			}
			return putOTP(tx, email, o)
		case persist.OTPDelete:
			return tx.Bucket(bucketOTP).Delete([]byte(email))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update one-time code: %w", err)
	}
	return nil
}

// SweepBatch is how many records one step of a sweep reads, and so the most
// one of its write transactions deletes.
const SweepBatch = 1000

// otpExpired reports whether the stored code v is dead at now. An
// undecodable record can never be used: it counts as expired too.
func otpExpired(v []byte, now time.Time) bool {
	var o persist.OTP
	return json.Unmarshal(v, &o) != nil || !now.Before(o.ExpiresAt)
}

// ExpiredOTPs reads up to limit codes (SweepBatch when limit ≤ 0) in address
// order after the address after ("" starts at the first) and returns those
// expired at or before now. next is where a later call goes on; "" when the
// bucket is done. It is one short read transaction, so it blocks no writer.
func (db *DB) ExpiredOTPs(ctx context.Context, now time.Time, after string, limit int) (emails []string, next string, err error) {
	err = db.view(ctx, func(tx *bbolt.Tx) error {
		keys, last := scanExpired(tx.Bucket(bucketOTP), []byte(after), limit, func(v []byte) bool { return otpExpired(v, now) })
		for _, k := range keys {
			emails = append(emails, string(k))
		}
		next = string(last)
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("find expired one-time codes: %w", err)
	}
	return emails, next, nil
}

// DeleteExpiredOTPs deletes those of the codes pending for emails that are
// still expired at now, in one write transaction, and returns how many it
// deleted. Each is read again first: a code sent since ExpiredOTPs listed
// the address replaced the expired one and stays.
func (db *DB) DeleteExpiredOTPs(ctx context.Context, emails []string, now time.Time) (int, error) {
	keys := make([][]byte, len(emails))
	for i, e := range emails {
		keys[i] = []byte(e)
	}
	n, err := db.deleteIf(ctx, bucketOTP, keys, func(v []byte) bool { return otpExpired(v, now) })
	if err != nil {
		return 0, fmt.Errorf("delete expired one-time codes: %w", err)
	}
	return n, nil
}

// SweepOTPs deletes every code that expired at or before now and returns
// how many it deleted (on error: how many before it). It alternates short
// read passes (ExpiredOTPs) and write transactions of at most SweepBatch
// deletions (DeleteExpiredOTPs), so other writers never wait for more than
// one batch.
func (db *DB) SweepOTPs(ctx context.Context, now time.Time) (int, error) {
	n, after := 0, ""
	for {
		emails, next, err := db.ExpiredOTPs(ctx, now, after, SweepBatch)
		if err != nil {
			return n, fmt.Errorf("sweep: %w", err)
		}
		if len(emails) > 0 {
			d, err := db.DeleteExpiredOTPs(ctx, emails, now)
			n += d
			if err != nil {
				return n, fmt.Errorf("sweep: %w", err)
			}
		}
		if next == "" {
			return n, nil
		}
		after = next
	}
}

// scanExpired walks up to limit records of b after the key after (nil or
// empty: from the first) and returns copies of the keys whose values dead
// reports, and the last key it read when it stopped at limit (nil when it
// reached the end). Keys are copied because they are only valid inside the
// transaction.
func scanExpired(b *bbolt.Bucket, after []byte, limit int, dead func(v []byte) bool) (keys [][]byte, last []byte) {
	if limit <= 0 {
		limit = SweepBatch
	}
	c := b.Cursor()
	var k, v []byte
	if len(after) == 0 {
		k, v = c.First()
	} else if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
		k, v = c.Next()
	}
	for read := 0; k != nil; k, v = c.Next() {
		if read == limit {
			return keys, last
		}
		read++
		last = bytes.Clone(k)
		if dead(v) {
			keys = append(keys, last)
		}
	}
	return keys, nil
}

// deleteIf deletes, in one write transaction, each of keys in bucket whose
// current value dead still reports, and counts them. Missing keys are skipped.
func (db *DB) deleteIf(ctx context.Context, bucket []byte, keys [][]byte, dead func(v []byte) bool) (int, error) {
	n := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		n = 0
		b := tx.Bucket(bucket)
		for _, k := range keys {
			if v := b.Get(k); v == nil || !dead(v) {
				continue
			}
			if err := b.Delete(k); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func getSession(tx *bbolt.Tx, id []byte) (*persist.Session, error) {
	v := tx.Bucket(bucketSessions).Get(id)
	if v == nil {
		return nil, nil
	}
	var s persist.Session
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	return &s, nil
}

func putSession(tx *bbolt.Tx, id []byte, s *persist.Session) error {
	v, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	return tx.Bucket(bucketSessions).Put(id, v)
}

// CreateSession stores s under id (the SHA-256 of the session token).
func (db *DB) CreateSession(ctx context.Context, id []byte, s persist.Session) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		return putSession(tx, id, &s)
	})
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// FindSession returns the session stored under id. ENOTFOUND when there is
// none; expiry is the caller's rule, so an expired session is still found.
func (db *DB) FindSession(ctx context.Context, id []byte) (*persist.Session, error) {
	return findOne(ctx, db, "find session", "Session", func(tx *bbolt.Tx) (*persist.Session, error) {
		return getSession(tx, id)
	})
}

// TouchSession moves the session's LastSeen forward to at. It never moves it
// back and never recreates a session deleted meanwhile (a logout racing a
// request stays logged out). Concurrent touches share one commit.
func (db *DB) TouchSession(ctx context.Context, id []byte, at time.Time) error {
	err := db.batch(ctx, func(tx *bbolt.Tx) error {
		s, err := getSession(tx, id)
		if err != nil || s == nil || !at.After(s.LastSeen) {
			return err
		}
		s.LastSeen = at
		return putSession(tx, id, s)
	})
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// DeleteSession removes the session stored under id; removing a missing
// session is not an error.
func (db *DB) DeleteSession(ctx context.Context, id []byte) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSessions).Delete(id)
	})
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// sessionExpired reports whether the stored session v is over: last seen at
// or before idleBefore, or created at or before createdBefore. An
// undecodable record can never be used: it counts as expired too.
func sessionExpired(v []byte, idleBefore, createdBefore time.Time) bool {
	var s persist.Session
	return json.Unmarshal(v, &s) != nil || !s.LastSeen.After(idleBefore) || !s.CreatedAt.After(createdBefore)
}

// ExpiredSessions reads up to limit sessions (SweepBatch when limit ≤ 0) in
// key order after the key after (nil starts at the first) and returns the
// ids of those last seen at or before idleBefore or created at or before
// createdBefore. next is where a later call goes on; nil when the bucket is
// done. It is one short read transaction, so it blocks no writer.
func (db *DB) ExpiredSessions(ctx context.Context, idleBefore, createdBefore time.Time, after []byte, limit int) (ids [][]byte, next []byte, err error) {
	err = db.view(ctx, func(tx *bbolt.Tx) error {
		ids, next = scanExpired(tx.Bucket(bucketSessions), after, limit, func(v []byte) bool {
			return sessionExpired(v, idleBefore, createdBefore)
		})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("find expired sessions: %w", err)
	}
	return ids, next, nil
}

// DeleteExpiredSessions deletes those of the sessions stored under ids that
// are still expired by the same rule as ExpiredSessions, in one write
// transaction, and returns how many it deleted. Each is read again first: a
// session used (TouchSession) since it was listed stays.
func (db *DB) DeleteExpiredSessions(ctx context.Context, ids [][]byte, idleBefore, createdBefore time.Time) (int, error) {
	n, err := db.deleteIf(ctx, bucketSessions, ids, func(v []byte) bool {
		return sessionExpired(v, idleBefore, createdBefore)
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

// SweepSessions deletes every session last seen at or before idleBefore or
// created at or before createdBefore, and returns how many it deleted (on
// error: how many before it). It alternates short read passes
// (ExpiredSessions) and write transactions of at most SweepBatch deletions
// (DeleteExpiredSessions), so pushes and logins never wait for more than
// one batch, and a session used between the two passes survives.
func (db *DB) SweepSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error) {
	n := 0
	var after []byte
	for {
		ids, next, err := db.ExpiredSessions(ctx, idleBefore, createdBefore, after, SweepBatch)
		if err != nil {
			return n, fmt.Errorf("sweep: %w", err)
		}
		if len(ids) > 0 {
			d, err := db.DeleteExpiredSessions(ctx, ids, idleBefore, createdBefore)
			n += d
			if err != nil {
				return n, fmt.Errorf("sweep: %w", err)
			}
		}
		if next == nil {
			return n, nil
		}
		after = next
	}
}
