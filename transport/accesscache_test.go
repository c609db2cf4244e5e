package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/persist"
)

// longTTL outlives every test: with it, an answer that changes after a
// write can only have changed because the write invalidated the cache.
const longTTL = 24 * time.Hour

// pullStatus is the status of a no-change pull of board id.
func (e *env) pullStatus(session, id string) int {
	e.tb.Helper()
	return e.do("GET", "/api/boards/"+id+"/sync?since=0", session, nil).status
}

func wantStatus(t *testing.T, what string, got, want int) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d", what, got, want)
	}
}

// TestCachedSessionEndsAtLogout: the session is cached by the pulls before
// the logout, and the next pull with the old cookie is refused anyway.
func TestCachedSessionEndsAtLogout(t *testing.T) {
	e := newEnv(t, withCacheTTL(longTTL))
	ada := e.claim("ada@example.com", "roadmap")
	other := e.login("ada@example.com")
	for range 3 {
		wantStatus(t, "pull before logout", e.pullStatus(ada, "roadmap"), http.StatusOK)
	}
	e.do("GET", "/api/auth/logout", ada, nil).wantStatus(t, http.StatusOK)
	e.do("GET", "/api/boards/roadmap/sync?since=0", ada, nil).wantError(t, http.StatusUnauthorized, "")
	e.do("GET", "/api/auth/me", ada, nil).wantStatus(t, http.StatusUnauthorized)
	// The user's other session (another device) stays.
	wantStatus(t, "the other session's pull", e.pullStatus(other, "roadmap"), http.StatusOK)
}

// TestCachedMembershipEndsAtInviteRemoval: the invitee's access is cached
// by their pulls; after the owner removes them their next pull and push
// are 403, and a new invite lets them in at once.
func TestCachedMembershipEndsAtInviteRemoval(t *testing.T) {
	e := newEnv(t, withCacheTTL(longTTL))
	ada := e.claim("ada@example.com", "roadmap")
	bob := e.invite(ada, "roadmap", "bob@example.com", billing.Pro)
	for range 3 {
		wantStatus(t, "invitee's pull", e.pullStatus(bob, "roadmap"), http.StatusOK)
	}
	e.pushOK(bob, "roadmap", notePush(board.Note{ID: "n1", Title: "one"}))

	e.do("DELETE", "/api/boards/roadmap/invite", ada, map[string]string{"email": "bob@example.com"}).wantStatus(t, http.StatusOK)
	e.do("GET", "/api/boards/roadmap/sync?since=0", bob, nil).wantError(t, http.StatusForbidden, "")
	if status, _ := e.push(bob, "roadmap", notePush(board.Note{ID: "n2", Title: "two"})); status != http.StatusForbidden {
		t.Fatalf("push after removal: %d, want 403", status)
	}
	if got := e.do("GET", "/api/boards/roadmap/access", bob, nil).wantObject(t, http.StatusOK)["hasAccess"]; got != false {
		t.Fatalf("hasAccess after removal = %v, want false", got)
	}

	e.addInvite(ada, "roadmap", "bob@example.com")
	wantStatus(t, "pull after a new invite", e.pullStatus(bob, "roadmap"), http.StatusOK)
	// The owner's list is the stored one, not the cached board's.
	if got := e.do("GET", "/api/boards/roadmap/invite", ada, nil).wantObject(t, http.StatusOK)["invitedEmails"]; !reflect.DeepEqual(got, []any{"bob@example.com"}) {
		t.Fatalf("invitedEmails %v, want [bob@example.com]", got)
	}
}

// TestCachedPhasesChange: GET access shows the phases the owner just saved,
// though the board was cached before.
func TestCachedPhasesChange(t *testing.T) {
	e := newEnv(t, withCacheTTL(longTTL))
	ada := e.claim("ada@example.com", "roadmap")
	bob := e.invite(ada, "roadmap", "bob@example.com", billing.Free)
	if _, ok := e.do("GET", "/api/boards/roadmap/access", bob, nil).wantObject(t, http.StatusOK)["phases"]; ok {
		t.Fatal("phases shown before any were set")
	}
	wantStatus(t, "pull", e.pullStatus(bob, "roadmap"), http.StatusOK)
	phases := map[string]any{"phases": []any{map[string]any{"id": "build"}}, "currentPhaseId": "build"}
	e.do("PATCH", "/api/boards/roadmap/access", ada, map[string]any{"phases": phases}).wantStatus(t, http.StatusOK)
	got := e.do("GET", "/api/boards/roadmap/access", bob, nil).wantObject(t, http.StatusOK)["phases"]
	if !jsonEqual(got, phases) {
		t.Fatalf("phases after PATCH = %v, want %v", got, phases)
	}
}

// TestCachedPlanChangeByWebhook: a free invitee is view-only (the plan is
// cached by that refusal and by pulls); the payment webhook moves them to
// pro and their next push is accepted.
func TestCachedPlanChangeByWebhook(t *testing.T) {
	e := newEnv(t, withCacheTTL(longTTL), withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	ada := e.claim("ada@example.com", "roadmap")
	bob := e.invite(ada, "roadmap", "bob@example.com", billing.Free)
	for range 2 {
		if status, _ := e.push(bob, "roadmap", notePush(board.Note{ID: "n1"})); status != http.StatusForbidden {
			t.Fatalf("free invitee's push: %d, want 403", status)
		}
	}
	body := billCheckout(t, "evt_cache_1", "bob@example.com")
	e.webhook(body, billStripeSigned(billSecret, e.clock.Now(), body)).wantExactObject(t, http.StatusOK, billOK)
	e.pushOK(bob, "roadmap", notePush(board.Note{ID: "n1"}))
	if got := e.do("GET", "/api/boards/roadmap/access", bob, nil).wantObject(t, http.StatusOK)["canEdit"]; got != true {
		t.Fatalf("canEdit after paying = %v, want true", got)
	}
}

// TestCacheInvalidateFeed is the cross-node path: a change written to the
// store by someone else (another node) is not seen while cached, and is
// seen at once when the feed calls Server.Invalidate.
func TestCacheInvalidateFeed(t *testing.T) {
	ctx := context.Background()
	t.Run("Session", func(t *testing.T) {
		e := newEnv(t, withCacheTTL(longTTL))
		ada := e.claim("ada@example.com", "roadmap")
		wantStatus(t, "pull", e.pullStatus(ada, "roadmap"), http.StatusOK)
		key, err := auth.SessionKey(ada)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.db.DeleteSession(ctx, key); err != nil { // the other node's logout
			t.Fatal(err)
		}
		wantStatus(t, "pull before the feed (cached)", e.pullStatus(ada, "roadmap"), http.StatusOK)
		e.api.Invalidate(cache.Session, string(key))
		wantStatus(t, "pull after the feed", e.pullStatus(ada, "roadmap"), http.StatusUnauthorized)
	})
	t.Run("Board", func(t *testing.T) {
		e := newEnv(t, withCacheTTL(longTTL))
		ada := e.claim("ada@example.com", "roadmap")
		bob := e.invite(ada, "roadmap", "bob@example.com", billing.Free)
		wantStatus(t, "pull", e.pullStatus(bob, "roadmap"), http.StatusOK)
		if _, _, err := e.db.RemoveInvite(ctx, "roadmap", "bob@example.com"); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, "pull before the feed (cached)", e.pullStatus(bob, "roadmap"), http.StatusOK)
		e.api.Invalidate(cache.Board, "roadmap")
		wantStatus(t, "pull after the feed", e.pullStatus(bob, "roadmap"), http.StatusForbidden)
	})
	t.Run("Plan", func(t *testing.T) {
		e := newEnv(t, withCacheTTL(longTTL))
		ada := e.claim("ada@example.com", "roadmap")
		bob := e.invite(ada, "roadmap", "bob@example.com", billing.Pro)
		e.pushOK(bob, "roadmap", notePush(board.Note{ID: "n1"}))
		if _, err := e.db.UpdateUser(ctx, "bob@example.com", billing.Free, func(u *persist.User) error { u.Plan = billing.Free; return nil }); err != nil {
			t.Fatal(err)
		}
		e.pushOK(bob, "roadmap", notePush(board.Note{ID: "n2"})) // cached: still pro here
		e.api.Invalidate(cache.Plan, "bob@example.com")
		if status, _ := e.push(bob, "roadmap", notePush(board.Note{ID: "n3"})); status != http.StatusForbidden {
			t.Fatalf("push after the feed: %d, want 403 (free invitee)", status)
		}
	})
}

// TestCacheTTLBackstop: without the feed, another node's change is seen
// once the TTL has passed.
func TestCacheTTLBackstop(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	e := newEnv(t, withClock(start), withCacheTTL(5*time.Second))
	ada := e.claim("ada@example.com", "roadmap")
	bob := e.invite(ada, "roadmap", "bob@example.com", billing.Free)
	wantStatus(t, "pull", e.pullStatus(bob, "roadmap"), http.StatusOK)
	if _, _, err := e.db.RemoveInvite(ctx, "roadmap", "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5*time.Second - time.Nanosecond)
	wantStatus(t, "pull within the TTL", e.pullStatus(bob, "roadmap"), http.StatusOK)
	e.clock.Advance(time.Nanosecond)
	wantStatus(t, "pull at the TTL", e.pullStatus(bob, "roadmap"), http.StatusForbidden)
}

// TestUnknownBoardsNotCached: made-up board IDs are refused and do not
// displace the boards in use (a claim is seen at once).
func TestUnknownBoardsNotCached(t *testing.T) {
	e := newEnv(t, withCacheTTL(longTTL))
	ada := e.login("ada@example.com")
	for i := range 20 {
		wantStatus(t, "pull of an unclaimed board", e.pullStatus(ada, fmt.Sprintf("nobody-%d", i)), http.StatusNotFound)
	}
	e.claimAs(ada, "nobody-3")
	wantStatus(t, "pull after the claim", e.pullStatus(ada, "nobody-3"), http.StatusOK)
}

// TestHeavyBoardsReadThrough: a board whose invitees weigh more than the
// cache takes per board is read from storage on every request, so a change
// written by another node counts at once, and such boards cannot make the
// cache's memory grow past its bound.
func TestHeavyBoardsReadThrough(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, withCacheTTL(longTTL))
	ada := e.claim("ada@example.com", "crowd")
	for i := range 200 {
		if _, _, err := e.db.AddInvite(ctx, "crowd", fmt.Sprintf("member-number-%03d@example.com", i)); err != nil {
			t.Fatal(err)
		}
	}
	bob := e.invite(ada, "crowd", "bob@example.com", billing.Free)
	wantStatus(t, "pull", e.pullStatus(bob, "crowd"), http.StatusOK)
	if _, _, err := e.db.RemoveInvite(ctx, "crowd", "bob@example.com"); err != nil { // another node
		t.Fatal(err)
	}
	wantStatus(t, "pull after another node removed bob", e.pullStatus(bob, "crowd"), http.StatusForbidden)
}
