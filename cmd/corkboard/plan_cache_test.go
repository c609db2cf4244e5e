package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/persist/bolt"
)

// TestPlanSetReachesTheServersMeter: the running server's Meter has ada's
// plan cached (for a day here, so only the admin socket's report can
// refresh it); `corkboard plan set` through the admin socket changes what
// the Meter answers at once, in both directions.
func TestPlanSetReachesTheServersMeter(t *testing.T) {
	ctx := context.Background()
	dir := newDataDir(t)
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plans := billing.DefaultPlans()
	meter := billing.NewMeter(billing.MeterConfig{Store: db, Plans: plans, DefaultPlan: billing.Free, PlanCacheTTL: 24 * time.Hour})
	stop, err := servePlanAdmin(ctx, db, plans, meter, filepath.Join(dir, AdminSocketName), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, err := db.EnsureUser(ctx, "ada@example.com", billing.Free); err != nil {
		t.Fatal(err)
	}
	if p, err := meter.PlanOf(ctx, "ada@example.com"); err != nil || p.Name != billing.Free {
		t.Fatalf("ada's plan before: %v, %v; want free", p.Name, err)
	}
	steps := []struct {
		set     string
		canEdit bool
	}{{billing.Pro, true}, {billing.Free, false}, {billing.Team, true}}
	for _, st := range steps {
		if _, err := runPlan(t, nil, "set", "ada@example.com", st.set, "-data", dir); err != nil {
			t.Fatal(err)
		}
		p, err := meter.PlanOf(ctx, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != st.set || p.CanEdit(false) != st.canEdit {
			t.Fatalf("after plan set %s: the Meter answers %s (invitee may edit: %v), want %s (%v)", st.set, p.Name, p.CanEdit(false), st.set, st.canEdit)
		}
	}
}
