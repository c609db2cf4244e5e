package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/persist"
)

// SweepStore is a store that sweeps expired sessions and codes in two
// passes, as bbolt and PostgreSQL do: pages of expired records are read
// first, then deleted with a re-check of each, so that a record used or
// replaced between the passes stays. RunSweeps checks those passes.
type SweepStore interface {
	persist.Store
	// ExpiredSessions lists up to limit (0: all) expired session keys after
	// the key after, in key order, and the key to go on from (nil at the end).
	ExpiredSessions(ctx context.Context, idleBefore, createdBefore time.Time, after []byte, limit int) (ids [][]byte, next []byte, err error)
	// DeleteExpiredSessions deletes those of ids still expired; it returns
	// how many it deleted.
	DeleteExpiredSessions(ctx context.Context, ids [][]byte, idleBefore, createdBefore time.Time) (int, error)
	// ExpiredOTPs is ExpiredSessions for one-time codes.
	ExpiredOTPs(ctx context.Context, now time.Time, after string, limit int) (emails []string, next string, err error)
	// DeleteExpiredOTPs is DeleteExpiredSessions for one-time codes.
	DeleteExpiredOTPs(ctx context.Context, emails []string, now time.Time) (int, error)
}

// RunSweeps checks a SweepStore's two passes; batch is how many records
// the store's sweep reads per pass (its SweepBatch), so that a sweep over
// more than two batches is tested. open returns a fresh store, closed when
// the test ends.
func RunSweeps(t *testing.T, open func(t *testing.T) SweepStore, batch int) {
	t.Run("SweepSessionsManyBatches", func(t *testing.T) { testSweepSessionsManyBatches(t, open, batch) })
	t.Run("ExpiredSessionsPages", func(t *testing.T) { testExpiredSessionsPages(t, open) })
	t.Run("DeleteExpiredSessionsRechecks", func(t *testing.T) { testDeleteExpiredSessionsRechecks(t, open) })
	t.Run("DeleteExpiredOTPsRechecks", func(t *testing.T) { testDeleteExpiredOTPsRechecks(t, open) })
}

// testSweepSessionsManyBatches: a sweep over more than two batches removes
// exactly the expired sessions, however they interleave in key order.
func testSweepSessionsManyBatches(t *testing.T, open func(t *testing.T) SweepStore, batch int) {
	ctx := context.Background()
	db := open(t)
	idleBefore := authT0.Add(-15 * 24 * time.Hour)
	createdBefore := authT0.Add(-90 * 24 * time.Hour)
	total := 2*batch + 101
	live := func(i int) bool { return i%3 == 0 }
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < total; i += 8 {
				s := persist.Session{Email: "a@example.com", CreatedAt: authT0.Add(-time.Hour), LastSeen: idleBefore}
				if live(i) {
					s.LastSeen = authT0
				}
				if err := db.CreateSession(ctx, authSessionID(fmt.Sprint("s", i)), s); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	n, err := db.SweepSessions(ctx, idleBefore, createdBefore)
	if err != nil {
		t.Fatal(err)
	}
	wantDead := 0
	for i := range total {
		if !live(i) {
			wantDead++
		}
	}
	if n != wantDead {
		t.Fatalf("SweepSessions=%d, want %d", n, wantDead)
	}
	for i := range total {
		_, err := db.FindSession(ctx, authSessionID(fmt.Sprint("s", i)))
		if gotLive := err == nil; gotLive != live(i) {
			t.Fatalf("session %d live=%v, want %v (err=%v)", i, gotLive, live(i), err)
		}
	}
}

// testExpiredSessionsPages: read passes page through the bucket in key
// order, at most limit records at a time, and together list exactly the
// expired sessions once — also when each page is deleted before the next
// is read, as a sweep does.
func testExpiredSessionsPages(t *testing.T, open func(t *testing.T) SweepStore) {
	idleBefore := authT0.Add(-15 * 24 * time.Hour)
	createdBefore := authT0.Add(-90 * 24 * time.Hour)
	const total, limit = 10, 3
	expired := func(i int) bool { return i%4 != 0 } // 7 of 10
	for _, deleteBetween := range []bool{false, true} {
		t.Run(fmt.Sprintf("DeleteBetween=%v", deleteBetween), func(t *testing.T) {
			ctx := context.Background()
			db := open(t)
			want := map[string]bool{}
			for i := range total {
				id := authSessionID(fmt.Sprint("p", i))
				s := persist.Session{Email: "a@example.com", CreatedAt: authT0, LastSeen: authT0}
				if expired(i) {
					s.LastSeen = idleBefore
					want[string(id)] = true
				}
				if err := db.CreateSession(ctx, id, s); err != nil {
					t.Fatal(err)
				}
			}
			got := map[string]bool{}
			var after []byte
			pages := 0
			for {
				ids, next, err := db.ExpiredSessions(ctx, idleBefore, createdBefore, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if len(ids) > limit {
					t.Fatalf("page %d lists %d ids, limit %d", pages, len(ids), limit)
				}
				for _, id := range ids {
					if got[string(id)] {
						t.Fatalf("id %x listed twice", id)
					}
					got[string(id)] = true
				}
				if deleteBetween {
					if _, err := db.DeleteExpiredSessions(ctx, ids, idleBefore, createdBefore); err != nil {
						t.Fatal(err)
					}
				}
				if next == nil {
					break
				}
				after = next
			}
			if pages != (total+limit-1)/limit {
				t.Errorf("%d pages, want %d", pages, (total+limit-1)/limit)
			}
			if len(got) != len(want) {
				t.Fatalf("listed %d expired sessions, want %d", len(got), len(want))
			}
			for id := range want {
				if !got[id] {
					t.Fatalf("expired session %x not listed", id)
				}
			}
		})
	}
}

// testDeleteExpiredSessionsRechecks: what happens to a session between the
// read pass and the delete decides its fate, not what the read pass saw.
func testDeleteExpiredSessionsRechecks(t *testing.T, open func(t *testing.T) SweepStore) {
	ctx := context.Background()
	db := open(t)
	idleBefore := authT0.Add(-15 * 24 * time.Hour)
	createdBefore := authT0.Add(-90 * 24 * time.Hour)
	tests := []struct {
		name     string
		sess     persist.Session
		between  func(id []byte) error
		wantLive bool
	}{
		{"Idle", persist.Session{CreatedAt: authT0.Add(-20 * 24 * time.Hour), LastSeen: idleBefore}, nil, false},
		{"UsedMeanwhile", persist.Session{CreatedAt: authT0.Add(-20 * 24 * time.Hour), LastSeen: idleBefore},
			func(id []byte) error { return db.TouchSession(ctx, id, authT0) }, true},
		{"LoggedOutMeanwhile", persist.Session{CreatedAt: authT0.Add(-20 * 24 * time.Hour), LastSeen: idleBefore},
			func(id []byte) error { return db.DeleteSession(ctx, id) }, false},
		// Use does not lift the absolute cap.
		{"CappedUsedMeanwhile", persist.Session{CreatedAt: createdBefore, LastSeen: authT0.Add(-time.Hour)},
			func(id []byte) error { return db.TouchSession(ctx, id, authT0) }, false},
		{"Live", persist.Session{CreatedAt: authT0.Add(-time.Hour), LastSeen: authT0}, nil, true},
	}
	for _, tt := range tests {
		tt.sess.Email = "a@example.com"
		if err := db.CreateSession(ctx, authSessionID(tt.name), tt.sess); err != nil {
			t.Fatal(err)
		}
	}
	ids, next, err := db.ExpiredSessions(ctx, idleBefore, createdBefore, nil, 0)
	if err != nil || next != nil {
		t.Fatalf("ExpiredSessions: next=%x err=%v, want one whole pass", next, err)
	}
	if got, want := len(ids), 4; got != want {
		t.Fatalf("read pass listed %d sessions, want %d", got, want)
	}
	for _, tt := range tests {
		if tt.between != nil {
			if err := tt.between(authSessionID(tt.name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := db.DeleteExpiredSessions(ctx, ids, idleBefore, createdBefore)
	if err != nil {
		t.Fatal(err)
	}
	// Idle and CappedUsedMeanwhile; the logged-out one was already gone.
	if got, want := n, 2; got != want {
		t.Fatalf("DeleteExpiredSessions=%d, want %d", got, want)
	}
	for _, tt := range tests {
		_, err := db.FindSession(ctx, authSessionID(tt.name))
		if gotLive := err == nil; gotLive != tt.wantLive {
			t.Errorf("%s live=%v, want %v (err=%v)", tt.name, gotLive, tt.wantLive, err)
		}
	}
}

// testDeleteExpiredOTPsRechecks: a code sent again between the read pass
// and the delete is the new code, and it stays.
func testDeleteExpiredOTPsRechecks(t *testing.T, open func(t *testing.T) SweepStore) {
	ctx := context.Background()
	db := open(t)
	stale := persist.OTP{Hash: []byte("old"), ExpiresAt: authT0.Add(-time.Minute)}
	for _, email := range []string{"stale@example.com", "resent@example.com", "used@example.com"} {
		if err := db.PutOTP(ctx, email, stale); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutOTP(ctx, "pending@example.com", persist.OTP{Hash: []byte("p"), ExpiresAt: authT0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	emails, next, err := db.ExpiredOTPs(ctx, authT0, "", 0)
	if err != nil || next != "" {
		t.Fatalf("ExpiredOTPs: next=%q err=%v, want one whole pass", next, err)
	}
	if got, want := strings.Join(emails, ","), "resent@example.com,stale@example.com,used@example.com"; got != want {
		t.Fatalf("read pass listed %s, want %s", got, want)
	}
	fresh := persist.OTP{Hash: []byte("new"), ExpiresAt: authT0.Add(10 * time.Minute)}
	if err := db.PutOTP(ctx, "resent@example.com", fresh); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateOTP(ctx, "used@example.com", func(*persist.OTP) persist.OTPChange { return persist.OTPDelete }); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteExpiredOTPs(ctx, emails, authT0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 1; got != want {
		t.Fatalf("DeleteExpiredOTPs=%d, want %d (only the stale code)", got, want)
	}
	o, err := db.FindOTP(ctx, "resent@example.com")
	if err != nil || !bytes.Equal(o.Hash, fresh.Hash) {
		t.Fatalf("the code sent between the passes: %+v, %v; want it kept", o, err)
	}
	for email, wantLive := range map[string]bool{"stale@example.com": false, "used@example.com": false, "pending@example.com": true} {
		if _, err := db.FindOTP(ctx, email); (err == nil) != wantLive {
			t.Errorf("%s live=%v, want %v", email, err == nil, wantLive)
		}
	}
}
