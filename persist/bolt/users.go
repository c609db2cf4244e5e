package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
)

func getUser(tx *bbolt.Tx, email string) (*persist.User, error) {
	v := tx.Bucket(bucketUsers).Get([]byte(email))
	if v == nil {
		return nil, notFound("User")
	}
	var u persist.User
	if err := json.Unmarshal(v, &u); err != nil {
		return nil, fmt.Errorf("decode user: %w", err)
	}
	return &u, nil
}

func putUser(tx *bbolt.Tx, u *persist.User) error {
	v, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("encode user: %w", err)
	}
	return tx.Bucket(bucketUsers).Put([]byte(u.Email), v)
}

// FindUser returns the user with that (normalised) e-mail. ENOTFOUND when
// the address has never logged in.
func (db *DB) FindUser(ctx context.Context, email string) (*persist.User, error) {
	var u *persist.User
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		u, err = getUser(tx, email)
		return err
	})
	return u, err
}

// UserPlan returns the stored plan name of the user with that e-mail, or
// ENOTFOUND when there is no such user.
func (db *DB) UserPlan(ctx context.Context, email string) (string, error) {
	u, err := db.FindUser(ctx, email)
	if err != nil {
		return "", err
	}
	return u.Plan, nil
}

// EnsureUser returns the user with that e-mail, creating it on plan when it
// does not exist yet.
func (db *DB) EnsureUser(ctx context.Context, email, plan string) (*persist.User, error) {
	var u *persist.User
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if u, err = getUser(tx, email); board.ErrorCode(err) != board.ENOTFOUND {
			// Found, or a record that cannot be read: never replace a user
			// (and the plan they paid for) with a fresh one.
			return err
		}
		u = &persist.User{Email: email, Plan: plan, CreatedAt: db.now()}
		return putUser(tx, u)
	})
	return u, err
}

// UpdateUser applies fn to the user with that e-mail in one transaction,
// creating the user (with Plan set to defaultPlan) first when it does not
// exist, and returns the stored result.
func (db *DB) UpdateUser(ctx context.Context, email, defaultPlan string, fn func(u *persist.User) error) (*persist.User, error) {
	var u *persist.User
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if u, err = getUser(tx, email); board.ErrorCode(err) == board.ENOTFOUND {
			u = &persist.User{Email: email, Plan: defaultPlan, CreatedAt: db.now()}
		} else if err != nil {
			return err
		}
		if err := fn(u); err != nil {
			return err
		}
		return putUser(tx, u)
	})
	return u, err
}
