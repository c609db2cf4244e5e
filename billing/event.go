package billing

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"corkboard/auth/mailaddr"
	"corkboard/board"
)

// Event types that can change a plan. Every other type is acknowledged and
// ignored.
const (
	EventCheckoutCompleted          = "checkout.session.completed"
	EventCheckoutAsyncPaymentPassed = "checkout.session.async_payment_succeeded"
	EventSubscriptionCreated        = "customer.subscription.created"
	EventSubscriptionUpdated        = "customer.subscription.updated"
	EventSubscriptionDeleted        = "customer.subscription.deleted"
)

// Event is what Corkboard needs of a payment provider's event.
type Event struct {
	// ID is the provider's event id ("evt_…"), used to process each event at
	// most once.
	ID string
	// Type is the event type, e.g. "checkout.session.completed".
	Type string
	// Created is when the provider created the event (zero if not given).
	Created time.Time
	// CustomerID is the provider's customer id ("cus_…").
	CustomerID string
	// Email is the buyer's address, normalised (trimmed, lower case); only
	// checkout sessions carry one, and it is empty when it is not a valid
	// address.
	Email string
	// SubscriptionID is the subscription ("sub_…") the event is about.
	SubscriptionID string
	// PriceID and ProductID are the first item's price and product. A
	// checkout session event usually has neither: Stripe does not expand its
	// line items in events.
	PriceID   string
	ProductID string
	// Plan is metadata.plan of the session or subscription, trimmed and lower
	// case, as the merchant set it (not yet checked against the plan names).
	Plan string
	// Status is the subscription status ("active", "trialing", "past_due",
	// "canceled", "unpaid", …) for subscription events, and the payment
	// status ("paid", "unpaid", "no_payment_required") for checkout sessions.
	Status string
}

// ParseEvent decodes the JSON of a Stripe event (the shape
// {"id":"evt_…","type":"…","created":…,"data":{"object":{…}}}). Checkout
// session and subscription events fill the fields of Event; other types come
// back with ID, Type and Created only. It returns EINVALID when the body is
// not JSON, has no type, or the object of a known type is malformed. ID is
// empty when the body has none; ParseWebhook fills it from the headers.
func ParseEvent(body []byte) (Event, error) {
	var raw struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
		Data    struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Event{}, board.Errorf(board.EINVALID, "Billing event is not a valid JSON object.")
	}
	if raw.Type == "" {
		return Event{}, board.Errorf(board.EINVALID, "Billing event has no type.")
	}
	ev := Event{ID: raw.ID, Type: raw.Type}
	if raw.Created > 0 {
		ev.Created = time.Unix(raw.Created, 0).UTC()
	}
	var err error
	switch raw.Type {
	case EventCheckoutCompleted, EventCheckoutAsyncPaymentPassed:
		err = decodeObject(raw.Data.Object, &ev, decodeCheckoutSession)
	case EventSubscriptionCreated, EventSubscriptionUpdated, EventSubscriptionDeleted:
		err = decodeObject(raw.Data.Object, &ev, decodeSubscription)
	}
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}

// ParseWebhook is ParseEvent for a verified delivery: when the body has no
// event id (Standard Webhooks providers put it in the webhook-id header, which
// that scheme signs), the header's id is used. It returns EINVALID when there
// is no id at all, since an event without one cannot be deduplicated.
func ParseWebhook(h http.Header, body []byte) (Event, error) {
	ev, err := ParseEvent(body)
	if err != nil {
		return Event{}, err
	}
	if ev.ID == "" {
		ev.ID = h.Get(HeaderWebhookID)
	}
	if ev.ID == "" {
		return Event{}, board.Errorf(board.EINVALID, "Billing event has no id.")
	}
	return ev, nil
}

func decodeObject(obj json.RawMessage, ev *Event, decode func(json.RawMessage, *Event) error) error {
	if len(obj) == 0 || bytes.Equal(obj, []byte("null")) {
		return board.Errorf(board.EINVALID, "Billing event %s has no data.object.", ev.Type)
	}
	if err := decode(obj, ev); err != nil {
		return board.Errorf(board.EINVALID, "Billing event %s has a malformed data.object.", ev.Type)
	}
	return nil
}

// expandable is a Stripe reference: an id string, null, or (when the sender
// expanded it) an object carrying "id".
type expandable string

func (e *expandable) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*e = ""
		return nil
	}
	if len(b) > 0 && b[0] == '{' {
		var obj struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &obj); err != nil {
			return err
		}
		*e = expandable(obj.ID)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*e = expandable(s)
	return nil
}

type stripePrice struct {
	ID      string     `json:"id"`
	Product expandable `json:"product"`
}

// stripeItems is the list shape of subscription items and expanded line items.
type stripeItems struct {
	Data []struct {
		Price *stripePrice `json:"price"`
	} `json:"data"`
}

func (l *stripeItems) first(ev *Event) {
	if l == nil || len(l.Data) == 0 || l.Data[0].Price == nil {
		return
	}
	ev.PriceID = l.Data[0].Price.ID
	ev.ProductID = string(l.Data[0].Price.Product)
}

func decodeCheckoutSession(obj json.RawMessage, ev *Event) error {
	var s struct {
		Customer        expandable `json:"customer"`
		CustomerEmail   string     `json:"customer_email"`
		CustomerDetails *struct {
			Email string `json:"email"`
		} `json:"customer_details"`
		PaymentStatus string            `json:"payment_status"`
		Subscription  expandable        `json:"subscription"`
		Metadata      map[string]string `json:"metadata"`
		// Present only when the sender expanded line_items (Stripe's own
		// events never do); then the price can pick the plan.
		LineItems *stripeItems `json:"line_items"`
	}
	if err := json.Unmarshal(obj, &s); err != nil {
		return err
	}
	ev.CustomerID = string(s.Customer)
	ev.SubscriptionID = string(s.Subscription)
	ev.Status = s.PaymentStatus
	ev.Plan = metadataPlan(s.Metadata)
	email := s.CustomerEmail
	if s.CustomerDetails != nil && s.CustomerDetails.Email != "" {
		// customer_details holds what the buyer typed at checkout, which is
		// set even when the session was created without customer_email.
		email = s.CustomerDetails.Email
	}
	ev.Email = normalizeEmail(email)
	s.LineItems.first(ev)
	return nil
}

func decodeSubscription(obj json.RawMessage, ev *Event) error {
	var s struct {
		ID       string            `json:"id"`
		Customer expandable        `json:"customer"`
		Status   string            `json:"status"`
		Items    *stripeItems      `json:"items"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(obj, &s); err != nil {
		return err
	}
	ev.CustomerID = string(s.Customer)
	ev.SubscriptionID = s.ID
	ev.Status = s.Status
	ev.Plan = metadataPlan(s.Metadata)
	s.Items.first(ev)
	return nil
}

func metadataPlan(md map[string]string) string {
	return strings.ToLower(strings.TrimSpace(md["plan"]))
}

func normalizeEmail(s string) string {
	if s == "" {
		return ""
	}
	e, err := mailaddr.Canonical("email", s)
	if err != nil {
		return ""
	}
	return e
}

// PlanMap maps the provider's price and product ids to plan names, and holds
// the plan a paid checkout gets when nothing in its event names one.
type PlanMap struct {
	ids map[string]string
	// Default is the plan of a paid checkout session whose event names no
	// known price, product or metadata.plan; "" leaves the plan to the
	// subscription events.
	Default string
}

// ParsePlanMap parses a flag value such as "price_abc=pro,prod_xyz=team".
// Ids are kept as written (they are case-sensitive); plan names must be
// plans. The empty string is an empty map. It returns EINVALID naming the
// first bad entry.
func ParsePlanMap(s string) (PlanMap, error) {
	m := PlanMap{ids: map[string]string{}}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, plan, ok := strings.Cut(entry, "=")
		id, plan = strings.TrimSpace(id), strings.ToLower(strings.TrimSpace(plan))
		switch {
		case !ok || id == "":
			return PlanMap{}, board.Errorf(board.EINVALID, "Plan map entry %q must look like <price or product id>=<plan>.", entry)
		case strings.ContainsAny(id, " \t="):
			return PlanMap{}, board.Errorf(board.EINVALID, "Plan map entry %q: the id contains a space or '='.", entry)
		case !ValidName(plan):
			return PlanMap{}, board.Errorf(board.EINVALID, "Plan map entry %q: unknown plan %q (plans are %s).", entry, plan, strings.Join(Names(), ", "))
		}
		if _, dup := m.ids[id]; dup {
			return PlanMap{}, board.Errorf(board.EINVALID, "Plan map entry %q: %s is mapped twice.", entry, id)
		}
		m.ids[id] = plan
	}
	return m, nil
}

// WithDefault returns m with Default set to plan ("" for none); it returns
// EINVALID when plan is not a plan name.
func (m PlanMap) WithDefault(plan string) (PlanMap, error) {
	if plan != "" && !ValidName(plan) {
		return PlanMap{}, board.Errorf(board.EINVALID, "Default billing plan %q is not a plan (plans are %s).", plan, strings.Join(Names(), ", "))
	}
	m.Default = plan
	return m, nil
}

// Plan returns the plan a price or product id maps to.
func (m PlanMap) Plan(id string) (string, bool) {
	if id == "" {
		return "", false
	}
	p, ok := m.ids[id]
	return p, ok
}

// Len returns the number of mapped ids.
func (m PlanMap) Len() int { return len(m.ids) }

// named returns the plan an event names: its price, else its product, else
// a valid metadata.plan. The price wins because it follows upgrades and
// downgrades made in the provider's portal, where metadata may be stale.
func (m PlanMap) named(ev Event) (string, bool) {
	if p, ok := m.Plan(ev.PriceID); ok {
		return p, true
	}
	if p, ok := m.Plan(ev.ProductID); ok {
		return p, true
	}
	if ValidName(ev.Plan) {
		return ev.Plan, true
	}
	return "", false
}

// PlanFor decides what ev does to the plan of the user it is about, who is on
// current now ("" counts as free). It returns the plan the user should be on
// and whether that differs from current; when the event changes nothing it
// returns current (or free) and false.
//
//   - checkout.session.completed and …async_payment_succeeded with payment
//     status paid or no_payment_required → the named plan, else m.Default;
//     unpaid → no change (the async event or a subscription event follows).
//   - customer.subscription.deleted → free.
//   - customer.subscription.created/updated: active or trialing → the named
//     plan (no change when the price is not mapped); canceled, unpaid,
//     incomplete_expired or paused → free; past_due, incomplete and anything
//     else → no change, so a failing card keeps the plan while the provider
//     retries.
//   - every other type → no change.
func PlanFor(ev Event, m PlanMap, current string) (plan string, change bool) {
	if current == "" {
		current = Free
	}
	next, ok := decide(ev, m)
	if !ok || next == current {
		return current, false
	}
	return next, true
}

func decide(ev Event, m PlanMap) (string, bool) {
	switch ev.Type {
	case EventCheckoutCompleted, EventCheckoutAsyncPaymentPassed:
		if ev.Status != "paid" && ev.Status != "no_payment_required" {
			return "", false
		}
		if p, ok := m.named(ev); ok {
			return p, true
		}
		if m.Default != "" {
			return m.Default, true
		}
		return "", false
	case EventSubscriptionDeleted:
		return Free, true
	case EventSubscriptionCreated, EventSubscriptionUpdated:
		switch ev.Status {
		case "active", "trialing":
			return m.named(ev)
		case "canceled", "unpaid", "incomplete_expired", "paused":
			return Free, true
		}
	}
	return "", false
}
