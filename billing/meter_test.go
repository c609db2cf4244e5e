package billing_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"corkboard/aifeature"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
)

var _ billing.CreditStore = (*bolt.DB)(nil)

// newMeter returns a Meter on a real store whose free plan has 10 credits,
// with ada on free, bob on pro and the clock at 2026-11-30 23:00 UTC.
func newMeter(tb testing.TB) (*billing.Meter, *bolt.DB, *persisttest.Clock) {
	tb.Helper()
	db, clock, _ := persisttest.Open(tb, time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC))
	credits := 10
	plans, err := billing.DefaultPlans().With(billing.PlanOverrides{billing.Free: {CreditsPerMonth: &credits}})
	if err != nil {
		tb.Fatal(err)
	}
	for email, plan := range map[string]string{"ada@example.com": billing.Free, "bob@example.com": billing.Pro} {
		if _, err := db.EnsureUser(context.Background(), email, plan); err != nil {
			tb.Fatal(err)
		}
	}
	return billing.NewMeter(billing.MeterConfig{Store: db, Plans: plans, DefaultPlan: billing.Free, Now: clock.Now}), db, clock
}

func TestMeter_Charge(t *testing.T) {
	tests := []struct {
		name     string
		before   int // credits ada has used this month
		feature  billing.Feature
		wantUsed int // after the call; on a refusal, the QuotaError's Used
		refused  bool
	}{
		{"OK", 0, aifeature.Chat, 1, false},
		{"OKWithinQuota", 4, aifeature.DocumentToNotes, 9, false},
		{"OKReachesLimit", 9, aifeature.Chat, 10, false},
		{"ErrOneOver", 10, aifeature.Chat, 10, true},
		{"ErrCostOver", 6, aifeature.DocumentToNotes, 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, db, clock := newMeter(t)
			ctx := context.Background()
			month := billing.MonthKey(clock.Now())
			if tt.before > 0 {
				if _, ok, err := db.SpendCredits(ctx, "ada@example.com", month, tt.before, 10); err != nil || !ok {
					t.Fatalf("SpendCredits: ok=%v err=%v", ok, err)
				}
			}
			c, err := m.Charge(ctx, "ada@example.com", tt.feature)
			if tt.refused {
				var qe *billing.QuotaError
				if !errors.As(err, &qe) {
					t.Fatalf("Charge err=%v, want *QuotaError", err)
				}
				if got, want := *qe, (billing.QuotaError{Used: tt.wantUsed, Limit: 10, Plan: billing.Free, RetryAfter: time.Hour}); got != want {
					t.Fatalf("QuotaError=%+v, want %+v", got, want)
				}
			} else {
				if err != nil {
					t.Fatalf("Charge: %v", err)
				}
				if got, want := c.Used, tt.wantUsed; got != want {
					t.Fatalf("Charge.Used=%d, want %d", got, want)
				}
				if c.Month != month || c.Payer != "ada@example.com" || c.Feature != tt.feature || c.Plan.Name != billing.Free {
					t.Fatalf("Charge=%+v", c)
				}
			}
			if used, _ := db.CreditsUsed(ctx, "ada@example.com", month); used != tt.wantUsed {
				t.Fatalf("stored usage=%d, want %d", used, tt.wantUsed)
			}
		})
	}
}

func TestMeter_ChargeUnknownFeature(t *testing.T) {
	m, db, clock := newMeter(t)
	for _, f := range []billing.Feature{"poetry", aifeature.Programmer} {
		if _, err := m.Charge(context.Background(), "ada@example.com", f); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("Charge(%q) err=%v, want EINVALID", f, err)
		}
	}
	if used, _ := db.CreditsUsed(context.Background(), "ada@example.com", billing.MonthKey(clock.Now())); used != 0 {
		t.Fatalf("usage=%d after refused features, want 0", used)
	}
}

// TestMeter_Refund charges before midnight and refunds after it: the credits
// go back to the month they were taken from.
func TestMeter_Refund(t *testing.T) {
	m, db, clock := newMeter(t)
	ctx := context.Background()
	c, err := m.Charge(ctx, "ada@example.com", aifeature.TrackerGenerate)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour) // now December
	if _, err := m.Charge(ctx, "ada@example.com", aifeature.Chat); err != nil {
		t.Fatal(err)
	}
	if err := m.Refund(ctx, c); err != nil {
		t.Fatalf("Refund: %v", err)
	}
	if used, _ := db.CreditsUsed(ctx, "ada@example.com", "2026-11"); used != 0 {
		t.Fatalf("November usage=%d after refund, want 0", used)
	}
	u, err := m.Usage(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if u.Used != 1 || u.Plan.Name != billing.Free || !u.ResetsAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Usage=%+v, want 1 credit on free resetting 2027-01-01", u)
	}
}

func TestMeter_ChargeConcurrentNeverOvershoots(t *testing.T) {
	m, db, clock := newMeter(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	charged, refused := 0, 0
	for range 30 {
		wg.Go(func() {
			_, err := m.Charge(ctx, "ada@example.com", aifeature.Subagent) // 2 credits
			var qe *billing.QuotaError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				charged++
			case errors.As(err, &qe):
				refused++
			default:
				t.Errorf("Charge: %v", err)
			}
		})
	}
	wg.Wait()
	if charged != 5 || refused != 25 {
		t.Fatalf("charged=%d refused=%d, want 5 and 25", charged, refused)
	}
	if used, _ := db.CreditsUsed(ctx, "ada@example.com", billing.MonthKey(clock.Now())); used != 10 {
		t.Fatalf("usage=%d, want exactly the limit 10", used)
	}
}

func TestMeter_CanEdit(t *testing.T) {
	b := &board.Board{ID: "b1", OwnerEmail: "owner@example.com"}
	tests := []struct {
		name  string
		plan  string // "" is a user with no record
		email string
		owner bool
		want  bool
	}{
		{"OwnerFree", billing.Free, "o1@example.com", true, true},
		{"OwnerPro", billing.Pro, "o2@example.com", true, true},
		{"InviteeFree", billing.Free, "i1@example.com", false, false},
		{"InviteePro", billing.Pro, "i2@example.com", false, true},
		{"InviteeTeam", billing.Team, "i3@example.com", false, true},
		{"InviteeNoRecord", "", "i4@example.com", false, false},
		{"InviteeUnknownPlan", "gold", "i5@example.com", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, db, _ := newMeter(t)
			ctx := context.Background()
			if tt.plan != "" {
				if _, err := db.EnsureUser(ctx, tt.email, tt.plan); err != nil {
					t.Fatal(err)
				}
			}
			bb := *b
			if tt.owner {
				bb.OwnerEmail = tt.email
			}
			got, err := m.CanEdit(ctx, &bb, tt.email)
			if err != nil {
				t.Fatalf("CanEdit: %v", err)
			}
			if got != tt.want {
				t.Fatalf("CanEdit(%s on %q)=%v, want %v", tt.name, tt.plan, got, tt.want)
			}
		})
	}
}

// TestMeter_PlanOf checks the fall-backs: no record and an unknown stored
// plan are the default plan, never more.
func TestMeter_PlanOf(t *testing.T) {
	m, db, _ := newMeter(t)
	ctx := context.Background()
	if _, err := db.EnsureUser(ctx, "gold@example.com", "gold"); err != nil {
		t.Fatal(err)
	}
	for email, want := range map[string]string{
		"ada@example.com":    billing.Free,
		"bob@example.com":    billing.Pro,
		"nobody@example.com": billing.Free,
		"gold@example.com":   billing.Free,
	} {
		p, err := m.PlanOf(ctx, email)
		if err != nil {
			t.Fatalf("PlanOf(%s): %v", email, err)
		}
		if p.Name != want {
			t.Errorf("PlanOf(%s)=%s, want %s", email, p.Name, want)
		}
	}
}

// TestMeter_AllowCall: each user may start their plan's requests per
// minute at once, then one every minute/rpm; a refusal is ERATELIMIT with
// the exact wait in whole seconds, and another user's calls are their own.
func TestMeter_AllowCall(t *testing.T) {
	m, _, clock := newMeter(t) // ada: free, 5 a minute; bob: pro, 20 a minute
	ctx := context.Background()
	for i := range 5 {
		if err := m.AllowCall(ctx, "ada@example.com"); err != nil {
			t.Fatalf("ada's call %d: %v", i+1, err)
		}
	}
	err := m.AllowCall(ctx, "ada@example.com")
	var e *board.Error
	if !errors.As(err, &e) || e.Code != board.ERATELIMIT || e.RetryAfter != 12 {
		t.Fatalf("ada's 6th call: err=%v, want ERATELIMIT with RetryAfter 12", err)
	}
	for i := range 20 {
		if err := m.AllowCall(ctx, "bob@example.com"); err != nil {
			t.Fatalf("bob's call %d: %v", i+1, err)
		}
	}
	clock.Advance(12 * time.Second)
	if err := m.AllowCall(ctx, "ada@example.com"); err != nil {
		t.Fatalf("ada after 12s: %v", err)
	}
	// A user with no record is on the default plan.
	for range 5 {
		if err := m.AllowCall(ctx, "new@example.com"); err != nil {
			t.Fatalf("new user's call: %v", err)
		}
	}
	if err := m.AllowCall(ctx, "new@example.com"); board.ErrorCode(err) != board.ERATELIMIT {
		t.Fatalf("new user's 6th call: err=%v, want ERATELIMIT", err)
	}
}

// TestMeter_Admit: the gate's decision is the charge, or a refusal that
// says what the caller is told, with nothing charged.
func TestMeter_Admit(t *testing.T) {
	m, db, clock := newMeter(t)
	ctx := context.Background()
	month := billing.MonthKey(clock.Now())
	if _, ok, err := db.SpendCredits(ctx, "ada@example.com", month, 9, 10); err != nil || !ok {
		t.Fatalf("SpendCredits: ok=%v err=%v", ok, err)
	}
	adm, err := m.Admit(ctx, "ada@example.com", aifeature.Chat)
	if err != nil || !adm.Admitted() || adm.Charge.Used != 10 || adm.Charge.Credits != 1 {
		t.Fatalf("Admit at 9 of 10 = %+v, %v; want admitted, used 10", adm, err)
	}
	adm, err = m.Admit(ctx, "ada@example.com", aifeature.Chat)
	if err != nil || adm.Admitted() {
		t.Fatalf("Admit at 10 of 10 = %+v, %v; want refused", adm, err)
	}
	if got, want := *adm.Refused, (billing.QuotaError{Used: 10, Limit: 10, Plan: billing.Free, RetryAfter: time.Hour}); got != want {
		t.Fatalf("Refused = %+v, want %+v", got, want)
	}
	if u, err := m.Usage(ctx, "ada@example.com"); err != nil || u.Used != 10 {
		t.Fatalf("usage after a refusal = %d, %v; want 10 (nothing charged)", u.Used, err)
	}
	if _, err := m.Admit(ctx, "ada@example.com", billing.Feature("nope")); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("Admit of an unknown feature: %v, want EINVALID", err)
	}
}
