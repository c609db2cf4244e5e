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

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
)

var authT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func authSessionID(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

func TestOTP(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)

	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := db.FindOTP(ctx, "nobody@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("FindOTP err=%v, want ENOTFOUND", err)
		}
	})

	t.Run("PutReplaces", func(t *testing.T) {
		first := persist.OTP{Hash: []byte("first"), ExpiresAt: authT0}
		second := persist.OTP{Hash: []byte("second"), ExpiresAt: authT0.Add(time.Minute)}
		if err := db.PutOTP(ctx, "a@example.com", first); err != nil {
			t.Fatal(err)
		}
		if err := db.PutOTP(ctx, "a@example.com", second); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindOTP(ctx, "a@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Hash, second.Hash) || !got.ExpiresAt.Equal(second.ExpiresAt) || got.Attempts != 0 {
			t.Fatalf("FindOTP=%+v, want %+v", got, second)
		}
	})

	tests := []struct {
		name    string
		change  persist.OTPChange
		wantErr string // FindOTP's code afterwards, "" for found
		wantAtt int
	}{
		{"Save", persist.OTPSave, "", 1},
		{"Unchanged", persist.OTPUnchanged, "", 0},
		{"Delete", persist.OTPDelete, board.ENOTFOUND, 0},
	}
	for _, tt := range tests {
		t.Run("Update"+tt.name, func(t *testing.T) {
			email := "update-" + tt.name + "@example.com"
			if err := db.PutOTP(ctx, email, persist.OTP{Hash: []byte("h"), ExpiresAt: authT0}); err != nil {
				t.Fatal(err)
			}
			err := db.UpdateOTP(ctx, email, func(o *persist.OTP) persist.OTPChange {
				if o == nil {
					t.Fatal("UpdateOTP passed nil for a stored code")
				}
				o.Attempts++
				return tt.change
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.FindOTP(ctx, email)
			if code := board.ErrorCode(err); code != tt.wantErr {
				t.Fatalf("FindOTP err=%v, want code %q", err, tt.wantErr)
			}
			if err == nil && got.Attempts != tt.wantAtt {
				t.Fatalf("Attempts=%d, want %d", got.Attempts, tt.wantAtt)
			}
		})
	}

	t.Run("UpdateMissing", func(t *testing.T) {
		called := false
		err := db.UpdateOTP(ctx, "missing@example.com", func(o *persist.OTP) persist.OTPChange {
			called = true
			if o != nil {
				t.Fatalf("UpdateOTP passed %+v for a missing code", o)
			}
			return persist.OTPSave // nothing to save: must not create a record
		})
		if err != nil || !called {
			t.Fatalf("UpdateOTP err=%v called=%v", err, called)
		}
		if _, err := db.FindOTP(ctx, "missing@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("FindOTP err=%v, want ENOTFOUND", err)
		}
	})
}

// TestUpdateOTPCountsEveryTry runs concurrent tries: none may be lost.
func TestUpdateOTPCountsEveryTry(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	const email, tries = "race@example.com", 40
	if err := db.PutOTP(ctx, email, persist.OTP{Hash: []byte("h"), ExpiresAt: authT0}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range tries {
		wg.Go(func() {
			err := db.UpdateOTP(ctx, email, func(o *persist.OTP) persist.OTPChange {
				o.Attempts++
				return persist.OTPSave
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := db.FindOTP(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	if got.Attempts != tries {
		t.Fatalf("Attempts=%d, want %d", got.Attempts, tries)
	}
}

func TestSweepOTPs(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	codes := map[string]time.Time{
		"past@example.com":   authT0.Add(-time.Second),
		"now@example.com":    authT0,
		"future@example.com": authT0.Add(time.Second),
	}
	for email, exp := range codes {
		if err := db.PutOTP(ctx, email, persist.OTP{Hash: []byte(email), ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.SweepOTPs(ctx, authT0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 2; got != want {
		t.Fatalf("SweepOTPs=%d, want %d", got, want)
	}
	for email := range codes {
		_, err := db.FindOTP(ctx, email)
		if gotLive, wantLive := err == nil, email == "future@example.com"; gotLive != wantLive {
			t.Errorf("%s live=%v, want %v (err=%v)", email, gotLive, wantLive, err)
		}
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	id := authSessionID("token-1")
	want := persist.Session{Email: "a@example.com", CreatedAt: authT0, LastSeen: authT0}

	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := db.FindSession(ctx, authSessionID("nope")); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("FindSession err=%v, want ENOTFOUND", err)
		}
	})

	t.Run("CreateFind", func(t *testing.T) {
		if err := db.CreateSession(ctx, id, want); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Email != want.Email || !got.CreatedAt.Equal(want.CreatedAt) || !got.LastSeen.Equal(want.LastSeen) {
			t.Fatalf("FindSession=%+v, want %+v", got, want)
		}
	})

	touches := []struct {
		name string
		at   time.Time
		want time.Time
	}{
		{"Forward", authT0.Add(2 * time.Hour), authT0.Add(2 * time.Hour)},
		{"NeverBack", authT0.Add(time.Hour), authT0.Add(2 * time.Hour)},
	}
	for _, tt := range touches {
		t.Run("Touch"+tt.name, func(t *testing.T) {
			if err := db.TouchSession(ctx, id, tt.at); err != nil {
				t.Fatal(err)
			}
			got, err := db.FindSession(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !got.LastSeen.Equal(tt.want) {
				t.Fatalf("LastSeen=%v, want %v", got.LastSeen, tt.want)
			}
			if !got.CreatedAt.Equal(authT0) {
				t.Fatalf("CreatedAt=%v changed by a touch", got.CreatedAt)
			}
		})
	}

	t.Run("DeleteThenTouchStaysDeleted", func(t *testing.T) {
		if err := db.DeleteSession(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteSession(ctx, id); err != nil {
			t.Fatalf("second DeleteSession: %v", err)
		}
		if err := db.TouchSession(ctx, id, authT0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindSession(ctx, id); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("FindSession after delete+touch err=%v, want ENOTFOUND", err)
		}
	})
}

func TestSweepSessions(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	idleBefore := authT0.Add(-15 * 24 * time.Hour)
	createdBefore := authT0.Add(-90 * 24 * time.Hour)
	sessions := map[string]persist.Session{
		"live":       {Email: "a@example.com", CreatedAt: authT0.Add(-time.Hour), LastSeen: authT0},
		"idle":       {Email: "a@example.com", CreatedAt: idleBefore.Add(-time.Hour), LastSeen: idleBefore},
		"capped":     {Email: "a@example.com", CreatedAt: createdBefore, LastSeen: authT0},
		"oldButLive": {Email: "a@example.com", CreatedAt: createdBefore.Add(time.Second), LastSeen: idleBefore.Add(time.Second)},
	}
	for name, s := range sessions {
		if err := db.CreateSession(ctx, authSessionID(name), s); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.SweepSessions(ctx, idleBefore, createdBefore)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 2; got != want {
		t.Fatalf("SweepSessions=%d, want %d", got, want)
	}
	for name := range sessions {
		_, err := db.FindSession(ctx, authSessionID(name))
		if gotLive, wantLive := err == nil, name == "live" || name == "oldButLive"; gotLive != wantLive {
			t.Errorf("%s live=%v, want %v (err=%v)", name, gotLive, wantLive, err)
		}
	}
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
