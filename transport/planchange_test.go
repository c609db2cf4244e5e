package transport_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/coder/websocket"

	"corkboard/billing"
	"corkboard/internal/cache"
	"corkboard/persist"
	"corkboard/transport/livewire"
)

// TestPlanChangeReachesOpenBoards: when an invitee's plan changes (here
// through the payment webhook), every board they have open as an invitee
// gets an access message with what the guard now answers, so the client
// turns editable without a reload (and back); their own boards and other
// people's connections get none.
func TestPlanChangeReachesOpenBoards(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	owner := env.login("owner@example.com")
	ada := env.login("ada@example.com")
	env.claimAs(owner, "shared")
	env.claimAs(ada, "ada-own")
	env.addInvite(owner, "shared", "ada@example.com")

	invited, hello := env.connect(ada, "shared", "")
	if hello.You.CanEdit {
		t.Fatal("hello canEdit=true on free, want false")
	}
	own, _ := env.connect(ada, "ada-own", "")
	ownerConn, _ := env.connect(owner, "shared", "")

	checkout := billFixture(t, "checkout_session_completed.json")
	env.webhook(checkout, billStripeSigned(billSecret, env.clock.Now(), checkout)).wantExactObject(t, http.StatusOK, billOK)
	if m := readType(t, invited, livewire.TypeAccess); !m.CanEdit {
		t.Fatalf("access after the upgrade %+v, want canEdit true", m)
	}
	// Messages to one connection keep their order: a push after the
	// webhook reaches the others with no access message before it.
	noAccessBefore := func(c *websocket.Conn, who string) {
		t.Helper()
		for {
			m := read(t, c)
			if m.Type == livewire.TypeAccess {
				t.Fatalf("%s got %+v, want no access message", who, m)
			}
			if m.Type == livewire.TypeChanges {
				return
			}
		}
	}
	env.pushOK(owner, "shared", map[string]any{"board": map[string]any{"name": "S"}})
	noAccessBefore(ownerConn, "the owner")
	env.pushOK(ada, "ada-own", map[string]any{"board": map[string]any{"name": "A"}})
	noAccessBefore(own, "ada on her own board")

	deleted := billFixture(t, "customer_subscription_deleted.json")
	env.webhook(deleted, billStripeSigned(billSecret, env.clock.Now(), deleted)).wantExactObject(t, http.StatusOK, billOK)
	if m := readType(t, invited, livewire.TypeAccess); m.CanEdit {
		t.Fatalf("access after the cancellation %+v, want canEdit false", m)
	}
}

// TestPlanChangeFromAnotherNode: a plan changed on another node reaches
// this node as a cache invalidation (cmd/corkboard's node links call
// Server.Invalidate), and this node tells its own open boards.
func TestPlanChangeFromAnotherNode(t *testing.T) {
	env := newEnv(t)
	owner := env.login("owner@example.com")
	ada := env.login("ada@example.com")
	env.claimAs(owner, "shared")
	env.addInvite(owner, "shared", "ada@example.com")
	c, hello := env.connect(ada, "shared", "")
	if hello.You.CanEdit {
		t.Fatal("hello canEdit=true on free, want false")
	}
	// Ask once, so that the free plan is cached here.
	if got := env.do("GET", "/api/boards/shared/access", ada, nil).object(t)["canEdit"]; got != false {
		t.Fatalf("canEdit=%v, want false", got)
	}
	// Another node stores the new plan and announces it.
	if _, err := env.db.UpdateUser(context.Background(), "ada@example.com", billing.Free, func(u *persist.User) error {
		u.Plan = billing.Team
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	env.api.Invalidate(cache.Plan, "ada@example.com")
	if m := readType(t, c, livewire.TypeAccess); !m.CanEdit {
		t.Fatalf("access %+v, want canEdit true", m)
	}
}
