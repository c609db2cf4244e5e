package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
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

// TestCacheTTLFlag: -cache-ttl is accepted from 1s to 1m, at its edges too.
func TestCacheTTLFlag(t *testing.T) {
	for _, tt := range []struct {
		arg string
		ok  bool
	}{{"1s", true}, {"1m", true}, {"5s", true}, {"999ms", false}, {"61s", false}, {"0s", false}, {"-1s", false}} {
		cfg, err := parseConfig([]string{"-cache-ttl", tt.arg}, func(string) string { return "" }, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("-cache-ttl %s: err=%v, want ok=%v", tt.arg, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "-cache-ttl") {
			t.Errorf("-cache-ttl %s: error %q does not name the flag", tt.arg, err)
		}
		if err == nil && tt.arg == "5s" && cfg.CacheTTL != 5*time.Second {
			t.Errorf("CacheTTL=%v, want 5s", cfg.CacheTTL)
		}
	}
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil || cfg.CacheTTL != 5*time.Second {
		t.Fatalf("default CacheTTL=%v, %v; want 5s", cfg.CacheTTL, err)
	}
}
