package bolt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
)

var (
	bucketUsage     = []byte("usage")      // email 0x00 month ("2026-11") → uint64 credits used
	bucketEvents    = []byte("billing_ev") // provider event id → processed time (RFC 3339)
	bucketCustomers = []byte("customers")  // provider customer id → email
)

func init() {
	topBuckets = append(topBuckets, bucketUsage, bucketEvents, bucketCustomers)
}

func usageKey(email, month string) []byte {
	return []byte(email + "\x00" + month)
}

// SpendCredits adds credits to email's usage for month when the total
// stays within limit, in one transaction, so concurrent calls never pass the
// limit. It returns the usage after the charge and true, or, past the
// limit, the unchanged usage and false (nothing is charged then).
func (db *DB) SpendCredits(ctx context.Context, email, month string, credits, limit int) (used int, ok bool, err error) {
	err = db.batch(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketUsage)
		k := usageKey(email, month)
		used, ok = 0, false
		if v := b.Get(k); len(v) == 8 {
			used = int(binary.BigEndian.Uint64(v))
		}
		if used+credits > limit {
			return nil
		}
		used += credits
		ok = true
		return b.Put(k, binary.BigEndian.AppendUint64(nil, uint64(used)))
	})
	if err != nil {
		return 0, false, err
	}
	return used, ok, nil
}

// RefundCredits gives back credits charged for a call that never reached the
// model (it cannot go below zero).
func (db *DB) RefundCredits(ctx context.Context, email, month string, credits int) error {
	return db.batch(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketUsage)
		k := usageKey(email, month)
		used := 0
		if v := b.Get(k); len(v) == 8 {
			used = int(binary.BigEndian.Uint64(v))
		}
		used = max(used-credits, 0)
		return b.Put(k, binary.BigEndian.AppendUint64(nil, uint64(used)))
	})
}

// CreditsUsed returns email's usage for month.
func (db *DB) CreditsUsed(ctx context.Context, email, month string) (int, error) {
	used := 0
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketUsage).Get(usageKey(email, month)); len(v) == 8 {
			used = int(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	return used, err
}

// ApplyBillingEvent applies one provider event at most once: a repeated
// event id changes nothing and reports replayed. The user is found by e-mail
// (created on defaultPlan when new) or by a customer id seen before;
// ENOTFOUND when neither identifies anyone.
func (db *DB) ApplyBillingEvent(ctx context.Context, upd persist.BillingUpdate, defaultPlan string) (u *persist.User, replayed bool, err error) {
	err = db.update(ctx, func(tx *bbolt.Tx) error {
		ev := tx.Bucket(bucketEvents)
		if ev.Get([]byte(upd.EventID)) != nil {
			replayed = true
			return nil
		}
		email := upd.Email
		if email == "" && upd.CustomerID != "" {
			if v := tx.Bucket(bucketCustomers).Get([]byte(upd.CustomerID)); v != nil {
				email = string(v)
			}
		}
		if email == "" {
			return board.Errorf(board.ENOTFOUND, "No user is known for this customer.")
		}
		var gerr error
		if u, gerr = getUser(tx, email); board.ErrorCode(gerr) == board.ENOTFOUND {
			u = &persist.User{Email: email, Plan: defaultPlan, CreatedAt: db.now()}
		} else if gerr != nil {
			return gerr
		}
		if upd.CustomerID != "" {
			u.CustomerID = upd.CustomerID
			if err := tx.Bucket(bucketCustomers).Put([]byte(upd.CustomerID), []byte(email)); err != nil {
				return err
			}
		}
		if upd.Plan != nil {
			if p, ok := upd.Plan(u.Plan); ok {
				u.Plan = p
			}
		}
		if err := putUser(tx, u); err != nil {
			return err
		}
		stamp, _ := json.Marshal(db.now().Format(time.RFC3339))
		return ev.Put([]byte(upd.EventID), stamp)
	})
	return u, replayed, err
}
