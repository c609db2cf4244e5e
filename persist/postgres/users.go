package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"corkboard/board"
	"corkboard/persist"
)

func getUser(ctx context.Context, q querier, email string, lock bool) (*persist.User, error) {
	var u persist.User
	var created int64
	found, err := scanByEmail(ctx, q, "SELECT email, plan, created_ns, customer_id FROM users WHERE email = $1", email, lock,
		&u.Email, &u.Plan, &created, &u.CustomerID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, notFound("User")
	}
	u.CreatedAt = fromNanos(created)
	return &u, nil
}

func putUser(ctx context.Context, q querier, u *persist.User) error {
	_, err := q.Exec(ctx, `INSERT INTO users (email, plan, created_ns, customer_id) VALUES ($1, $2, $3, $4)
		ON CONFLICT (email) DO UPDATE SET plan = excluded.plan, customer_id = excluded.customer_id`,
		u.Email, u.Plan, nanos(u.CreatedAt), u.CustomerID)
	return err
}

// FindUser returns the user with that (normalised) e-mail. ENOTFOUND when
// the address has never logged in.
func (s *Store) FindUser(ctx context.Context, email string) (*persist.User, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	u, err := getUser(ctx, s.pool, email, false)
	return u, wrap(err, "find user")
}

// UserPlan returns the stored plan name of the user with that e-mail, or
// ENOTFOUND when there is no such user.
func (s *Store) UserPlan(ctx context.Context, email string) (string, error) {
	u, err := s.FindUser(ctx, email)
	if err != nil {
		return "", err
	}
	return u.Plan, nil
}

// EnsureUser returns the user with that e-mail, creating it on plan when it
// does not exist yet.
func (s *Store) EnsureUser(ctx context.Context, email, plan string) (*persist.User, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var u *persist.User
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		// Never replace a user (and the plan they paid for): a concurrent
		// first login inserts nothing here and reads the winner's row.
		if _, err := tx.Exec(ctx, `INSERT INTO users (email, plan, created_ns) VALUES ($1, $2, $3)
			ON CONFLICT (email) DO NOTHING`, email, plan, nanos(s.now())); err != nil {
			return err
		}
		var err error
		u, err = getUser(ctx, tx, email, false)
		return err
	})
	if err != nil {
		return nil, wrap(err, "ensure user")
	}
	return u, nil
}

// UpdateUser applies fn to the user with that e-mail in one transaction,
// creating the user (with Plan set to defaultPlan) first when it does not
// exist, and returns the stored result. fn runs once.
func (s *Store) UpdateUser(ctx context.Context, email, defaultPlan string, fn func(u *persist.User) error) (*persist.User, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var u *persist.User
	err := s.inTx(ctx, readWrite, false, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO users (email, plan, created_ns) VALUES ($1, $2, $3)
			ON CONFLICT (email) DO NOTHING`, email, defaultPlan, nanos(s.now())); err != nil {
			return err
		}
		var err error
		if u, err = getUser(ctx, tx, email, true); err != nil {
			return err
		}
		if err := fn(u); err != nil {
			return err
		}
		return putUser(ctx, tx, u)
	})
	if err != nil {
		return nil, wrap(err, "update user")
	}
	return u, nil
}

// SpendCredits adds credits to email's usage for month when the total
// stays within limit, in one statement, so concurrent calls (from any node)
// never pass the limit. It returns the usage after the charge and true, or,
// past the limit, the unchanged usage and false.
func (s *Store) SpendCredits(ctx context.Context, email, month string, credits, limit int) (used int, ok bool, err error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	err = s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		used, ok = 0, false
		// The upsert takes the row lock, and its WHERE sees the locked
		// value: a charge that would pass the limit writes nothing.
		var u int64
		err := tx.QueryRow(ctx, `INSERT INTO usage (email, month, used) SELECT $1::text, $2::text, $3::bigint WHERE $3::bigint <= $4::bigint
			ON CONFLICT (email, month) DO UPDATE SET used = usage.used + excluded.used
			WHERE usage.used + excluded.used <= $4::bigint
			RETURNING used`, email, month, int64(credits), int64(limit)).Scan(&u)
		if err == nil {
			used, ok = int(u), true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		err = tx.QueryRow(ctx, "SELECT used FROM usage WHERE email = $1 AND month = $2", email, month).Scan(&used)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, false, wrap(err, "spend credits")
	}
	return used, ok, nil
}

// RefundCredits gives back credits charged for a call that never reached the
// model (it cannot go below zero).
func (s *Store) RefundCredits(ctx context.Context, email, month string, credits int) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO usage (email, month, used) VALUES ($1, $2, 0)
		ON CONFLICT (email, month) DO UPDATE SET used = GREATEST(usage.used - $3, 0)`, email, month, credits)
	return wrap(err, "refund credits")
}

// CreditsUsed returns email's usage for month.
func (s *Store) CreditsUsed(ctx context.Context, email, month string) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var used int
	err := s.pool.QueryRow(ctx, "SELECT used FROM usage WHERE email = $1 AND month = $2", email, month).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return used, wrap(err, "read credits used")
}

// ApplyBillingEvent applies one provider event at most once: the event id is
// recorded in the same transaction as its effect, so a repeated event (on
// any node) changes nothing and reports replayed. See
// persist.BillingStore.ApplyBillingEvent.
func (s *Store) ApplyBillingEvent(ctx context.Context, upd persist.BillingUpdate, defaultPlan string) (u *persist.User, replayed bool, err error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	// Not retried: upd.Plan is the caller's and runs once.
	err = s.inTx(ctx, readWrite, false, func(tx pgx.Tx) error {
		// Claim the event id first: a concurrent delivery of the same
		// event waits on this row and then finds it taken.
		tag, err := tx.Exec(ctx, "INSERT INTO billing_events (event_id, processed_at) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING",
			upd.EventID, s.now())
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			replayed = true
			return nil
		}
		email := upd.Email
		if email == "" && upd.CustomerID != "" {
			err := tx.QueryRow(ctx, "SELECT email FROM customers WHERE customer_id = $1", upd.CustomerID).Scan(&email)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if email == "" {
			return board.Errorf(board.ENOTFOUND, "No user is known for this customer.")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO users (email, plan, created_ns) VALUES ($1, $2, $3)
			ON CONFLICT (email) DO NOTHING`, email, defaultPlan, nanos(s.now())); err != nil {
			return err
		}
		if u, err = getUser(ctx, tx, email, true); err != nil {
			return err
		}
		if upd.CustomerID != "" {
			u.CustomerID = upd.CustomerID
			if _, err := tx.Exec(ctx, `INSERT INTO customers (customer_id, email) VALUES ($1, $2)
				ON CONFLICT (customer_id) DO UPDATE SET email = excluded.email`, upd.CustomerID, email); err != nil {
				return err
			}
		}
		if upd.Plan != nil {
			if p, ok := upd.Plan(u.Plan); ok {
				u.Plan = p
			}
		}
		return putUser(ctx, tx, u)
	})
	if err != nil {
		return nil, false, wrap(err, "apply billing event %s", upd.EventID)
	}
	return u, replayed, nil
}
