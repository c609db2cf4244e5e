package transport_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/board"
	"corkboard/persist"
)

// Secrets as a Stripe dashboard shows them: the whole string is the key.
const (
	billSecret    = "whsec_corkboardTestSecretCurrent0001"
	billOldSecret = "whsec_corkboardTestSecretPrevious002"
)

// billStart is the test clock's start: mid-month, so that only the rollover
// test crosses a month.
var billStart = time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)

// storedPlan is the plan stored for email, "" when there is no such user.
func (e *env) storedPlan(email string) string {
	e.tb.Helper()
	u, err := e.db.FindUser(context.Background(), email)
	if board.ErrorCode(err) == board.ENOTFOUND {
		return ""
	} else if err != nil {
		e.tb.Fatal(err)
	}
	return u.Plan
}

// webhook posts body to the webhook with the given headers.
func (e *env) webhook(body []byte, h http.Header) answer {
	e.tb.Helper()
	return e.do("POST", "/api/billing/webhook", "", body, h)
}

// billStripeSig is Stripe's v1 signature: hex HMAC-SHA256 of "<t>.<body>".
func billStripeSig(secret string, at time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", at.Unix())
	mac.Write(body)
	return fmt.Sprintf("%x", mac.Sum(nil))
}

// billStripeSigned is the Stripe-Signature header Stripe would send at `at`.
func billStripeSigned(secret string, at time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set("Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", at.Unix(), billStripeSig(secret, at, body)))
	return h
}

// fixture reads an event exactly as Stripe sends it.
func billFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "billing", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// billCheckout is the checkout fixture re-addressed: its own event id and
// buyer, so that each case is a new event.
func billCheckout(t *testing.T, eventID, email string) []byte {
	t.Helper()
	b := billFixture(t, "checkout_session_completed.json")
	b = bytes.ReplaceAll(b, []byte("evt_1QfXk2Lk3mN8pQrS0aBcDeFg"), []byte(eventID))
	b = bytes.ReplaceAll(b, []byte("Ada@Example.com"), []byte(email))
	return b
}

var (
	billOK       = map[string]any{"ok": true}
	billIgnored  = map[string]any{"ok": true, "ignored": true}
	billReplayed = map[string]any{"ok": true, "replayed": true}
)

// The fixtures' prices and products, mapped as an operator would.
const billPlanMap = "price_1Qa1TeamMonthlyEUR=team,prod_Ra0CorkboardPro=pro"

// TestWebhookStripeEventsMovePlan plays a subscription's life, each event
// exactly as Stripe sends it, signed with the configured secret, and watches
// the buyer's plan through their own GET /api/me/usage.
func TestWebhookStripeEventsMovePlan(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	ada := env.login("ada@example.com")
	if got := env.usage(ada)["plan"]; got != billing.Free {
		t.Fatalf("plan before paying=%v, want free", got)
	}
	steps := []struct {
		fixture  string
		answer   map[string]any
		wantPlan string
	}{
		// Paid checkout, no plan named: -billing-default-plan; remembers cus_….
		{"checkout_session_completed.json", billOK, billing.Pro},
		// Upgrade in the portal: found by customer id, price mapped to team.
		{"customer_subscription_updated.json", billOK, billing.Team},
		// Card failing: the provider retries, the plan stays.
		{"customer_subscription_updated_past_due.json", billOK, billing.Team},
		// Not a plan event.
		{"invoice_paid.json", billIgnored, billing.Team},
		{"customer_subscription_deleted.json", billOK, billing.Free},
	}
	for _, st := range steps {
		body := billFixture(t, st.fixture)
		r := env.webhook(body, billStripeSigned(billSecret, env.clock.Now().Add(-20*time.Second), body))
		r.wantExactObject(t, http.StatusOK, st.answer)
		if got := env.usage(ada)["plan"]; got != st.wantPlan {
			t.Fatalf("after %s: plan=%v, want %s", st.fixture, got, st.wantPlan)
		}
		env.clock.Advance(time.Minute)
	}
}

// TestWebhookBeforeFirstLogin: a buyer who never logged in gets an account
// holding the plan (metadata.plan here), and finds it at first login.
func TestWebhookBeforeFirstLogin(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	body := billFixture(t, "checkout_session_completed_metadata.json")
	env.webhook(body, billStripeSigned(billSecret, env.clock.Now(), body)).wantExactObject(t, http.StatusOK, billOK)
	grace := env.login("grace@example.org")
	if got := env.usage(grace)["plan"]; got != billing.Team {
		t.Fatalf("plan=%v, want team", got)
	}
}

// TestWebhookUnknownCustomer: a subscription event for a customer no
// checkout introduced is acknowledged, ignored and logged, and not recorded,
// so Stripe's redelivery after the checkout event applies.
func TestWebhookUnknownCustomer(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	sub := billFixture(t, "customer_subscription_updated.json")
	env.webhook(sub, billStripeSigned(billSecret, env.clock.Now(), sub)).wantExactObject(t, http.StatusOK, billIgnored)
	if !strings.Contains(env.logs.String(), "unknown customer") {
		t.Errorf("no log line about the unknown customer:\n%s", env.logs.String())
	}
	if got := env.storedPlan("ada@example.com"); got != "" {
		t.Fatalf("a user was created: plan %q", got)
	}
	checkout := billFixture(t, "checkout_session_completed.json")
	env.webhook(checkout, billStripeSigned(billSecret, env.clock.Now(), checkout)).wantExactObject(t, http.StatusOK, billOK)
	env.webhook(sub, billStripeSigned(billSecret, env.clock.Now(), sub)).wantExactObject(t, http.StatusOK, billOK)
	if got := env.storedPlan("ada@example.com"); got != billing.Team {
		t.Fatalf("plan after redelivery=%q, want team", got)
	}
}

// TestWebhookReplay: a second delivery of a processed event id answers 200
// and changes nothing, even after the plan was changed by other means.
func TestWebhookReplay(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	body := billFixture(t, "checkout_session_completed.json")
	env.webhook(body, billStripeSigned(billSecret, env.clock.Now(), body)).wantExactObject(t, http.StatusOK, billOK)
	if got := env.storedPlan("ada@example.com"); got != billing.Pro {
		t.Fatalf("plan=%q, want pro", got)
	}
	// An operator moves Ada to team; a replay must not put her back on pro.
	if _, err := env.db.UpdateUser(context.Background(), "ada@example.com", billing.Free, func(u *persist.User) error {
		u.Plan = billing.Team
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(time.Minute)
	for _, at := range []time.Time{env.clock.Now(), env.clock.Now().Add(-time.Minute)} {
		env.webhook(body, billStripeSigned(billSecret, at, body)).wantExactObject(t, http.StatusOK, billReplayed)
	}
	if got := env.storedPlan("ada@example.com"); got != billing.Team {
		t.Fatalf("plan after replay=%q, want team", got)
	}
}

// TestWebhookTolerance: the signed timestamp may be 300 s away from the
// server's clock either way, not 301; a refused delivery changes nothing.
func TestWebhookTolerance(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, "", billing.Pro))
	now := env.clock.Now()
	tests := []struct {
		name   string
		sent   time.Time
		status int
	}{
		{"OK300sOld", now.Add(-300 * time.Second), http.StatusOK},
		{"OK300sAhead", now.Add(300 * time.Second), http.StatusOK},
		{"OKNow", now, http.StatusOK},
		{"Err301sOld", now.Add(-301 * time.Second), http.StatusBadRequest},
		{"Err301sAhead", now.Add(301 * time.Second), http.StatusBadRequest},
		{"ErrDayOld", now.Add(-24 * time.Hour), http.StatusBadRequest},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			email := fmt.Sprintf("buyer%d@example.com", i)
			body := billCheckout(t, fmt.Sprintf("evt_tolerance_%d", i), email)
			r := env.webhook(body, billStripeSigned(billSecret, tt.sent, body))
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			want := ""
			if tt.status == http.StatusOK {
				want = billing.Pro
			} else if msg, _ := r.object(t)["error"].(string); !strings.Contains(msg, "timestamp") {
				t.Errorf("error=%q does not say the timestamp is the problem", msg)
			}
			if got := env.storedPlan(email); got != want {
				t.Fatalf("stored plan=%q, want %q", got, want)
			}
		})
	}
}

// TestWebhookSecretRotation: with old and new secrets configured, either
// signs; Stripe's header carrying one v1 per secret passes; a third does not.
func TestWebhookSecretRotation(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billOldSecret+", "+billSecret, "", billing.Pro))
	now := env.clock.Now()
	tests := []struct {
		name   string
		header func(body []byte) http.Header
		status int
	}{
		{"OKOldSecret", func(b []byte) http.Header { return billStripeSigned(billOldSecret, now, b) }, http.StatusOK},
		{"OKNewSecret", func(b []byte) http.Header { return billStripeSigned(billSecret, now, b) }, http.StatusOK},
		{"OKTwoSignatures", func(b []byte) http.Header {
			h := http.Header{}
			h.Set("Stripe-Signature", fmt.Sprintf("t=%d,v1=%s,v1=%s,v0=%s", now.Unix(),
				billStripeSig("whsec_retired", now, b), billStripeSig(billSecret, now, b), billStripeSig(billSecret, now, b)))
			return h
		}, http.StatusOK},
		{"ErrUnknownSecret", func(b []byte) http.Header { return billStripeSigned("whsec_someoneElse", now, b) }, http.StatusBadRequest},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			email := fmt.Sprintf("rotate%d@example.com", i)
			body := billCheckout(t, fmt.Sprintf("evt_rotation_%d", i), email)
			r := env.webhook(body, tt.header(body))
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			if changed := env.storedPlan(email) != ""; changed != (tt.status == http.StatusOK) {
				t.Fatalf("user created=%v with status %d", changed, r.status)
			}
		})
	}
}

// TestWebhookRefusals: deliveries that are not genuine, or cannot be read,
// change nothing.
func TestWebhookRefusals(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, "", billing.Pro))
	now := env.clock.Now()
	body := billCheckout(t, "evt_refused", "mallory@example.com")
	tampered := bytes.Replace(body, []byte(`"payment_status": "paid"`), []byte(`"payment_status": "paid" `), 1)
	huge := append(billCheckout(t, "evt_huge", "mallory@example.com"), bytes.Repeat([]byte(" "), billing.MaxWebhookBytes)...)
	notEvent := []byte(`{"hello":"world"}`)
	tests := []struct {
		name   string
		body   []byte
		header http.Header
		status int
	}{
		{"ErrNoHeader", body, http.Header{}, http.StatusBadRequest},
		{"ErrSignedOtherBody", tampered, billStripeSigned(billSecret, now, body), http.StatusBadRequest},
		{"ErrGarbledHeader", body, http.Header{"Stripe-Signature": {"v1=abc"}}, http.StatusBadRequest},
		{"ErrNotHex", body, http.Header{"Stripe-Signature": {fmt.Sprintf("t=%d,v1=zz", now.Unix())}}, http.StatusBadRequest},
		{"ErrStandardHeadersOnStripe", body, billStandardSigned(t, "whsec_"+base64.StdEncoding.EncodeToString([]byte(billSecret)), "msg_1", now, body), http.StatusBadRequest},
		{"ErrSignedButNotAnEvent", notEvent, billStripeSigned(billSecret, now, notEvent), http.StatusBadRequest},
		{"ErrTooLarge", huge, billStripeSigned(billSecret, now, huge), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.webhook(tt.body, tt.header)
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			if got := keys(r.object(t)); !reflect.DeepEqual(got, []string{"error"}) {
				t.Errorf("body keys=%v, want [error]", got)
			}
			if got := env.storedPlan("mallory@example.com"); got != "" {
				t.Fatalf("a refused delivery created a user on %q", got)
			}
		})
	}
}

// TestWebhookNotConfigured: without a secret the endpoint says so with 503
// and changes nothing, whatever is sent.
func TestWebhookNotConfigured(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", "", "", billing.Pro))
	body := billCheckout(t, "evt_unconfigured", "ada@example.com")
	r := env.webhook(body, billStripeSigned(billSecret, env.clock.Now(), body))
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("status=%d, want 503 (%s)", r.status, r.body)
	}
	if msg, _ := r.object(t)["error"].(string); !strings.Contains(msg, "not configured") {
		t.Errorf("error=%q does not say the webhook is not configured", msg)
	}
	if got := env.storedPlan("ada@example.com"); got != "" {
		t.Fatalf("user created on %q", got)
	}
}

// TestWebhookCrossSiteAllowed: the webhook is called by the provider's
// servers, so the cross-site protection that refuses browsers' cross-site
// POSTs (shown on send-otp) does not apply to it.
func TestWebhookCrossSiteAllowed(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, "", billing.Pro))
	crossSite := http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}

	otp := env.do("POST", "/api/auth/send-otp", "", []byte(`{"email":"ada@example.com"}`), crossSite)
	if otp.status != http.StatusForbidden {
		t.Fatalf("cross-site send-otp status=%d, want 403: the protection is not on", otp.status)
	}

	body := billCheckout(t, "evt_cross_site", "ada@example.com")
	h := billStripeSigned(billSecret, env.clock.Now(), body)
	for k, v := range crossSite {
		h[k] = v
	}
	env.webhook(body, h).wantExactObject(t, http.StatusOK, billOK)
	if got := env.storedPlan("ada@example.com"); got != billing.Pro {
		t.Fatalf("plan=%q, want pro", got)
	}
}

// billStandardSigned makes the Standard Webhooks headers for body.
func billStandardSigned(t *testing.T, secret, id string, at time.Time, body []byte) http.Header {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, at.Unix())
	mac.Write(body)
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", fmt.Sprint(at.Unix()))
	h.Set("webhook-signature", "v1a,ignored v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return h
}

// TestWebhookStandardProvider: with -billing-provider standard, the Standard
// Webhooks headers are checked instead, and the webhook-id dedups when the
// body has no id.
func TestWebhookStandardProvider(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("corkboard standard webhooks key"))
	env := newEnv(t, withClock(billStart), withBilling(billing.ProviderStandard, secret, "", billing.Team))
	now := env.clock.Now()
	body := []byte(`{"type":"checkout.session.completed","data":{"object":{"customer":"cus_std","customer_email":"std@example.com","payment_status":"paid"}}}`)

	env.webhook(body, billStripeSigned(billSecret, now, body)).wantExactObject(t, http.StatusBadRequest, map[string]any{"error": "webhook-id header is missing."})
	env.webhook(body, billStandardSigned(t, secret, "msg_1", now, body)).wantExactObject(t, http.StatusOK, billOK)
	if got := env.storedPlan("std@example.com"); got != billing.Team {
		t.Fatalf("plan=%q, want team", got)
	}
	env.webhook(body, billStandardSigned(t, secret, "msg_1", now, body)).wantExactObject(t, http.StatusOK, billReplayed)
	env.webhook(body, billStandardSigned(t, secret, "msg_2", now.Add(-301*time.Second), body)).wantExactObject(t, http.StatusBadRequest, map[string]any{"error": "Signature timestamp is more than 5 minutes from the server's clock."})
}

// billPushBody is a valid push that renames the board.
var billPushBody = []byte(`{"clientVersion":0,"board":{"name":"Plans","updatedAt":"2026-11-05T09:00:00Z"},` +
	`"notes":{"upserted":[],"deleted":[]},"trackerItems":{"upserted":[],"deleted":[]}}`)

// TestInviteeEditsAfterUpgrade: an invitee on free is view-only (push 403,
// canEdit false); the checkout event lets them push; cancelling takes it
// back.
func TestInviteeEditsAfterUpgrade(t *testing.T) {
	env := newEnv(t, withClock(billStart), withBilling("", billSecret, billPlanMap, billing.Pro))
	owner := env.login("owner@example.com")
	ada := env.login("ada@example.com")
	const boardID = "plans-board"
	env.claimAs(owner, boardID)
	env.addInvite(owner, boardID, "ada@example.com")
	check := func(step string, wantPush int, wantCanEdit bool) {
		t.Helper()
		if r := env.do("POST", "/api/boards/"+boardID+"/sync", ada, billPushBody); r.status != wantPush {
			t.Fatalf("%s: push status=%d, want %d (%s)", step, r.status, wantPush, r.body)
		}
		r := env.do("GET", "/api/boards/"+boardID+"/access", ada, nil)
		if got := r.object(t)["canEdit"]; got != wantCanEdit {
			t.Fatalf("%s: canEdit=%v, want %v", step, got, wantCanEdit)
		}
	}
	check("on free", http.StatusForbidden, false)

	checkout := billFixture(t, "checkout_session_completed.json")
	env.webhook(checkout, billStripeSigned(billSecret, env.clock.Now(), checkout)).wantExactObject(t, http.StatusOK, billOK)
	check("after checkout", http.StatusOK, true)

	deleted := billFixture(t, "customer_subscription_deleted.json")
	env.webhook(deleted, billStripeSigned(billSecret, env.clock.Now(), deleted)).wantExactObject(t, http.StatusOK, billOK)
	check("after cancellation", http.StatusForbidden, false)
}
