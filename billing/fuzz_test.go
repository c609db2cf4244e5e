package billing_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/board"
)

// requireDomainError fails unless err is nil or a *board.Error, the only kind
// the webhook handler can turn into a clean response.
func requireDomainError(tb testing.TB, err error) {
	tb.Helper()
	if err != nil && board.ErrorCode(err) == board.EINTERNAL {
		tb.Fatalf("err=%v is not a domain error", err)
	}
}

func FuzzParseEvent(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":"evt_1","type":"customer.subscription.updated","data":{"object":{"customer":{"id":"cus_1"},"items":{"data":[{"price":null}]}}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := billing.ParseEvent(body)
		requireDomainError(t, err)
		if err == nil && ev.Type == "" {
			t.Fatal("ParseEvent accepted an event without a type")
		}
		if err == nil {
			// Whatever the event says, the decision is a real plan.
			plan, _ := billing.PlanFor(ev, billing.PlanMap{}, billing.Pro)
			if !billing.ValidName(plan) {
				t.Fatalf("PlanFor gave %q", plan)
			}
		}
	})
}

func FuzzStripeVerify(f *testing.F) {
	body := []byte(`{"id":"evt_1","type":"invoice.paid"}`)
	f.Add(stripeHeader(stripeSecret, now.Unix(), body).Get("Stripe-Signature"), body)
	f.Add("t=1,v1=00,v0=ff,,", body)
	f.Add("t=1794052800,v1="+stripeSig(stripeSecret, now.Unix(), body)+",v1=zz", []byte{})
	v := billing.NewStripeVerifier([]string{stripeSecret})
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		h := http.Header{}
		h.Set("Stripe-Signature", header)
		requireDomainError(t, v.Verify(h, body, now))
	})
}

func FuzzStandardVerify(f *testing.F) {
	f.Add(vectorID, "1614265330", vectorSig, []byte(vectorBody))
	f.Add("", "", "v1, v1a,x ,,", []byte{})
	v, err := billing.NewStandardVerifier([]string{vectorSecret})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		requireDomainError(t, v.Verify(h, body, time.Unix(vectorTS, 0)))
	})
}

func FuzzParsePlanMap(f *testing.F) {
	f.Add("price_abc=pro,prod_xyz=team")
	f.Add(" a = FREE ,, b=team,")
	f.Add("x=pro=team")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := billing.ParsePlanMap(s)
		requireDomainError(t, err)
		if err != nil {
			return
		}
		ev := billing.Event{Type: billing.EventSubscriptionUpdated, Status: "active", PriceID: "a"}
		if plan, _ := billing.PlanFor(ev, m, ""); !billing.ValidName(plan) {
			t.Fatalf("map %q gave plan %q", s, plan)
		}
	})
}

func FuzzParsePlanOverrides(f *testing.F) {
	f.Add("free.credits=200,pro.rpm=30,team.invitee-edit=false")
	f.Add("free.credits=-1")
	f.Add("pro.=1,.rpm=2")
	f.Fuzz(func(t *testing.T, s string) {
		o, err := billing.ParsePlanOverrides(s)
		requireDomainError(t, err)
		if err != nil {
			return
		}
		plans, err := billing.DefaultPlans().With(o)
		if err != nil {
			t.Fatalf("parsed overrides %q were refused by With: %v", s, err)
		}
		for _, p := range plans.All() {
			if p.CreditsPerMonth < 0 || p.RequestsPerMinute < 1 {
				t.Fatalf("overrides %q gave %+v", s, p)
			}
		}
	})
}
