package persist

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// OTP is the one-time code pending for an address. Only a keyed hash of the
// code is kept; the caller computes it, so this package never sees a code.
type OTP struct {
	// Hash is HMAC-SHA256 of the address and the code under the server secret.
	Hash []byte `json:"hash"`
	// ExpiresAt is when the code stops being accepted.
	ExpiresAt time.Time `json:"expiresAt"`
	// Attempts counts wrong tries against this code.
	Attempts int `json:"attempts"`
}

// OTPChange tells UpdateOTP what to store after its callback ran.
type OTPChange int

// What UpdateOTP does with the code after its callback.
const (
	// OTPUnchanged writes nothing.
	OTPUnchanged OTPChange = iota
	// OTPSave stores the callback's changes to the code.
	OTPSave
	// OTPDelete removes the code.
	OTPDelete
)

// Session is a login as stored. The key it is stored under is the SHA-256
// of the token the client holds; the token itself is never stored.
type Session struct {
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"createdAt"`
	// LastSeen is the last recorded use. Callers record it coarsely (not on
	// every request) to keep reads from turning into writes.
	LastSeen time.Time `json:"lastSeen"`
}

func getOTP(tx *bbolt.Tx, email string) (*OTP, error) {
	v := tx.Bucket(bucketOTP).Get([]byte(email))
	if v == nil {
		return nil, nil
	}
	var o OTP
	if err := json.Unmarshal(v, &o); err != nil {
		return nil, fmt.Errorf("decode one-time code: %w", err)
	}
	return &o, nil
}

func putOTP(tx *bbolt.Tx, email string, o *OTP) error {
	v, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode one-time code: %w", err)
	}
	return tx.Bucket(bucketOTP).Put([]byte(email), v)
}

// PutOTP stores o as the code pending for email, replacing (and so voiding)
// any earlier one.
func (db *DB) PutOTP(ctx context.Context, email string, o OTP) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		return putOTP(tx, email, &o)
	})
	if err != nil {
		return fmt.Errorf("store one-time code: %w", err)
	}
	return nil
}

// FindOTP returns the code pending for email. ENOTFOUND when there is none.
func (db *DB) FindOTP(ctx context.Context, email string) (*OTP, error) {
	var o *OTP
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		o, err = getOTP(tx, email)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find one-time code: %w", err)
	}
	if o == nil {
		return nil, notFound("Code")
	}
	return o, nil
}

// UpdateOTP runs fn on the code pending for email (nil when there is none)
// inside one write transaction, then saves, deletes or leaves the code as fn
// answers. Checking a code and counting the try happen together, so two
// concurrent tries can neither both use one code nor lose a count.
func (db *DB) UpdateOTP(ctx context.Context, email string, fn func(o *OTP) OTPChange) error {
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		o, err := getOTP(tx, email)
		if err != nil {
			return err
		}
		switch fn(o) {
		case OTPSave:
			if o == nil {
				return nil
			}
			return putOTP(tx, email, o)
		case OTPDelete:
			return tx.Bucket(bucketOTP).Delete([]byte(email))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update one-time code: %w", err)
	}
	return nil
}

// SweepOTPs deletes every code that expired at or before now and returns
// how many it deleted.
func (db *DB) SweepOTPs(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		n = 0
		b := tx.Bucket(bucketOTP)
		var dead [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var o OTP
			// An undecodable record can never be used: sweep it too.
			if json.Unmarshal(v, &o) != nil || !now.Before(o.ExpiresAt) {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Deleting while a cursor walks the bucket can skip keys; delete after.
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep one-time codes: %w", err)
	}
	return n, nil
}

func getSession(tx *bbolt.Tx, id []byte) (*Session, error) {
	v := tx.Bucket(bucketSessions).Get(id)
	if v == nil {
		return nil, nil
	}
	var s Session
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	return &s, nil
}

func putSession(tx *bbolt.Tx, id []byte, s *Session) error {
	v, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	return tx.Bucket(bucketSessions).Put(id, v)
}

// CreateSession stores s under id (the SHA-256 of the session token).
func (db *DB) CreateSession(ctx context.Context, id []byte, s Session) error {
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
func (db *DB) FindSession(ctx context.Context, id []byte) (*Session, error) {
	var s *Session
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		s, err = getSession(tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	if s == nil {
		return nil, notFound("Session")
	}
	return s, nil
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

// SweepSessions deletes every session last seen at or before idleBefore or
// created at or before createdBefore, and returns how many it deleted.
func (db *DB) SweepSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error) {
	n := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		n = 0
		b := tx.Bucket(bucketSessions)
		var dead [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var s Session
			if json.Unmarshal(v, &s) != nil || !s.LastSeen.After(idleBefore) || !s.CreatedAt.After(createdBefore) {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep sessions: %w", err)
	}
	return n, nil
}
