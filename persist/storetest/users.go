package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runUsers: accounts and plans (persist.UserStore).
func runUsers(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"EnsureUser", testEnsureUser},
		{"UpdateUser", testUpdateUser},
		{"UpdateUserConcurrent", testUpdateUserConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
}

// testEnsureUser: a login creates the user once; later ones keep its plan
// and creation time.
func testEnsureUser(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	if _, err := e.s.FindUser(ctx, "a@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindUser before any login: err=%v, want not_found", err)
	}
	if _, err := e.s.UserPlan(ctx, "a@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("UserPlan before any login: err=%v, want not_found", err)
	}
	u, err := e.s.EnsureUser(ctx, "a@example.com", "free")
	if err != nil || u.Email != "a@example.com" || u.Plan != "free" || !u.CreatedAt.Equal(T0) {
		t.Fatalf("EnsureUser = %+v, %v; want a new free user created at the store's clock", u, err)
	}
	e.clock.Advance(time.Hour)
	// An existing user keeps its plan and creation time.
	u, err = e.s.EnsureUser(ctx, "a@example.com", "pro")
	if err != nil || u.Plan != "free" || !u.CreatedAt.Equal(T0) {
		t.Fatalf("second EnsureUser = %+v, %v; want the user as it was", u, err)
	}
	if p, err := e.s.UserPlan(ctx, "a@example.com"); err != nil || p != "free" {
		t.Fatalf("UserPlan = %q, %v; want free", p, err)
	}
	if u, err := e.s.FindUser(ctx, "a@example.com"); err != nil || u.Plan != "free" || u.CustomerID != "" {
		t.Fatalf("FindUser = %+v, %v", u, err)
	}
}

// testUpdateUser: UpdateUser creates a missing user, and a failing fn
// writes nothing.
func testUpdateUser(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	u, err := e.s.UpdateUser(ctx, "b@example.com", "free", func(u *persist.User) error {
		if u.Plan != "free" || u.Email != "b@example.com" {
			return fmt.Errorf("new user handed over as %+v", u)
		}
		u.Plan = "pro"
		return nil
	})
	if err != nil || u.Plan != "pro" {
		t.Fatalf("UpdateUser on a new user = %+v, %v; want created and moved to pro", u, err)
	}
	if p, _ := e.s.UserPlan(ctx, "b@example.com"); p != "pro" {
		t.Fatalf("stored plan %q, want pro", p)
	}
	// A failing fn writes nothing, and its error comes back.
	refused := errors.New("refused")
	_, err = e.s.UpdateUser(ctx, "b@example.com", "free", func(u *persist.User) error {
		u.Plan = "team"
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("UpdateUser with a failing fn: err=%v, want fn's error", err)
	}
	if p, _ := e.s.UserPlan(ctx, "b@example.com"); p != "pro" {
		t.Fatalf("plan after a failed update %q, want pro", p)
	}
	_, err = e.s.UpdateUser(ctx, "c@example.com", "free", func(*persist.User) error { return refused })
	if !errors.Is(err, refused) {
		t.Fatalf("UpdateUser of a new user with a failing fn: err=%v", err)
	}
	if _, err := e.s.FindUser(ctx, "c@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("a failed update created the user: err=%v, want not_found", err)
	}
}

// testUpdateUserConcurrent: concurrent updates of one user are serialised:
// none is lost.
func testUpdateUserConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	e := newEnv(t, open)
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := e.s.UpdateUser(ctx, "d@example.com", "", func(u *persist.User) error {
				u.Plan += "x"
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p, _ := e.s.UserPlan(ctx, "d@example.com"); len(p) != n {
		t.Fatalf("plan %q after %d appends, want %d x's", p, n, n)
	}
}
