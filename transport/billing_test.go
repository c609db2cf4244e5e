package transport_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/auth/authtest"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/transport"
)

// Secrets as a Stripe dashboard shows them: the whole string is the key.
const (
	billSecret    = "whsec_corkboardTestSecretCurrent0001"
	billOldSecret = "whsec_corkboardTestSecretPrevious002"
)

// billStart is the test clock's start: mid-month, so that only the rollover
// test crosses a month.
var billStart = time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)

// billOptions configures newBillEnv.
type billOptions struct {
	provider    string // "" is stripe
	secrets     string // "" leaves the webhook unconfigured
	planMap     string
	defaultPlan string
	plans       billing.Plans // zero: the defaults
	start       time.Time     // zero: billStart
}

// billEnv is a whole server on real parts: bbolt in a temp folder, login
// through an in-process SMTP sink, the hub, and a settable clock for the
// webhook's tolerance, the quota month and the AI rate limit. Three stand-in
// AI routes sit behind the real session check and quota gate.
type billEnv struct {
	url   string
	db    *persist.DB
	sink  *authtest.Sink
	clock *authtest.Clock
	logs  *authtest.LogBuffer
}

func newBillEnv(t *testing.T, o billOptions) *billEnv {
	t.Helper()
	logger, logs := authtest.NewLogger(t)
	db, err := persist.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sink := authtest.NewSink(t)
	mailer, err := auth.NewMailer(sink.URL(), "", "", logger)
	if err != nil {
		t.Fatal(err)
	}
	authSvc := auth.New(db, mailer, auth.Config{}, logger)
	authSvc.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		authSvc.Close(ctx)
	})
	h := hub.New(db, hub.Options{Logger: logger, SweepEvery: -1})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Close(ctx)
	})

	start := o.start
	if start.IsZero() {
		start = billStart
	}
	clock := authtest.NewClock(start)
	var verifier billing.Verifier
	if o.secrets != "" {
		if verifier, err = billing.NewVerifier(o.provider, billing.ParseSecrets(o.secrets)); err != nil {
			t.Fatal(err)
		}
	}
	planMap, err := billing.ParsePlanMap(o.planMap)
	if err != nil {
		t.Fatal(err)
	}
	if planMap, err = planMap.WithDefault(o.defaultPlan); err != nil {
		t.Fatal(err)
	}
	srv := transport.New(transport.Config{PublicURL: "http://corkboard.test", DefaultPlan: billing.Free}, transport.Deps{
		DB:      db,
		Auth:    authSvc,
		Hub:     h,
		Plans:   o.plans,
		Billing: transport.Billing{Verifier: verifier, PlanMap: planMap},
		Now:     clock.Now,
	}, logger)

	mux := http.NewServeMux()
	mux.Handle("POST /test/ai/chat", srv.AIRouteForTest(billing.FeatureChat, false, http.HandlerFunc(billFakeModel)))
	mux.Handle("POST /test/ai/document", srv.AIRouteForTest(billing.FeatureDocumentToNotes, false, http.HandlerFunc(billFakeModel)))
	mux.Handle("POST /test/ai/rewrite", srv.AIRouteForTest(billing.FeatureNotesRewrite, true, http.HandlerFunc(billFakeModel)))
	mux.Handle("/", srv)
	ts := httptest.NewUnstartedServer(mux)
	// The panic case is expected; keep net/http's report of it out of the output.
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Start()
	t.Cleanup(ts.Close)
	return &billEnv{url: ts.URL, db: db, sink: sink, clock: clock, logs: logs}
}

// billFakeModel stands in for an AI handler; ?outcome= picks what the model does.
func billFakeModel(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	switch r.URL.Query().Get("outcome") {
	case "", "ok":
		// Echo the body, so a test can see the handler got it untouched.
		answer(http.StatusOK, map[string]string{"rewritten": "done", "echo": string(body)})
	case "stream-broken":
		// The model started answering, then the stream died.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: {\"type\":\"text-delta\",\"delta\":\"Hel\"}\n\n")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	case "unavailable":
		answer(http.StatusServiceUnavailable, map[string]string{"error": "The AI model cannot be reached."})
	case "bad-answer":
		answer(http.StatusBadGateway, map[string]string{"error": "The AI model's answer was not valid."})
	case "invalid":
		answer(http.StatusBadRequest, map[string]string{"error": "instruction is required.", "field": "instruction"})
	case "panic":
		panic("the model exploded")
	case "silent":
		// Writes nothing at all.
	}
}

// billResp is an answer read whole.
type billResp struct {
	status int
	header http.Header
	body   []byte
}

// object decodes the body as a JSON object.
func (r billResp) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// do sends a request with the session cookie (when not "") and headers.
func (e *billEnv) do(t *testing.T, method, path, session string, body []byte, header http.Header) billResp {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: transport.SessionCookie, Value: session})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return billResp{status: resp.StatusCode, header: resp.Header, body: data}
}

// doJSON is do with v encoded as the body.
func (e *billEnv) doJSON(t *testing.T, method, path, session string, v any) billResp {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return e.do(t, method, path, session, b, nil)
}

// login signs email in through send-otp, the SMTP sink and verify-otp, and
// returns the session token.
func (e *billEnv) login(t *testing.T, email string) string {
	t.Helper()
	if r := e.doJSON(t, "POST", "/api/auth/send-otp", "", map[string]string{"email": email}); r.status != http.StatusOK {
		t.Fatalf("send-otp %s: %d %s", email, r.status, r.body)
	}
	code := e.sink.WaitCode(t, email)
	b, _ := json.Marshal(map[string]string{"email": email, "code": code})
	req, _ := http.NewRequest("POST", e.url+"/api/auth/verify-otp", bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == transport.SessionCookie && c.Value != "" {
			return c.Value
		}
	}
	t.Fatalf("verify-otp %s: %d and no session cookie", email, resp.StatusCode)
	return ""
}

// usage is GET /api/me/usage for the session.
func (e *billEnv) usage(t *testing.T, session string) map[string]any {
	t.Helper()
	r := e.do(t, "GET", "/api/me/usage", session, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /api/me/usage: %d %s", r.status, r.body)
	}
	return r.object(t)
}

// storedPlan is the plan stored for email, "" when there is no such user.
func (e *billEnv) storedPlan(t *testing.T, email string) string {
	t.Helper()
	u, err := e.db.FindUser(context.Background(), email)
	if board.ErrorCode(err) == board.ENOTFOUND {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	return u.Plan
}

// webhook posts body to the webhook with the given headers.
func (e *billEnv) webhook(t *testing.T, body []byte, h http.Header) billResp {
	t.Helper()
	return e.do(t, "POST", "/api/billing/webhook", "", body, h)
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

// billWantObject fails unless got is exactly want.
func billWantObject(t *testing.T, r billResp, status int, want map[string]any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status=%d, want %d (body %s)", r.status, status, r.body)
	}
	if got := r.object(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("body=%v, want %v", got, want)
	}
}

func billKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
	env := newBillEnv(t, billOptions{secrets: billSecret, planMap: billPlanMap, defaultPlan: billing.Pro})
	ada := env.login(t, "ada@example.com")
	if got := env.usage(t, ada)["plan"]; got != billing.Free {
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
		r := env.webhook(t, body, billStripeSigned(billSecret, env.clock.Now().Add(-20*time.Second), body))
		billWantObject(t, r, http.StatusOK, st.answer)
		if got := env.usage(t, ada)["plan"]; got != st.wantPlan {
			t.Fatalf("after %s: plan=%v, want %s", st.fixture, got, st.wantPlan)
		}
		env.clock.Advance(time.Minute)
	}
}

// TestWebhookBeforeFirstLogin: a buyer who never logged in gets an account
// holding the plan (metadata.plan here), and finds it at first login.
func TestWebhookBeforeFirstLogin(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, planMap: billPlanMap, defaultPlan: billing.Pro})
	body := billFixture(t, "checkout_session_completed_metadata.json")
	billWantObject(t, env.webhook(t, body, billStripeSigned(billSecret, env.clock.Now(), body)), http.StatusOK, billOK)
	grace := env.login(t, "grace@example.org")
	if got := env.usage(t, grace)["plan"]; got != billing.Team {
		t.Fatalf("plan=%v, want team", got)
	}
}

// TestWebhookUnknownCustomer: a subscription event for a customer no
// checkout introduced is acknowledged, ignored and logged, and not recorded,
// so Stripe's redelivery after the checkout event applies.
func TestWebhookUnknownCustomer(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, planMap: billPlanMap, defaultPlan: billing.Pro})
	sub := billFixture(t, "customer_subscription_updated.json")
	billWantObject(t, env.webhook(t, sub, billStripeSigned(billSecret, env.clock.Now(), sub)), http.StatusOK, billIgnored)
	if !strings.Contains(env.logs.String(), "unknown customer") {
		t.Errorf("no log line about the unknown customer:\n%s", env.logs.String())
	}
	if got := env.storedPlan(t, "ada@example.com"); got != "" {
		t.Fatalf("a user was created: plan %q", got)
	}
	checkout := billFixture(t, "checkout_session_completed.json")
	billWantObject(t, env.webhook(t, checkout, billStripeSigned(billSecret, env.clock.Now(), checkout)), http.StatusOK, billOK)
	billWantObject(t, env.webhook(t, sub, billStripeSigned(billSecret, env.clock.Now(), sub)), http.StatusOK, billOK)
	if got := env.storedPlan(t, "ada@example.com"); got != billing.Team {
		t.Fatalf("plan after redelivery=%q, want team", got)
	}
}

// TestWebhookReplay: a second delivery of a processed event id answers 200
// and changes nothing, even after the plan was changed by other means.
func TestWebhookReplay(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, planMap: billPlanMap, defaultPlan: billing.Pro})
	body := billFixture(t, "checkout_session_completed.json")
	billWantObject(t, env.webhook(t, body, billStripeSigned(billSecret, env.clock.Now(), body)), http.StatusOK, billOK)
	if got := env.storedPlan(t, "ada@example.com"); got != billing.Pro {
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
		billWantObject(t, env.webhook(t, body, billStripeSigned(billSecret, at, body)), http.StatusOK, billReplayed)
	}
	if got := env.storedPlan(t, "ada@example.com"); got != billing.Team {
		t.Fatalf("plan after replay=%q, want team", got)
	}
}

// TestWebhookTolerance: the signed timestamp may be 300 s away from the
// server's clock either way, not 301; a refused delivery changes nothing.
func TestWebhookTolerance(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, defaultPlan: billing.Pro})
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
			r := env.webhook(t, body, billStripeSigned(billSecret, tt.sent, body))
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			want := ""
			if tt.status == http.StatusOK {
				want = billing.Pro
			} else if msg, _ := r.object(t)["error"].(string); !strings.Contains(msg, "timestamp") {
				t.Errorf("error=%q does not say the timestamp is the problem", msg)
			}
			if got := env.storedPlan(t, email); got != want {
				t.Fatalf("stored plan=%q, want %q", got, want)
			}
		})
	}
}

// TestWebhookSecretRotation: with old and new secrets configured, either
// signs; Stripe's header carrying one v1 per secret passes; a third does not.
func TestWebhookSecretRotation(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billOldSecret + ", " + billSecret, defaultPlan: billing.Pro})
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
			r := env.webhook(t, body, tt.header(body))
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			if changed := env.storedPlan(t, email) != ""; changed != (tt.status == http.StatusOK) {
				t.Fatalf("user created=%v with status %d", changed, r.status)
			}
		})
	}
}

// TestWebhookRefusals: deliveries that are not genuine, or cannot be read,
// change nothing.
func TestWebhookRefusals(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, defaultPlan: billing.Pro})
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
			r := env.webhook(t, tt.body, tt.header)
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			if got := billKeys(r.object(t)); !reflect.DeepEqual(got, []string{"error"}) {
				t.Errorf("body keys=%v, want [error]", got)
			}
			if got := env.storedPlan(t, "mallory@example.com"); got != "" {
				t.Fatalf("a refused delivery created a user on %q", got)
			}
		})
	}
}

// TestWebhookNotConfigured: without a secret the endpoint says so with 503
// and changes nothing, whatever is sent.
func TestWebhookNotConfigured(t *testing.T) {
	env := newBillEnv(t, billOptions{defaultPlan: billing.Pro})
	body := billCheckout(t, "evt_unconfigured", "ada@example.com")
	r := env.webhook(t, body, billStripeSigned(billSecret, env.clock.Now(), body))
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("status=%d, want 503 (%s)", r.status, r.body)
	}
	if msg, _ := r.object(t)["error"].(string); !strings.Contains(msg, "not configured") {
		t.Errorf("error=%q does not say the webhook is not configured", msg)
	}
	if got := env.storedPlan(t, "ada@example.com"); got != "" {
		t.Fatalf("user created on %q", got)
	}
}

// TestWebhookCrossSiteAllowed: the webhook is called by the provider's
// servers, so the cross-site protection that refuses browsers' cross-site
// POSTs (shown on send-otp) does not apply to it.
func TestWebhookCrossSiteAllowed(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, defaultPlan: billing.Pro})
	crossSite := http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}

	otp := env.do(t, "POST", "/api/auth/send-otp", "", []byte(`{"email":"ada@example.com"}`), crossSite)
	if otp.status != http.StatusForbidden {
		t.Fatalf("cross-site send-otp status=%d, want 403: the protection is not on", otp.status)
	}

	body := billCheckout(t, "evt_cross_site", "ada@example.com")
	h := billStripeSigned(billSecret, env.clock.Now(), body)
	for k, v := range crossSite {
		h[k] = v
	}
	billWantObject(t, env.webhook(t, body, h), http.StatusOK, billOK)
	if got := env.storedPlan(t, "ada@example.com"); got != billing.Pro {
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
	env := newBillEnv(t, billOptions{provider: billing.ProviderStandard, secrets: secret, defaultPlan: billing.Team})
	now := env.clock.Now()
	body := []byte(`{"type":"checkout.session.completed","data":{"object":{"customer":"cus_std","customer_email":"std@example.com","payment_status":"paid"}}}`)

	billWantObject(t, env.webhook(t, body, billStripeSigned(billSecret, now, body)), http.StatusBadRequest, map[string]any{"error": "webhook-id header is missing."})
	billWantObject(t, env.webhook(t, body, billStandardSigned(t, secret, "msg_1", now, body)), http.StatusOK, billOK)
	if got := env.storedPlan(t, "std@example.com"); got != billing.Team {
		t.Fatalf("plan=%q, want team", got)
	}
	billWantObject(t, env.webhook(t, body, billStandardSigned(t, secret, "msg_1", now, body)), http.StatusOK, billReplayed)
	billWantObject(t, env.webhook(t, body, billStandardSigned(t, secret, "msg_2", now.Add(-301*time.Second), body)), http.StatusBadRequest,
		map[string]any{"error": "Signature timestamp is more than 5 minutes from the server's clock."})
}

// billPushBody is a valid push that renames the board.
var billPushBody = []byte(`{"clientVersion":0,"board":{"name":"Plans","updatedAt":"2026-11-05T09:00:00Z"},` +
	`"notes":{"upserted":[],"deleted":[]},"trackerItems":{"upserted":[],"deleted":[]}}`)

// TestInviteeEditsAfterUpgrade: an invitee on free is view-only (push 403,
// canEdit false); the checkout event lets them push; cancelling takes it
// back.
func TestInviteeEditsAfterUpgrade(t *testing.T) {
	env := newBillEnv(t, billOptions{secrets: billSecret, planMap: billPlanMap, defaultPlan: billing.Pro})
	owner := env.login(t, "owner@example.com")
	ada := env.login(t, "ada@example.com")
	const boardID = "plans-board"
	if r := env.do(t, "POST", "/api/boards/"+boardID+"/access", owner, nil, nil); r.status != http.StatusOK {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	if r := env.doJSON(t, "POST", "/api/boards/"+boardID+"/invite", owner, map[string]string{"email": "ada@example.com"}); r.status != http.StatusOK {
		t.Fatalf("invite: %d %s", r.status, r.body)
	}
	check := func(step string, wantPush int, wantCanEdit bool) {
		t.Helper()
		if r := env.do(t, "POST", "/api/boards/"+boardID+"/sync", ada, billPushBody, nil); r.status != wantPush {
			t.Fatalf("%s: push status=%d, want %d (%s)", step, r.status, wantPush, r.body)
		}
		r := env.do(t, "GET", "/api/boards/"+boardID+"/access", ada, nil, nil)
		if got := r.object(t)["canEdit"]; got != wantCanEdit {
			t.Fatalf("%s: canEdit=%v, want %v", step, got, wantCanEdit)
		}
	}
	check("on free", http.StatusForbidden, false)

	checkout := billFixture(t, "checkout_session_completed.json")
	billWantObject(t, env.webhook(t, checkout, billStripeSigned(billSecret, env.clock.Now(), checkout)), http.StatusOK, billOK)
	check("after checkout", http.StatusOK, true)

	deleted := billFixture(t, "customer_subscription_deleted.json")
	billWantObject(t, env.webhook(t, deleted, billStripeSigned(billSecret, env.clock.Now(), deleted)), http.StatusOK, billOK)
	check("after cancellation", http.StatusForbidden, false)
}
