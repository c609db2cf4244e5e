package billing_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/billing"
	"corkboard/board"
)

func TestDefaultPlans(t *testing.T) {
	plans := billing.DefaultPlans()
	tests := []billing.Plan{
		{Name: billing.Free, InviteeCanEdit: false, CreditsPerMonth: 100, RequestsPerMinute: 5},
		{Name: billing.Pro, InviteeCanEdit: true, CreditsPerMonth: 2000, RequestsPerMinute: 20},
		{Name: billing.Team, InviteeCanEdit: true, CreditsPerMonth: 10000, RequestsPerMinute: 60},
	}
	for _, want := range tests {
		t.Run(want.Name, func(t *testing.T) {
			got, ok := plans.Lookup(want.Name)
			if !ok {
				t.Fatalf("Lookup(%q) not found", want.Name)
			}
			if got != want {
				t.Fatalf("Lookup(%q)=%+v, want %+v", want.Name, got, want)
			}
			if !plans.Valid(want.Name) {
				t.Fatalf("Valid(%q)=false", want.Name)
			}
		})
	}
	if got, want := len(plans.All()), 3; got != want {
		t.Fatalf("len(All())=%d, want %d", got, want)
	}
	for i, p := range plans.All() {
		if got, want := p.Name, billing.Names()[i]; got != want {
			t.Fatalf("All()[%d].Name=%q, want %q", i, got, want)
		}
	}
}

func TestPlans_Unknown(t *testing.T) {
	plans := billing.DefaultPlans()
	for _, name := range []string{"", "Free", "enterprise", " pro"} {
		if plans.Valid(name) || billing.ValidName(name) {
			t.Errorf("%q is valid, want invalid", name)
		}
		if _, ok := plans.Lookup(name); ok {
			t.Errorf("Lookup(%q) found a plan", name)
		}
	}
	var zero billing.Plans
	if zero.Valid(billing.Free) {
		t.Fatal("zero Plans knows free")
	}
}

func TestPlan_CanEdit(t *testing.T) {
	plans := billing.DefaultPlans()
	tests := []struct {
		plan    string
		isOwner bool
		want    bool
	}{
		{billing.Free, true, true},
		{billing.Free, false, false}, // spec: invitees on free are view-only
		{billing.Pro, false, true},
		{billing.Team, false, true},
	}
	for _, tt := range tests {
		p, _ := plans.Lookup(tt.plan)
		if got := p.CanEdit(tt.isOwner); got != tt.want {
			t.Errorf("%s.CanEdit(owner=%v)=%v, want %v", tt.plan, tt.isOwner, got, tt.want)
		}
	}
}

func TestPlan_Allows(t *testing.T) {
	p := billing.Plan{Name: billing.Free, CreditsPerMonth: 100}
	tests := []struct {
		name       string
		used, cost int
		want       bool
	}{
		{"Fresh", 0, 1, true},
		{"LastCreditExactly", 99, 1, true},
		{"QuotaSpent", 100, 1, false},
		{"BigCallReachesQuota", 95, 5, true},
		{"BigCallPassesQuota", 96, 5, false},
		{"Overdrawn", 150, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Allows(tt.used, tt.cost); got != tt.want {
				t.Fatalf("Allows(%d, %d)=%v, want %v", tt.used, tt.cost, got, tt.want)
			}
		})
	}
	if (billing.Plan{CreditsPerMonth: 0}).Allows(0, 1) {
		t.Fatal("a plan with 0 credits allowed a call")
	}
}

func TestParsePlanOverrides(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]billing.Plan // plans that must differ from the defaults
	}{
		{"Empty", "", nil},
		{"Spaces", "  ", nil},
		{"Credits", "free.credits=200", map[string]billing.Plan{
			billing.Free: {Name: billing.Free, CreditsPerMonth: 200, RequestsPerMinute: 5},
		}},
		{"Several", "free.credits=200, pro.rpm=30,team.invitee-edit=false,", map[string]billing.Plan{
			billing.Free: {Name: billing.Free, CreditsPerMonth: 200, RequestsPerMinute: 5},
			billing.Pro:  {Name: billing.Pro, InviteeCanEdit: true, CreditsPerMonth: 2000, RequestsPerMinute: 30},
			billing.Team: {Name: billing.Team, InviteeCanEdit: false, CreditsPerMonth: 10000, RequestsPerMinute: 60},
		}},
		{"FreeInviteesEdit", "free.invitee-edit=true", map[string]billing.Plan{
			billing.Free: {Name: billing.Free, InviteeCanEdit: true, CreditsPerMonth: 100, RequestsPerMinute: 5},
		}},
		{"ZeroCreditsDisablesAI", "free.credits=0", map[string]billing.Plan{
			billing.Free: {Name: billing.Free, CreditsPerMonth: 0, RequestsPerMinute: 5},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := billing.ParsePlanOverrides(tt.in)
			if err != nil {
				t.Fatalf("ParsePlanOverrides(%q): %v", tt.in, err)
			}
			plans, err := billing.DefaultPlans().With(o)
			if err != nil {
				t.Fatalf("With: %v", err)
			}
			defaults := billing.DefaultPlans()
			for _, name := range billing.Names() {
				got, _ := plans.Lookup(name)
				want, changed := tt.want[name]
				if !changed {
					want, _ = defaults.Lookup(name)
				}
				if got != want {
					t.Errorf("%s=%+v, want %+v", name, got, want)
				}
			}
		})
	}
}

func TestParsePlanOverrides_Err(t *testing.T) {
	tests := []struct {
		in, wantMsg string
	}{
		{"free", "must look like"},
		{"free=200", "must look like"},
		{"credits=200", "must look like"},
		{"enterprise.credits=5", "unknown plan"},
		{"Free.credits=5", "unknown plan"},
		{"free.tokens=5", "unknown setting"},
		{"free.credits=lots", "not a whole number"},
		{"free.credits=1.5", "not a whole number"},
		{"free.invitee-edit=maybe", "not true or false"},
		{"free.credits=1,free.credits=2", "set twice"},
		{"free.credits=-1", "credits per month must be"},
		{"free.credits=1000000001", "credits per month must be"},
		{"pro.rpm=0", "requests per minute must be"},
		{"pro.rpm=1000001", "requests per minute must be"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := billing.ParsePlanOverrides(tt.in)
			assertInvalid(t, err, tt.wantMsg)
		})
	}
}

func TestPlans_With(t *testing.T) {
	t.Run("DoesNotChangeReceiver", func(t *testing.T) {
		base := billing.DefaultPlans()
		n := 7
		changed, err := base.With(billing.PlanOverrides{billing.Pro: {CreditsPerMonth: &n}})
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := changed.Lookup(billing.Pro); p.CreditsPerMonth != 7 {
			t.Fatalf("changed pro credits=%d, want 7", p.CreditsPerMonth)
		}
		if p, _ := base.Lookup(billing.Pro); p.CreditsPerMonth != 2000 {
			t.Fatalf("base pro credits=%d, want 2000 (With must copy)", p.CreditsPerMonth)
		}
	})
	t.Run("ErrUnknownPlan", func(t *testing.T) {
		_, err := billing.DefaultPlans().With(billing.PlanOverrides{"gold": {}})
		assertInvalid(t, err, "Unknown plan")
	})
	t.Run("ErrPlanNotInTable", func(t *testing.T) {
		_, err := billing.Plans{}.With(billing.PlanOverrides{billing.Pro: {}})
		assertInvalid(t, err, "not in the table")
	})
	t.Run("ErrRange", func(t *testing.T) {
		n := -3
		_, err := billing.DefaultPlans().With(billing.PlanOverrides{billing.Pro: {RequestsPerMinute: &n}})
		assertInvalid(t, err, "requests per minute")
	})
}

func TestLoadPlansFile(t *testing.T) {
	write := func(t *testing.T, content string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "plans.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Run("OK", func(t *testing.T) {
		path := write(t, `{
			"free": {"creditsPerMonth": 250, "inviteeCanEdit": true},
			"team": {"requestsPerMinute": 120}
		}`)
		o, err := billing.LoadPlansFile(path)
		if err != nil {
			t.Fatal(err)
		}
		plans, err := billing.DefaultPlans().With(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []billing.Plan{
			{Name: billing.Free, InviteeCanEdit: true, CreditsPerMonth: 250, RequestsPerMinute: 5},
			{Name: billing.Pro, InviteeCanEdit: true, CreditsPerMonth: 2000, RequestsPerMinute: 20},
			{Name: billing.Team, InviteeCanEdit: true, CreditsPerMonth: 10000, RequestsPerMinute: 120},
		} {
			if got, _ := plans.Lookup(want.Name); got != want {
				t.Errorf("%s=%+v, want %+v", want.Name, got, want)
			}
		}
	})
	t.Run("FlagAfterFile", func(t *testing.T) {
		fromFile, err := billing.LoadPlansFile(write(t, `{"free": {"creditsPerMonth": 250}}`))
		if err != nil {
			t.Fatal(err)
		}
		fromFlag, err := billing.ParsePlanOverrides("free.credits=300")
		if err != nil {
			t.Fatal(err)
		}
		plans, err := billing.DefaultPlans().With(fromFile)
		if err == nil {
			plans, err = plans.With(fromFlag)
		}
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := plans.Lookup(billing.Free); p.CreditsPerMonth != 300 {
			t.Fatalf("free credits=%d, want 300 (the flag applies last)", p.CreditsPerMonth)
		}
	})
	t.Run("EmptyObject", func(t *testing.T) {
		o, err := billing.LoadPlansFile(write(t, `{}`))
		if err != nil || len(o) != 0 {
			t.Fatalf("LoadPlansFile({})=%v, %v; want empty, nil", o, err)
		}
	})
	t.Run("Null", func(t *testing.T) {
		o, err := billing.LoadPlansFile(write(t, `null`))
		if err != nil || o == nil || len(o) != 0 {
			t.Fatalf("LoadPlansFile(null)=%v, %v; want empty, nil", o, err)
		}
	})
	errs := []struct {
		name, content, wantMsg string
	}{
		{"ErrUnknownPlan", `{"gold": {"creditsPerMonth": 1}}`, "Unknown plan"},
		{"ErrUnknownField", `{"free": {"credits": 1}}`, "unknown field"},
		{"ErrNegative", `{"free": {"creditsPerMonth": -1}}`, "credits per month"},
		{"ErrRPMZero", `{"pro": {"requestsPerMinute": 0}}`, "requests per minute"},
		{"ErrNotJSON", `free.credits=1`, "not valid"},
		{"ErrWrongType", `{"free": {"creditsPerMonth": "many"}}`, "not valid"},
		{"ErrTrailing", `{} {}`, "data after"},
		{"ErrTooLarge", `{"free": {}}` + strings.Repeat(" ", 70<<10), "larger than"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := billing.LoadPlansFile(write(t, tt.content))
			assertInvalid(t, err, tt.wantMsg)
		})
	}
	t.Run("ErrMissingFile", func(t *testing.T) {
		_, err := billing.LoadPlansFile(filepath.Join(t.TempDir(), "nope.json"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err=%v, want a not-exist error", err)
		}
	})
}

// assertInvalid fails unless err is an EINVALID *board.Error whose message
// contains wantMsg.
func assertInvalid(tb testing.TB, err error, wantMsg string) {
	tb.Helper()
	assertCode(tb, err, board.EINVALID, wantMsg)
}

func assertCode(tb testing.TB, err error, code, wantMsg string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("err=nil, want %s containing %q", code, wantMsg)
	}
	if got := board.ErrorCode(err); got != code {
		tb.Fatalf("code=%q (%v), want %q", got, err, code)
	}
	if msg := board.ErrorMessage(err); !strings.Contains(msg, wantMsg) {
		tb.Fatalf("message=%q, want it to contain %q", msg, wantMsg)
	}
}
