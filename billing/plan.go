// Package billing holds the pure parts of Corkboard's plans and payments: the
// plans and what each allows, the credit cost of every AI feature, the
// calendar-month arithmetic of quotas, the webhook signature checks (Stripe
// and Standard Webhooks, written by hand), and the decoding of payment events
// into plan changes. It does no I/O except reading an optional plans file;
// storage and HTTP wiring call into it.
package billing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"corkboard/board"
)

// Plan names. They are defined here and nowhere else.
const (
	Free = "free"
	Pro  = "pro"
	Team = "team"
)

// Bounds that every plan's limits must respect, so that a typo in a flag
// cannot configure a negative quota or a rate the limiter cannot represent.
const (
	MaxCreditsPerMonth   = 1_000_000_000
	MaxRequestsPerMinute = 1_000_000
)

// maxPlansFile bounds the plans file; a real one is a few hundred bytes.
const maxPlansFile = 64 << 10

// Names returns the plan names from the smallest plan to the largest.
func Names() []string { return []string{Free, Pro, Team} }

// ValidName reports whether name is one of the plan names.
func ValidName(name string) bool {
	switch name {
	case Free, Pro, Team:
		return true
	}
	return false
}

// Plan is what one plan allows.
type Plan struct {
	// Name is one of Free, Pro, Team.
	Name string
	// InviteeCanEdit says whether a user on this plan may edit boards they
	// were invited to (owners always edit their own boards).
	InviteeCanEdit bool
	// CreditsPerMonth is the AI credit quota per calendar month (UTC).
	CreditsPerMonth int
	// RequestsPerMinute is the per-user AI request rate limit.
	RequestsPerMinute int
}

// CanEdit reports whether a user on p may edit a board: owners always may,
// invitees only when the plan allows it (the spec: invitees on free are
// view-only).
func (p Plan) CanEdit(isOwner bool) bool { return isOwner || p.InviteeCanEdit }

// Allows reports whether a user on p who has used `used` credits this month
// may spend cost more. The call that reaches the quota exactly is allowed; the
// one that would pass it is not.
func (p Plan) Allows(used, cost int) bool { return used+cost <= p.CreditsPerMonth }

// Plans is the table of plans in force. Build it with DefaultPlans and adjust
// it with With; the zero value knows no plans.
type Plans struct {
	byName map[string]Plan
}

// DefaultPlans returns the built-in plans (documented in docs/billing.md).
func DefaultPlans() Plans {
	return Plans{byName: map[string]Plan{
		Free: {Name: Free, InviteeCanEdit: false, CreditsPerMonth: 100, RequestsPerMinute: 5},
		Pro:  {Name: Pro, InviteeCanEdit: true, CreditsPerMonth: 2000, RequestsPerMinute: 20},
		Team: {Name: Team, InviteeCanEdit: true, CreditsPerMonth: 10000, RequestsPerMinute: 60},
	}}
}

// Lookup returns the plan called name.
func (p Plans) Lookup(name string) (Plan, bool) {
	pl, ok := p.byName[name]
	return pl, ok
}

// Valid reports whether name is a plan of the table.
func (p Plans) Valid(name string) bool {
	_, ok := p.byName[name]
	return ok
}

// All returns the plans in the order of Names.
func (p Plans) All() []Plan {
	out := make([]Plan, 0, len(p.byName))
	for _, n := range Names() {
		if pl, ok := p.byName[n]; ok {
			out = append(out, pl)
		}
	}
	return out
}

// PlanOverride changes some limits of one plan; a nil field keeps the value
// it overrides.
type PlanOverride struct {
	InviteeCanEdit    *bool `json:"inviteeCanEdit,omitempty"`
	CreditsPerMonth   *int  `json:"creditsPerMonth,omitempty"`
	RequestsPerMinute *int  `json:"requestsPerMinute,omitempty"`
}

// PlanOverrides maps a plan name to the changes made to it.
type PlanOverrides map[string]PlanOverride

// With returns a copy of p with o applied. It returns EINVALID when o names an
// unknown plan or sets a limit out of range; p itself never changes.
func (p Plans) With(o PlanOverrides) (Plans, error) {
	if err := o.validate(); err != nil {
		return Plans{}, err
	}
	out := Plans{byName: make(map[string]Plan, len(p.byName))}
	for n, pl := range p.byName {
		out.byName[n] = pl
	}
	for name, ov := range o {
		pl, ok := out.byName[name]
		if !ok {
			return Plans{}, board.Errorf(board.EINVALID, "Plan %q is not in the table.", name)
		}
		if ov.InviteeCanEdit != nil {
			pl.InviteeCanEdit = *ov.InviteeCanEdit
		}
		if ov.CreditsPerMonth != nil {
			pl.CreditsPerMonth = *ov.CreditsPerMonth
		}
		if ov.RequestsPerMinute != nil {
			pl.RequestsPerMinute = *ov.RequestsPerMinute
		}
		out.byName[name] = pl
	}
	return out, nil
}

func (o PlanOverrides) validate() error {
	for name, ov := range o {
		if !ValidName(name) {
			return board.Errorf(board.EINVALID, "Unknown plan %q (plans are %s).", name, strings.Join(Names(), ", "))
		}
		if c := ov.CreditsPerMonth; c != nil && (*c < 0 || *c > MaxCreditsPerMonth) {
			return board.Errorf(board.EINVALID, "%s credits per month must be 0 to %d.", name, MaxCreditsPerMonth)
		}
		if r := ov.RequestsPerMinute; r != nil && (*r < 1 || *r > MaxRequestsPerMinute) {
			return board.Errorf(board.EINVALID, "%s requests per minute must be 1 to %d.", name, MaxRequestsPerMinute)
		}
	}
	return nil
}

// ParsePlanOverrides parses a flag value such as
// "free.credits=200,pro.rpm=30,free.invitee-edit=true". Keys are
// <plan>.credits, <plan>.rpm and <plan>.invitee-edit; entries are separated by
// commas and the empty string means no overrides. It returns EINVALID naming
// the first bad entry.
func ParsePlanOverrides(s string) (PlanOverrides, error) {
	o := PlanOverrides{}
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue // tolerate "a=1," and an empty flag
		}
		key, val, ok := strings.Cut(entry, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		plan, setting, dot := strings.Cut(key, ".")
		if !ok || !dot {
			return nil, board.Errorf(board.EINVALID, "Plan override %q must look like <plan>.<setting>=<value>.", entry)
		}
		if !ValidName(plan) {
			return nil, board.Errorf(board.EINVALID, "Plan override %q: unknown plan %q (plans are %s).", entry, plan, strings.Join(Names(), ", "))
		}
		if seen[key] {
			return nil, board.Errorf(board.EINVALID, "Plan override %q: %s is set twice.", entry, key)
		}
		seen[key] = true
		ov := o[plan]
		switch setting {
		case "credits", "rpm":
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, board.Errorf(board.EINVALID, "Plan override %q: %q is not a whole number.", entry, val)
			}
			if setting == "credits" {
				ov.CreditsPerMonth = &n
			} else {
				ov.RequestsPerMinute = &n
			}
		case "invitee-edit":
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, board.Errorf(board.EINVALID, "Plan override %q: %q is not true or false.", entry, val)
			}
			ov.InviteeCanEdit = &b
		default:
			return nil, board.Errorf(board.EINVALID, "Plan override %q: unknown setting %q (use credits, rpm or invitee-edit).", entry, setting)
		}
		o[plan] = ov
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// LoadPlansFile reads plan overrides from a small JSON file shaped
// {"free": {"creditsPerMonth": 200, "requestsPerMinute": 5, "inviteeCanEdit": false}, …};
// plans and fields left out keep their values. Unknown plans, unknown fields
// and out-of-range values are EINVALID; a file that cannot be read is
// returned as the underlying error, wrapped with the path.
func LoadPlansFile(path string) (PlanOverrides, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("billing: open plans file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPlansFile+1))
	if err != nil {
		return nil, fmt.Errorf("billing: read plans file %s: %w", path, err)
	}
	if len(data) > maxPlansFile {
		return nil, board.Errorf(board.EINVALID, "Plans file %s is larger than %d bytes.", path, maxPlansFile)
	}
	o, err := parsePlansJSON(data)
	if err != nil {
		return nil, fmt.Errorf("billing: plans file %s: %w", path, err)
	}
	return o, nil
}

func parsePlansJSON(data []byte) (PlanOverrides, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt field must not be silently ignored
	var o PlanOverrides
	if err := dec.Decode(&o); err != nil {
		return nil, board.Errorf(board.EINVALID, "Plans file is not valid: %v.", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, board.Errorf(board.EINVALID, "Plans file has data after the JSON object.")
	}
	if o == nil {
		o = PlanOverrides{}
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}
