package auth_test

import (
	"context"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/board"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestWatchSession(t *testing.T) {
	ctx := context.Background()
	const day = 24 * time.Hour
	tests := []struct {
		name string
		// end ends (or not) the session behind token.
		end   func(e *codeEnv, token string)
		ended bool
	}{
		{"Logout", func(e *codeEnv, token string) { _ = e.svc.Logout(ctx, token) }, true},
		{"ExpiredWhenPresented", func(e *codeEnv, token string) {
			e.clock.Advance(15 * day)
			_, _ = e.svc.Authenticate(ctx, token)
		}, true},
		{"ExpiredIdleSweep", func(e *codeEnv, _ string) {
			e.clock.Advance(15 * day)
			_ = e.svc.Sweep(ctx)
		}, true},
		{"LiveSweep", func(e *codeEnv, _ string) {
			e.clock.Advance(15*day - time.Second)
			_ = e.svc.Sweep(ctx)
		}, false},
		{"OtherSessionLogout", func(e *codeEnv, _ string) {
			l, err := e.svc.Verify(ctx, "ada@example.com", e.send(e.tb, "ada@example.com", ip1), ip1)
			if err != nil {
				e.tb.Fatal(err)
			}
			_ = e.svc.Logout(ctx, l.Token)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCodeEnv(t, auth.Config{})
			e.tb = t
			l, err := e.svc.Verify(ctx, "ada@example.com", e.send(t, "ada@example.com", ip1), ip1)
			if err != nil {
				t.Fatal(err)
			}
			w1, err := e.svc.WatchSession(ctx, l.Token)
			if err != nil {
				t.Fatal(err)
			}
			w2, err := e.svc.WatchSession(ctx, l.Token)
			if err != nil {
				t.Fatal(err)
			}
			tt.end(e, l.Token)
			for i, w := range []*auth.SessionWatch{w1, w2} {
				if got := isClosed(w.Ended()); got != tt.ended {
					t.Fatalf("watch %d ended=%v, want %v", i+1, got, tt.ended)
				}
			}
			w1.Stop()
			w2.Stop()
			w2.Stop()
			if got := e.svc.Watched(); got != 0 {
				t.Fatalf("%d sessions watched after Stop, want 0", got)
			}
		})
	}
	t.Run("ErrNotLive", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		l, err := e.svc.Verify(ctx, "ada@example.com", e.send(t, "ada@example.com", ip1), ip1)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Logout(ctx, l.Token); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{l.Token, "garbage"} {
			if _, err := e.svc.WatchSession(ctx, tok); board.ErrorCode(err) != board.EUNAUTHORIZED {
				t.Fatalf("WatchSession(%q): err=%v, want EUNAUTHORIZED", tok, err)
			}
		}
		if got := e.svc.Watched(); got != 0 {
			t.Fatalf("%d sessions watched after refusals, want 0", got)
		}
	})
}
