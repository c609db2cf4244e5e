package storetest

import (
	"context"
	"errors"
	"testing"

	"corkboard/board"
	"corkboard/persist"
)

// runCancelled: a write whose context is already done fails with the
// context's error and writes nothing (a request the client gave up on, or
// a server shutting down, never half-applies).
func runCancelled(t *testing.T, open Opener) {
	bg := context.Background()
	db, _ := openWith(t, open, T0, "b1")
	ctx, cancel := context.WithCancel(bg)
	cancel()

	writes := []struct {
		name  string
		write func() error
		// absent checks, with a live context, that nothing was written.
		absent func() bool
	}{
		{"ClaimBoard", func() error { _, err := db.ClaimBoard(ctx, "b2", Owner); return err },
			func() bool { _, err := db.FindBoard(bg, "b2"); return board.ErrorCode(err) == board.ENOTFOUND }},
		{"ApplyPushes", func() error {
			_, err := db.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", "x")}}}}})
			return err
		}, func() bool { v, err := db.CurrentVersion(bg, "b1"); return err == nil && v == 0 }},
		{"AddInvite", func() error { _, _, err := db.AddInvite(ctx, "b1", "f@example.com"); return err },
			func() bool { b, err := db.FindBoard(bg, "b1"); return err == nil && len(b.InvitedEmails) == 0 }},
		{"EnsureUser", func() error { _, err := db.EnsureUser(ctx, "u@example.com", "free"); return err },
			func() bool {
				_, err := db.FindUser(bg, "u@example.com")
				return board.ErrorCode(err) == board.ENOTFOUND
			}},
		{"SpendCredits", func() error { _, _, err := db.SpendCredits(ctx, "u@example.com", "2026-11", 1, 10); return err },
			func() bool { n, err := db.CreditsUsed(bg, "u@example.com", "2026-11"); return err == nil && n == 0 }},
		{"ApplyBillingEvent", func() error {
			_, _, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt", Email: "u@example.com"}, "free")
			return err
		}, func() bool {
			_, err := db.FindUser(bg, "u@example.com")
			return board.ErrorCode(err) == board.ENOTFOUND
		}},
		{"PutOTP", func() error { return db.PutOTP(ctx, "u@example.com", persist.OTP{Hash: []byte("h"), ExpiresAt: T0}) },
			func() bool { _, err := db.FindOTP(bg, "u@example.com"); return board.ErrorCode(err) == board.ENOTFOUND }},
		{"CreateSession", func() error {
			return db.CreateSession(ctx, authSessionID("t"), persist.Session{Email: "u@example.com", CreatedAt: T0, LastSeen: T0})
		}, func() bool {
			_, err := db.FindSession(bg, authSessionID("t"))
			return board.ErrorCode(err) == board.ENOTFOUND
		}},
		{"AppendLog", func() error {
			_, err := db.AppendLog(ctx, "b1", []persist.NewLogEntry{{NoteID: "a", Action: "create_note"}}, nil)
			return err
		}, func() bool {
			es, err := db.ListLog(bg, "b1", persist.LogQuery{Limit: 10})
			return err == nil && len(es) == 0
		}},
		{"PutSnapshot", func() error {
			_, _, err := db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte("x")}, 0)
			return err
		}, func() bool { l, err := db.ListSnapshots(bg, "b1"); return err == nil && len(l) == 0 }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := w.write(); !errors.Is(err, context.Canceled) {
				t.Fatalf("err=%v, want context.Canceled", err)
			}
			if !w.absent() {
				t.Fatal("a write with a cancelled context left something behind")
			}
		})
	}
	t.Run("Reads", func(t *testing.T) {
		if _, err := db.FindBoard(ctx, "b1"); !errors.Is(err, context.Canceled) {
			t.Fatalf("FindBoard err=%v, want context.Canceled", err)
		}
		if _, err := db.ChangesSince(ctx, "b1", 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("ChangesSince err=%v, want context.Canceled", err)
		}
	})
}
