package postgres_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
)

var authT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func authSessionID(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// TestAuthSurvivesReopen: codes and sessions are on disk, not in memory.
func TestAuthSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutOTP(ctx, "a@example.com", persist.OTP{Hash: []byte("h"), ExpiresAt: authT0, Attempts: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(ctx, authSessionID("t"), persist.Session{Email: "a@example.com", CreatedAt: authT0, LastSeen: authT0}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o, err := db.FindOTP(ctx, "a@example.com")
	if err != nil || o.Attempts != 2 {
		t.Fatalf("FindOTP after reopen=%+v, %v; want 2 attempts", o, err)
	}
	if s, err := db.FindSession(ctx, authSessionID("t")); err != nil || s.Email != "a@example.com" {
		t.Fatalf("FindSession after reopen=%+v, %v", s, err)
	}
}

// TestSweepSessionsManyBatches: a sweep over more than two batches removes
// exactly the expired sessions, however they interleave in key order.
func TestSweepSessionsManyBatches(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	idleBefore := authT0.Add(-15 * 24 * time.Hour)
	createdBefore := authT0.Add(-90 * 24 * time.Hour)
	const total = 2*postgres.SweepBatch + 101
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

// TestExpiredSessionsPages: read passes page through the bucket in key
// order, at most limit records at a time, and together list exactly the
// expired sessions once — also when each page is deleted before the next
// is read, as a sweep does.
func TestExpiredSessionsPages(t *testing.T) {
	idleBefore := authT0.Add(-15 * 24 * time.Hour)
	createdBefore := authT0.Add(-90 * 24 * time.Hour)
	const total, limit = 10, 3
	expired := func(i int) bool { return i%4 != 0 } // 7 of 10
	for _, deleteBetween := range []bool{false, true} {
		t.Run(fmt.Sprintf("DeleteBetween=%v", deleteBetween), func(t *testing.T) {
			ctx := context.Background()
			db, _ := openDB(t)
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

// TestDeleteExpiredSessionsRechecks: what happens to a session between the
// read pass and the delete decides its fate, not what the read pass saw.
func TestDeleteExpiredSessionsRechecks(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
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

// TestDeleteExpiredOTPsRechecks: a code sent again between the read pass
// and the delete is the new code, and it stays.
func TestDeleteExpiredOTPsRechecks(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
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
