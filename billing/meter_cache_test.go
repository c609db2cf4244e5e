package billing_test

import (
	"context"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/internal/cache"
	"corkboard/persist"
)

// TestMeterPlanCache: a plan read is kept until Invalidate or the TTL; a
// user with no record is not kept, so their first plan counts at once.
func TestMeterPlanCache(t *testing.T) {
	ctx := context.Background()
	m, db, clock := newMeter(t) // the default TTL: 5 seconds
	planOf := func(email string) string {
		t.Helper()
		p, err := m.PlanOf(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		return p.Name
	}
	setPlan := func(email, plan string) {
		t.Helper()
		if _, err := db.UpdateUser(ctx, email, billing.Free, func(u *persist.User) error { u.Plan = plan; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if got := planOf("bob@example.com"); got != billing.Pro {
		t.Fatalf("bob's plan %s, want pro", got)
	}
	setPlan("bob@example.com", billing.Free) // behind the meter's back: another node
	clock.Advance(5*time.Second - time.Nanosecond)
	if got := planOf("bob@example.com"); got != billing.Pro {
		t.Fatalf("within the TTL: %s, want the cached pro", got)
	}
	m.Invalidate(cache.Board, "bob@example.com") // not the meter's kind
	if got := planOf("bob@example.com"); got != billing.Pro {
		t.Fatalf("after another kind's invalidation: %s, want the cached pro", got)
	}
	m.Invalidate(cache.Plan, "bob@example.com")
	if got := planOf("bob@example.com"); got != billing.Free {
		t.Fatalf("after Invalidate: %s, want free", got)
	}
	setPlan("bob@example.com", billing.Team)
	clock.Advance(5 * time.Second)
	if got := planOf("bob@example.com"); got != billing.Team {
		t.Fatalf("at the TTL: %s, want team", got)
	}

	if got := planOf("new@example.com"); got != billing.Free {
		t.Fatalf("a user with no record: %s, want the default free", got)
	}
	setPlan("new@example.com", billing.Pro)
	if got := planOf("new@example.com"); got != billing.Pro {
		t.Fatalf("the new user's first plan: %s, want pro at once", got)
	}
}
