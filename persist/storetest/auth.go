package storetest

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runAuth: one-time codes and sessions (persist.CodeStore,
// persist.SessionStore).
func runAuth(t *testing.T, open Opener) {
	t.Run("OTP", func(t *testing.T) { testOTP(t, open) })
	t.Run("UpdateOTPCountsEveryTry", func(t *testing.T) { testUpdateOTPCountsEveryTry(t, open) })
	t.Run("SweepOTPs", func(t *testing.T) { testSweepOTPs(t, open) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open) })
	t.Run("SweepSessions", func(t *testing.T) { testSweepSessions(t, open) })
	t.Run("Secret", func(t *testing.T) { testSecret(t, open) })
}

func testOTP(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)

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

// testUpdateOTPCountsEveryTry runs concurrent tries: none may be lost.
func testUpdateOTPCountsEveryTry(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

func testSweepOTPs(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

func testSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

func testSweepSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

// testSecret: the server secret is 32 bytes, not all zero, and the same on
// every call.
func testSecret(t *testing.T, open Opener) {
	db, _ := openWith(t, open, authT0)
	s := db.Secret()
	if len(s) != 32 || bytes.Equal(s, make([]byte, 32)) {
		t.Fatalf("Secret() = %x, want 32 random bytes", s)
	}
	if !bytes.Equal(db.Secret(), s) {
		t.Fatal("Secret() changed between calls")
	}
}
