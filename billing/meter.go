package billing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/ratelimit"
)

// CreditStore is the storage a Meter needs; every persist.Store satisfies it.
type CreditStore interface {
	// SpendCredits adds credits to email's usage for month when the total
	// stays within limit, atomically, and returns the usage after it and
	// true; past the limit it charges nothing and returns the usage and
	// false.
	SpendCredits(ctx context.Context, email, month string, credits, limit int) (used int, ok bool, err error)
	// RefundCredits gives back credits charged to email for month (never
	// below zero).
	RefundCredits(ctx context.Context, email, month string, credits int) error
	// CreditsUsed returns email's usage for month.
	CreditsUsed(ctx context.Context, email, month string) (int, error)
	// UserPlan returns the stored plan name of the user, ENOTFOUND when
	// there is no such user.
	UserPlan(ctx context.Context, email string) (string, error)
}

// MeterConfig configures a Meter.
type MeterConfig struct {
	// Store keeps users' plans and credit usage.
	Store CreditStore
	// Plans is the table of plans in force; the zero value means
	// DefaultPlans().
	Plans Plans
	// DefaultPlan is the plan of a user with no record, or whose stored plan
	// the table does not know; "" or an unknown name means Free.
	DefaultPlan string
	// Now is the clock of the credit month, the per-minute limit and the
	// plan cache's TTL; nil is time.Now.
	Now func() time.Time
	// MaxRateKeys bounds how many users the per-minute AI limit remembers
	// at once; 0 is ratelimit.DefaultMaxKeys.
	MaxRateKeys int
	// PlanCacheSize bounds how many users' plans are kept in memory;
	// 0 is 100,000.
	PlanCacheSize int
	// PlanCacheTTL is how long a cached plan is trusted before it is read
	// again: the longest a plan change made on another node can go
	// unnoticed here. 0 is 5 seconds.
	PlanCacheTTL time.Duration
}

// Meter is the one place that decides what a user's plan lets them do: it
// looks plans up, says whether a user may make an AI call now (the plan's
// requests per minute), charges and refunds AI credits, and says whether a
// user may edit a board. It is safe for concurrent use.
type Meter struct {
	store       CreditStore
	plans       Plans
	defaultPlan string
	now         func() time.Time
	// calls is the per-minute AI limit: a token bucket per user of the
	// plan's requests per minute, refilled evenly over the minute. It
	// lives in memory, per process (ratelimit's doc says what that means
	// with several nodes); a restart forgets it, which costs at most one
	// extra minute's worth of calls. Credits are the exact limit.
	calls *ratelimit.Buckets
	// planNames holds users' stored plan names; a change made through this
	// process is dropped at once (Invalidate), one made elsewhere within
	// the TTL.
	planNames *cache.Cache[string, string]
}

// NewMeter returns a Meter for cfg.
func NewMeter(cfg MeterConfig) *Meter {
	m := &Meter{store: cfg.Store, plans: cfg.Plans, defaultPlan: cfg.DefaultPlan, now: cfg.Now, calls: ratelimit.NewBuckets(time.Minute, cfg.MaxRateKeys)}
	if len(m.plans.All()) == 0 {
		m.plans = DefaultPlans()
	}
	if !m.plans.Valid(m.defaultPlan) {
		m.defaultPlan = Free
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.planNames = cache.New[string, string](cache.Options[string]{
		Size: cmp.Or(cfg.PlanCacheSize, 100_000),
		TTL:  cmp.Or(cfg.PlanCacheTTL, 5*time.Second),
		Hash: cache.StringHash,
		Now:  m.now,
	})
	return m
}

// Invalidate drops what the meter holds about a record that changed. For
// cache.Plan (the key is the e-mail) the user's plan is read from storage
// again on its next use. Whoever changes a plan calls it: the billing
// webhook, the plan admin socket, and a cross-node feed for changes made
// elsewhere. Other kinds are not the meter's.
func (m *Meter) Invalidate(kind cache.Kind, key string) {
	if kind == cache.Plan {
		m.planNames.Delete(key)
	}
}

// Now returns the meter's clock, in UTC.
func (m *Meter) Now() time.Time { return m.now().UTC() }

// Plans returns the table of plans in force.
func (m *Meter) Plans() Plans { return m.plans }

// PlanNamed returns the plan called name. A name the table does not know
// (an empty one, or one left in storage by an older version) is the default
// plan, so that an odd record never grants more than the default.
func (m *Meter) PlanNamed(name string) Plan {
	if p, ok := m.plans.Lookup(name); ok {
		return p
	}
	p, _ := m.plans.Lookup(m.defaultPlan)
	return p
}

// PlanOf returns the plan of the user with that e-mail; a user with no
// record yet is on the default plan. Errors are the store's.
//
// Stored plans are cached (see Invalidate); a user with no record is not,
// so a first login or a plan set for a new address counts at once.
func (m *Meter) PlanOf(ctx context.Context, email string) (Plan, error) {
	if name, ok := m.planNames.Get(email); ok {
		return m.PlanNamed(name), nil
	}
	gen := m.planNames.Gen(email)
	name, err := m.store.UserPlan(ctx, email)
	switch {
	case board.ErrorCode(err) == board.ENOTFOUND:
		return m.PlanNamed(""), nil
	case err != nil:
		return Plan{}, err
	}
	m.planNames.Add(email, name, gen)
	return m.PlanNamed(name), nil
}

// CanEdit reports whether email may edit b: its owner always may, a member
// invited to it when their plan lets invitees edit. It does not check that
// email is a member; the board guard does.
func (m *Meter) CanEdit(ctx context.Context, b *board.Board, email string) (bool, error) {
	if b.OwnerEmail == email {
		return true, nil
	}
	p, err := m.PlanOf(ctx, email)
	if err != nil {
		return false, err
	}
	return p.CanEdit(false), nil
}

// AllowCall decides whether email may start an AI call now: at most their
// plan's RequestsPerMinute at once, refilled evenly over the minute (a
// plan change keeps the calls in hand and changes the pace). A call it
// lets through is counted, whatever follows; call it before Charge.
// ERATELIMIT with RetryAfter (the exact wait until the next call is let
// through) past the limit; other errors are the store's.
func (m *Meter) AllowCall(ctx context.Context, email string) error {
	plan, err := m.PlanOf(ctx, email)
	if err != nil {
		return err
	}
	wait, ok := m.calls.Allow(email, plan.RequestsPerMinute, m.Now())
	if ok {
		return nil
	}
	e := board.Errorf(board.ERATELIMIT, "Too many AI requests: your plan allows %d per minute. Try again in a moment.", plan.RequestsPerMinute)
	e.RetryAfter = board.RetryAfterSeconds(wait)
	return e
}

// Charge is a charge a Meter made; give it back to Refund.
type Charge struct {
	// Payer is the user charged.
	Payer string
	// Feature is what was charged for.
	Feature Feature
	// Month is the credit month charged (MonthKey), which a refund goes
	// back to even after the month ends.
	Month string
	// Credits is how many credits were charged.
	Credits int
	// Used is the payer's usage of the month after the charge.
	Used int
	// Plan is the payer's plan when charged.
	Plan Plan
}

// QuotaError is Charge's answer when a charge would pass the payer's monthly
// credits; nothing is charged then.
type QuotaError struct {
	// Used is the payer's usage this month, Limit the plan's monthly
	// credits, Plan the plan's name.
	Used, Limit int
	Plan        string
	// RetryAfter is how long until the month resets.
	RetryAfter time.Duration
}

// Error describes the refused charge for logs.
func (e *QuotaError) Error() string {
	return fmt.Sprintf("monthly AI credits used up: used %d of %d on plan %s", e.Used, e.Limit, e.Plan)
}

// Charge charges payer the cost of one call of feature for the current UTC
// month, within the monthly credits of payer's plan. Past them it returns a
// *QuotaError and charges nothing. An unknown feature, or one not charged on
// its own, is EINVALID; other errors are the store's.
func (m *Meter) Charge(ctx context.Context, payer string, feature Feature) (Charge, error) {
	cost, err := Cost(feature)
	if err != nil {
		return Charge{}, err
	}
	plan, err := m.PlanOf(ctx, payer)
	if err != nil {
		return Charge{}, err
	}
	now := m.Now()
	month := MonthKey(now)
	used, ok, err := m.store.SpendCredits(ctx, payer, month, cost, plan.CreditsPerMonth)
	if err != nil {
		return Charge{}, err
	}
	if !ok {
		return Charge{}, &QuotaError{Used: used, Limit: plan.CreditsPerMonth, Plan: plan.Name, RetryAfter: MonthResetsAt(now).Sub(now)}
	}
	return Charge{Payer: payer, Feature: feature, Month: month, Credits: cost, Used: used, Plan: plan}, nil
}

// Admission is the AI gate's decision on one call's credits (Admit): the
// call runs, with Charge charged to its payer, or it is refused, with
// what the refusal tells the caller.
type Admission struct {
	// Charge is what was charged to the payer of an admitted call; give it
	// to Refund when the call fails.
	Charge Charge
	// Refused, when not nil, says the call may not run: the payer's
	// monthly credits are used up (how many, of how many, on which plan,
	// and how long until the month resets). Nothing was charged.
	Refused *QuotaError
}

// Admitted reports whether the call may run.
func (a Admission) Admitted() bool { return a.Refused == nil }

// Admit decides whether payer's credits let one call of feature run now,
// and charges it when they do (Charge). Errors are the store's, or
// EINVALID for a feature not charged on its own; a refusal is not an
// error but an Admission that says why.
func (m *Meter) Admit(ctx context.Context, payer string, feature Feature) (Admission, error) {
	c, err := m.Charge(ctx, payer, feature)
	var qe *QuotaError
	if errors.As(err, &qe) {
		return Admission{Refused: qe}, nil
	}
	if err != nil {
		return Admission{}, err
	}
	return Admission{Charge: c}, nil
}

// Refund gives back the credits of c to the month it was charged in.
func (m *Meter) Refund(ctx context.Context, c Charge) error {
	return m.store.RefundCredits(ctx, c.Payer, c.Month, c.Credits)
}

// Usage is a user's plan and credits for the current month.
type Usage struct {
	// Plan is the user's plan.
	Plan Plan
	// Used is the credits charged to the user this UTC month.
	Used int
	// ResetsAt is the first instant of the next month.
	ResetsAt time.Time
}

// Usage returns email's plan and this month's credits.
func (m *Meter) Usage(ctx context.Context, email string) (Usage, error) {
	plan, err := m.PlanOf(ctx, email)
	if err != nil {
		return Usage{}, err
	}
	now := m.Now()
	used, err := m.store.CreditsUsed(ctx, email, MonthKey(now))
	if err != nil {
		return Usage{}, err
	}
	return Usage{Plan: plan, Used: used, ResetsAt: MonthResetsAt(now)}, nil
}
