package billing_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/billing"
)

func TestParseEvent_Fixtures(t *testing.T) {
	tests := []struct {
		file string
		want billing.Event
	}{
		{"checkout_session_completed.json", billing.Event{
			ID:             "evt_1QfXk2Lk3mN8pQrS0aBcDeFg",
			Type:           billing.EventCheckoutCompleted,
			Created:        time.Unix(1794052800, 0).UTC(),
			CustomerID:     "cus_RkT9uVwXyZ0aB1",
			Email:          "ada@example.com", // customer_details.email, normalised
			SubscriptionID: "sub_1QfXk1Lk3mN8pQrSoPqRsTuV",
			Status:         "paid",
		}},
		{"checkout_session_completed_metadata.json", billing.Event{
			ID:             "evt_1QfYa9Lk3mN8pQrS4tUvWxYz",
			Type:           billing.EventCheckoutCompleted,
			Created:        time.Unix(1794056400, 0).UTC(),
			CustomerID:     "cus_SmU0vWxYz1bC2d",
			Email:          "grace@example.org", // customer_email; customer_details is null
			SubscriptionID: "sub_1QfYa8Lk3mN8pQrSaBcDeFgH",
			Plan:           "team",
			Status:         "paid",
		}},
		{"checkout_session_completed_unpaid.json", billing.Event{
			ID:             "evt_1QfZc3Lk3mN8pQrS9hIjKlMn",
			Type:           billing.EventCheckoutCompleted,
			Created:        time.Unix(1794060000, 0).UTC(),
			CustomerID:     "cus_TnV1wXyZa2cD3e",
			Email:          "linus@example.net",
			SubscriptionID: "sub_1QfZc2Lk3mN8pQrSeFgHiJkL",
			Status:         "unpaid",
		}},
		{"customer_subscription_created.json", billing.Event{
			ID:             "evt_1QfXk3Lk3mN8pQrS1bCdEfGh",
			Type:           billing.EventSubscriptionCreated,
			Created:        time.Unix(1794060600, 0).UTC(),
			CustomerID:     "cus_RkT9uVwXyZ0aB1",
			SubscriptionID: "sub_1QfXk1Lk3mN8pQrSoPqRsTuV",
			PriceID:        "price_1Qa0ProMonthlyEUR",
			ProductID:      "prod_Ra0CorkboardPro",
			Status:         "active",
		}},
		{"customer_subscription_updated.json", billing.Event{
			ID:             "evt_1QgA11Lk3mN8pQrS2cDeFgHi",
			Type:           billing.EventSubscriptionUpdated,
			Created:        time.Unix(1794060600, 0).UTC(),
			CustomerID:     "cus_RkT9uVwXyZ0aB1",
			SubscriptionID: "sub_1QfXk1Lk3mN8pQrSoPqRsTuV",
			PriceID:        "price_1Qa1TeamMonthlyEUR",
			ProductID:      "prod_Ra1CorkboardTeam",
			Status:         "active",
		}},
		{"customer_subscription_updated_past_due.json", billing.Event{
			ID:             "evt_1QhB22Lk3mN8pQrS3dEfGhIj",
			Type:           billing.EventSubscriptionUpdated,
			Created:        time.Unix(1794060600, 0).UTC(),
			CustomerID:     "cus_RkT9uVwXyZ0aB1",
			SubscriptionID: "sub_1QfXk1Lk3mN8pQrSoPqRsTuV",
			PriceID:        "price_1Qa0ProMonthlyEUR",
			ProductID:      "prod_Ra0CorkboardPro",
			Status:         "past_due",
		}},
		{"customer_subscription_deleted.json", billing.Event{
			ID:             "evt_1QiC33Lk3mN8pQrS4eFgHiJk",
			Type:           billing.EventSubscriptionDeleted,
			Created:        time.Unix(1794060600, 0).UTC(),
			CustomerID:     "cus_RkT9uVwXyZ0aB1",
			SubscriptionID: "sub_1QfXk1Lk3mN8pQrSoPqRsTuV",
			PriceID:        "price_1Qa0ProMonthlyEUR",
			ProductID:      "prod_Ra0CorkboardPro",
			Status:         "canceled",
		}},
		// Unknown types decode with only the envelope.
		{"invoice_paid.json", billing.Event{
			ID:      "evt_1QjD44Lk3mN8pQrS5fGhIjKl",
			Type:    "invoice.paid",
			Created: time.Unix(1796731200, 0).UTC(),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := billing.ParseEvent(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("ParseEvent mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEvent_Shapes(t *testing.T) {
	tests := []struct {
		name string
		body string
		want billing.Event
	}{
		{"ExpandedCustomerAndProduct",
			`{"id":"evt_1","type":"customer.subscription.updated","data":{"object":{"id":"sub_1","customer":{"id":"cus_9","object":"customer"},"status":"trialing","items":{"data":[{"price":{"id":"price_1","product":{"id":"prod_1","object":"product"}}}]}}}}`,
			billing.Event{ID: "evt_1", Type: billing.EventSubscriptionUpdated, CustomerID: "cus_9", SubscriptionID: "sub_1", PriceID: "price_1", ProductID: "prod_1", Status: "trialing"}},
		{"FirstItemWins",
			`{"id":"evt_2","type":"customer.subscription.created","data":{"object":{"customer":"cus_1","status":"active","items":{"data":[{"price":{"id":"price_a","product":"prod_a"}},{"price":{"id":"price_b","product":"prod_b"}}]}}}}`,
			billing.Event{ID: "evt_2", Type: billing.EventSubscriptionCreated, CustomerID: "cus_1", PriceID: "price_a", ProductID: "prod_a", Status: "active"}},
		{"NoItems",
			`{"id":"evt_3","type":"customer.subscription.deleted","data":{"object":{"customer":"cus_1","status":"canceled","items":{"data":[]}}}}`,
			billing.Event{ID: "evt_3", Type: billing.EventSubscriptionDeleted, CustomerID: "cus_1", Status: "canceled"}},
		{"SubscriptionMetadataPlan",
			`{"id":"evt_4","type":"customer.subscription.created","data":{"object":{"customer":"cus_1","status":"active","metadata":{"plan":" PRO "}}}}`,
			billing.Event{ID: "evt_4", Type: billing.EventSubscriptionCreated, CustomerID: "cus_1", Plan: "pro", Status: "active"}},
		{"CheckoutExpandedLineItems",
			`{"id":"evt_5","type":"checkout.session.completed","data":{"object":{"customer":"cus_1","customer_email":"a@b.io","payment_status":"paid","line_items":{"object":"list","data":[{"price":{"id":"price_x","product":"prod_x"}}]}}}}`,
			billing.Event{ID: "evt_5", Type: billing.EventCheckoutCompleted, CustomerID: "cus_1", Email: "a@b.io", PriceID: "price_x", ProductID: "prod_x", Status: "paid"}},
		{"CheckoutDetailsBeatCustomerEmail",
			`{"id":"evt_6","type":"checkout.session.completed","data":{"object":{"customer":null,"customer_email":"old@b.io","customer_details":{"email":"New@B.io"},"payment_status":"paid"}}}`,
			billing.Event{ID: "evt_6", Type: billing.EventCheckoutCompleted, Email: "new@b.io", Status: "paid"}},
		{"CheckoutEmptyDetailsFallBack",
			`{"id":"evt_7","type":"checkout.session.completed","data":{"object":{"customer_email":"x@y.io","customer_details":{"email":null},"payment_status":"no_payment_required"}}}`,
			billing.Event{ID: "evt_7", Type: billing.EventCheckoutCompleted, Email: "x@y.io", Status: "no_payment_required"}},
		{"CheckoutInvalidEmailDropped",
			`{"id":"evt_8","type":"checkout.session.completed","data":{"object":{"customer_email":"Ada <ada@example.com>","payment_status":"paid"}}}`,
			billing.Event{ID: "evt_8", Type: billing.EventCheckoutCompleted, Status: "paid"}},
		{"CheckoutEmailCanonical", // the account's canonical form: NFC, A-label domain (auth/mailaddr)
			`{"id":"evt_12","type":"checkout.session.completed","data":{"object":{"customer_email":"Jose\u0301@B\u00fccher.example","payment_status":"paid"}}}`,
			billing.Event{ID: "evt_12", Type: billing.EventCheckoutCompleted, Email: "jos\u00e9@xn--bcher-kva.example", Status: "paid"}},
		{"CheckoutInvisibleEmailDropped",
			`{"id":"evt_13","type":"checkout.session.completed","data":{"object":{"customer_email":"ada@example.com\u200b","payment_status":"paid"}}}`,
			billing.Event{ID: "evt_13", Type: billing.EventCheckoutCompleted, Status: "paid"}},
		{"AsyncPaymentSucceeded",
			`{"id":"evt_9","type":"checkout.session.async_payment_succeeded","data":{"object":{"customer":"cus_2","customer_details":{"email":"s@e.pa"},"payment_status":"paid"}}}`,
			billing.Event{ID: "evt_9", Type: billing.EventCheckoutAsyncPaymentPassed, CustomerID: "cus_2", Email: "s@e.pa", Status: "paid"}},
		{"CheckoutNoEmail",
			`{"id":"evt_11","type":"checkout.session.completed","data":{"object":{"customer":"cus_4","customer_email":null,"customer_details":null,"payment_status":"paid"}}}`,
			billing.Event{ID: "evt_11", Type: billing.EventCheckoutCompleted, CustomerID: "cus_4", Status: "paid"}},
		{"UnknownTypeWithoutData",
			`{"id":"evt_10","type":"customer.created"}`,
			billing.Event{ID: "evt_10", Type: "customer.created"}},
		{"NoID",
			`{"type":"customer.subscription.deleted","data":{"object":{"customer":"cus_3"}}}`,
			billing.Event{Type: billing.EventSubscriptionDeleted, CustomerID: "cus_3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := billing.ParseEvent([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("ParseEvent mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEvent_Err(t *testing.T) {
	tests := []struct {
		name, body, wantMsg string
	}{
		{"Empty", ``, "not a valid JSON object"},
		{"NotJSON", `id=evt_1`, "not a valid JSON object"},
		{"Array", `[]`, "not a valid JSON object"},
		{"IDNotString", `{"id":1,"type":"x"}`, "not a valid JSON object"},
		{"NoType", `{"id":"evt_1","data":{"object":{}}}`, "no type"},
		{"KnownTypeNoObject", `{"id":"evt_1","type":"customer.subscription.updated","data":{}}`, "no data.object"},
		{"KnownTypeNullObject", `{"id":"evt_1","type":"checkout.session.completed","data":{"object":null}}`, "no data.object"},
		{"ObjectNotObject", `{"id":"evt_1","type":"checkout.session.completed","data":{"object":"cs_1"}}`, "malformed data.object"},
		{"CustomerNumber", `{"id":"evt_1","type":"customer.subscription.updated","data":{"object":{"customer":42}}}`, "malformed data.object"},
		{"ItemsNotList", `{"id":"evt_1","type":"customer.subscription.updated","data":{"object":{"items":[1]}}}`, "malformed data.object"},
		{"MetadataNotStrings", `{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"metadata":{"plan":1}}}}`, "malformed data.object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := billing.ParseEvent([]byte(tt.body))
			assertInvalid(t, err, tt.wantMsg)
		})
	}
}

func TestParseWebhook(t *testing.T) {
	withID := http.Header{}
	withID.Set("webhook-id", "msg_abc")
	tests := []struct {
		name   string
		h      http.Header
		body   string
		wantID string
	}{
		{"BodyID", withID, `{"id":"evt_1","type":"invoice.paid"}`, "evt_1"},
		{"HeaderID", withID, `{"type":"invoice.paid","data":{"object":{}}}`, "msg_abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := billing.ParseWebhook(tt.h, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := ev.ID; got != tt.wantID {
				t.Fatalf("ID=%q, want %q", got, tt.wantID)
			}
		})
	}
	t.Run("ErrNoID", func(t *testing.T) {
		_, err := billing.ParseWebhook(http.Header{}, []byte(`{"type":"invoice.paid"}`))
		assertInvalid(t, err, "no id")
	})
	t.Run("ErrBadBody", func(t *testing.T) {
		_, err := billing.ParseWebhook(withID, []byte(`{`))
		assertInvalid(t, err, "not a valid JSON object")
	})
}

func TestParsePlanMap(t *testing.T) {
	m, err := billing.ParsePlanMap(" price_abc=pro, prod_xyz=TEAM,price_free=free,")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Len(), 3; got != want {
		t.Fatalf("Len=%d, want %d", got, want)
	}
	lookups := []struct {
		id, want string
		ok       bool
	}{
		{"price_abc", billing.Pro, true},
		{"prod_xyz", billing.Team, true},
		{"price_free", billing.Free, true},
		{"PRICE_ABC", "", false}, // provider ids are case-sensitive
		{"price_other", "", false},
		{"", "", false},
	}
	for _, tt := range lookups {
		got, ok := m.Plan(tt.id)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Plan(%q)=%q, %v; want %q, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
	if m.Default != "" {
		t.Errorf("Default=%q, want none", m.Default)
	}

	empty, err := billing.ParsePlanMap("")
	if err != nil || empty.Len() != 0 {
		t.Fatalf(`ParsePlanMap("")=%d ids, %v; want 0, nil`, empty.Len(), err)
	}
}

func TestParsePlanMap_Err(t *testing.T) {
	tests := []struct {
		in, wantMsg string
	}{
		{"price_abc", "must look like"},
		{"=pro", "must look like"},
		{"price_abc=", "unknown plan"},
		{"price_abc=gold", "unknown plan"},
		{"price_abc=pro,prod_xyz=platinum", "unknown plan"},
		{"price abc=pro", "contains a space"},
		{"price_abc=pro=team", "unknown plan"},
		{"price_abc=pro,price_abc=team", "mapped twice"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := billing.ParsePlanMap(tt.in)
			assertInvalid(t, err, tt.wantMsg)
		})
	}
}

func TestPlanMap_WithDefault(t *testing.T) {
	m, err := billing.ParsePlanMap("price_abc=pro")
	if err != nil {
		t.Fatal(err)
	}
	withDefault, err := m.WithDefault(billing.Team)
	if err != nil {
		t.Fatal(err)
	}
	if withDefault.Default != billing.Team {
		t.Fatalf("Default=%q, want team", withDefault.Default)
	}
	if p, _ := withDefault.Plan("price_abc"); p != billing.Pro {
		t.Fatalf("WithDefault lost the ids: Plan(price_abc)=%q", p)
	}
	if none, err := m.WithDefault(""); err != nil || none.Default != "" {
		t.Fatalf(`WithDefault("")=%q, %v`, none.Default, err)
	}
	_, err = m.WithDefault("gold")
	assertInvalid(t, err, "not a plan")
}

func TestPlanFor(t *testing.T) {
	m, err := billing.ParsePlanMap("price_pro=pro,prod_team=team,price_team=team")
	if err != nil {
		t.Fatal(err)
	}
	withDefault, err := m.WithDefault(billing.Pro)
	if err != nil {
		t.Fatal(err)
	}
	checkout := func(status, price, product, plan string) billing.Event {
		return billing.Event{ID: "evt_c", Type: billing.EventCheckoutCompleted, Email: "a@b.io", Status: status, PriceID: price, ProductID: product, Plan: plan}
	}
	sub := func(typ, status, price, product string) billing.Event {
		return billing.Event{ID: "evt_s", Type: typ, CustomerID: "cus_1", Status: status, PriceID: price, ProductID: product}
	}
	const (
		created = billing.EventSubscriptionCreated
		updated = billing.EventSubscriptionUpdated
		deleted = billing.EventSubscriptionDeleted
	)
	tests := []struct {
		name       string
		ev         billing.Event
		m          billing.PlanMap
		current    string
		wantPlan   string
		wantChange bool
	}{
		// checkout sessions
		{"CheckoutPaidMetadataPlan", checkout("paid", "", "", "team"), m, "free", "team", true},
		{"CheckoutPaidDefault", checkout("paid", "", "", ""), withDefault, "free", "pro", true},
		{"CheckoutPaidNoDefault", checkout("paid", "", "", ""), m, "free", "free", false},
		{"CheckoutPaidUnknownMetadataUsesDefault", checkout("paid", "", "", "gold"), withDefault, "free", "pro", true},
		{"CheckoutPriceBeatsMetadata", checkout("paid", "price_team", "", "pro"), m, "free", "team", true},
		{"CheckoutProductMapped", checkout("paid", "price_unknown", "prod_team", ""), m, "free", "team", true},
		{"CheckoutNoPaymentRequired", checkout("no_payment_required", "", "", "pro"), m, "free", "pro", true},
		{"CheckoutUnpaid", checkout("unpaid", "price_pro", "", "pro"), withDefault, "free", "free", false},
		{"CheckoutNoStatus", checkout("", "price_pro", "", ""), withDefault, "free", "free", false},
		{"CheckoutAlreadyOnPlan", checkout("paid", "price_pro", "", ""), m, "pro", "pro", false},
		{"CheckoutCurrentEmptyIsFree", checkout("paid", "", "", "free"), m, "", "free", false},
		{"AsyncPaymentSucceeded", billing.Event{Type: billing.EventCheckoutAsyncPaymentPassed, Status: "paid", Plan: "team"}, m, "free", "team", true},
		// subscriptions
		{"CreatedActivePrice", sub(created, "active", "price_pro", "prod_x"), m, "free", "pro", true},
		{"UpdatedTrialingProduct", sub(updated, "trialing", "price_x", "prod_team"), m, "free", "team", true},
		{"UpdatedUpgrade", sub(updated, "active", "price_team", ""), m, "pro", "team", true},
		{"UpdatedDowngrade", sub(updated, "active", "price_pro", ""), m, "team", "pro", true},
		{"UpdatedActiveUnmapped", sub(updated, "active", "price_x", "prod_x"), withDefault, "team", "team", false},
		{"UpdatedActiveMetadataPlan", billing.Event{Type: updated, Status: "active", PriceID: "price_x", Plan: "team"}, m, "free", "team", true},
		{"UpdatedSamePlan", sub(updated, "active", "price_pro", ""), m, "pro", "pro", false},
		{"UpdatedCanceled", sub(updated, "canceled", "price_pro", ""), m, "pro", "free", true},
		{"UpdatedUnpaid", sub(updated, "unpaid", "price_pro", ""), m, "pro", "free", true},
		{"UpdatedIncompleteExpired", sub(updated, "incomplete_expired", "price_pro", ""), m, "pro", "free", true},
		{"UpdatedPaused", sub(updated, "paused", "price_pro", ""), m, "team", "free", true},
		{"UpdatedPastDueKeepsPlan", sub(updated, "past_due", "price_pro", ""), m, "pro", "pro", false},
		{"CreatedIncompleteWaits", sub(created, "incomplete", "price_pro", ""), m, "free", "free", false},
		{"UpdatedUnknownStatus", sub(updated, "something_new", "price_pro", ""), m, "team", "team", false},
		{"DeletedToFree", sub(deleted, "canceled", "price_team", ""), m, "team", "free", true},
		{"DeletedAlreadyFree", sub(deleted, "canceled", "price_team", ""), m, "free", "free", false},
		// everything else
		{"UnknownType", billing.Event{Type: "invoice.paid", Status: "paid", PriceID: "price_team"}, withDefault, "pro", "pro", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, change := billing.PlanFor(tt.ev, tt.m, tt.current)
			if plan != tt.wantPlan || change != tt.wantChange {
				t.Fatalf("PlanFor=%q, %v; want %q, %v", plan, change, tt.wantPlan, tt.wantChange)
			}
		})
	}
}

// TestWebhookFlow takes each fixture exactly as Stripe sends it, signs it
// with the configured secret, verifies it and decides the plan, as the
// webhook handler will.
func TestWebhookFlow(t *testing.T) {
	m, err := billing.ParsePlanMap("price_1Qa0ProMonthlyEUR=pro,prod_Ra1CorkboardTeam=team")
	if err != nil {
		t.Fatal(err)
	}
	m, err = m.WithDefault(billing.Pro)
	if err != nil {
		t.Fatal(err)
	}
	v := billing.NewStripeVerifier(billing.ParseSecrets(stripeOldSecret + "," + stripeSecret))
	tests := []struct {
		file, current, wantPlan string
		wantChange              bool
	}{
		{"checkout_session_completed.json", "free", "pro", true},
		{"checkout_session_completed_metadata.json", "free", "team", true},
		{"checkout_session_completed_unpaid.json", "free", "free", false},
		{"customer_subscription_created.json", "free", "pro", true},
		{"customer_subscription_updated.json", "pro", "team", true},
		{"customer_subscription_updated_past_due.json", "pro", "pro", false},
		{"customer_subscription_deleted.json", "pro", "free", true},
		{"invoice_paid.json", "pro", "pro", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body := readFixture(t, tt.file)
			sent := now.Add(-90 * time.Second)
			if err := v.Verify(stripeHeader(stripeSecret, sent.Unix(), body), body, now); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			ev, err := billing.ParseWebhook(http.Header{}, body)
			if err != nil {
				t.Fatalf("ParseWebhook: %v", err)
			}
			plan, change := billing.PlanFor(ev, m, tt.current)
			if plan != tt.wantPlan || change != tt.wantChange {
				t.Fatalf("PlanFor=%q, %v; want %q, %v", plan, change, tt.wantPlan, tt.wantChange)
			}
		})
	}
}
