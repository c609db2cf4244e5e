package transport_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"corkboard/aifeature"
	"corkboard/billing"
	"corkboard/transport"
)

// withStandInAI mounts three stand-in AI routes behind the real session
// check and quota gate: /test/ai/chat (1 credit) and /test/ai/document (5)
// charged to the caller, /test/ai/rewrite (1) to the board's owner.
func withStandInAI() option {
	return withRoutes(func(api *transport.Server, mux *http.ServeMux) {
		mux.Handle("POST /test/ai/chat", api.AIRouteForTest(aifeature.Chat, false, http.HandlerFunc(standInModel)))
		mux.Handle("POST /test/ai/document", api.AIRouteForTest(aifeature.DocumentToNotes, false, http.HandlerFunc(standInModel)))
		mux.Handle("POST /test/ai/rewrite", api.AIRouteForTest(aifeature.NotesRewrite, true, http.HandlerFunc(standInModel)))
	})
}

// standInModel stands in for an AI handler; ?outcome= picks what the model does.
func standInModel(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	switch r.URL.Query().Get("outcome") {
	case "", "ok":
		// Echo the body, so a test can see the handler got it untouched.
		reply(http.StatusOK, map[string]string{"rewritten": "done", "echo": string(body)})
	case "stream-broken":
		// The model started answering, then the stream died.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: {\"type\":\"text-delta\",\"delta\":\"Hel\"}\n\n")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	case "unavailable":
		reply(http.StatusServiceUnavailable, map[string]string{"error": "The AI model cannot be reached."})
	case "bad-answer":
		reply(http.StatusBadGateway, map[string]string{"error": "The AI model's answer was not valid."})
	case "invalid":
		reply(http.StatusBadRequest, map[string]string{"error": "instruction is required.", "field": "instruction"})
	case "panic":
		panic("the model exploded")
	case "silent":
		// Writes nothing at all.
	}
}

// standIn calls a stand-in AI route: chat costs 1 credit, document 5.
func (e *env) standIn(session, route, outcome string) answer {
	e.tb.Helper()
	return e.do("POST", "/test/ai/"+route+"?outcome="+outcome, session, []byte(`{"boardId":"b"}`))
}

// TestAIQuotaEdges: the call that reaches the quota exactly passes; the next
// is 429 with the spec's body, and charges nothing.
func TestAIQuotaEdges(t *testing.T) {
	env := newEnv(t, withClock(billStart), withStandInAI(), withPlans("free.credits=8,free.rpm=1000"))
	ada := env.login("ada@example.com")
	steps := []struct {
		route    string
		status   int
		wantUsed int
	}{
		{"document", http.StatusOK, 5}, // 5 of 8
		{"document", 429, 5},           // 10 > 8: refused, nothing charged
		{"chat", http.StatusOK, 6},
		{"chat", http.StatusOK, 7},
		{"chat", http.StatusOK, 8}, // reaches the limit exactly: allowed
		{"chat", 429, 8},           // 9 > 8
		{"document", 429, 8},
	}
	for i, st := range steps {
		r := env.standIn(ada, st.route, "ok")
		if st.status == 429 {
			r.wantQuota(t, st.wantUsed, 8, billing.Free)
		} else if r.status != st.status {
			t.Fatalf("step %d (%s): status=%d, want %d (%s)", i, st.route, r.status, st.status, r.body)
		}
		if got := env.used(ada); got != st.wantUsed {
			t.Fatalf("step %d (%s): used=%v, want %d", i, st.route, got, st.wantUsed)
		}
	}
}

// TestAIQuotaRaisedByUpgrade: a user stopped by free's quota can go on as
// soon as the upgrade event arrives, without waiting for the month's end.
func TestAIQuotaRaisedByUpgrade(t *testing.T) {
	env := newEnv(t, withClock(billStart), withStandInAI(), withPlans("free.credits=1,free.rpm=1000,pro.credits=3,pro.rpm=1000"), withBilling("", billSecret, billPlanMap, billing.Pro))
	ada := env.login("ada@example.com")
	if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusOK {
		t.Fatalf("first call: %d %s", r.status, r.body)
	}
	env.standIn(ada, "chat", "ok").wantQuota(t, 1, 1, billing.Free)
	body := billFixture(t, "checkout_session_completed.json")
	env.webhook(body, billStripeSigned(billSecret, env.clock.Now(), body)).wantExactObject(t, http.StatusOK, billOK)
	for i := 2; i <= 3; i++ {
		if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusOK {
			t.Fatalf("call %d after upgrade: %d %s", i, r.status, r.body)
		}
	}
	env.standIn(ada, "chat", "ok").wantQuota(t, 3, 3, billing.Pro)
}

// TestAIRefund: a call whose handler answers an error (the model never
// answered) gives its credits back; once a stream has begun, the call stays
// charged even if the stream then fails.
func TestAIRefund(t *testing.T) {
	env := newEnv(t, withClock(billStart), withStandInAI(), withPlans("free.credits=100,free.rpm=1000"))
	ada := env.login("ada@example.com")
	tests := []struct {
		outcome    string
		wantStatus int // 0: the connection breaks
		charged    bool
	}{
		{"ok", http.StatusOK, true},
		{"unavailable", http.StatusServiceUnavailable, false},
		{"bad-answer", http.StatusBadGateway, false},
		{"invalid", http.StatusBadRequest, false},
		{"silent", http.StatusOK, false},
		{"panic", 0, false},
		{"stream-broken", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.outcome, func(t *testing.T) {
			before := env.used(ada)
			req, _ := http.NewRequest("POST", env.srv.URL+"/test/ai/document?outcome="+tt.outcome, nil)
			req.AddCookie(&http.Cookie{Name: "session", Value: ada})
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				// A broken stream may still deliver its header; reading the
				// body is what fails then.
				var sink json.RawMessage
				derr := json.NewDecoder(resp.Body).Decode(&sink)
				resp.Body.Close()
				if tt.wantStatus != 0 && resp.StatusCode != tt.wantStatus {
					t.Fatalf("status=%d, want %d", resp.StatusCode, tt.wantStatus)
				}
				if tt.wantStatus == 0 && derr == nil {
					t.Fatalf("status=%d with a whole body, want a broken connection", resp.StatusCode)
				}
			} else if tt.wantStatus != 0 {
				t.Fatalf("request failed: %v", err)
			}
			want := before
			if tt.charged {
				want += 5
			}
			if got := env.used(ada); got != want {
				t.Fatalf("used=%v after %s, want %v", got, tt.outcome, want)
			}
		})
	}
}

// TestAIRateLimit: past the plan's requests per minute, 429 with
// Retry-After (an ordinary error body, not the quota one), and no credits
// charged; the bucket refills with the clock.
func TestAIRateLimit(t *testing.T) {
	env := newEnv(t, withClock(billStart), withStandInAI(), withPlans("free.credits=1000,free.rpm=3"))
	ada := env.login("ada@example.com")
	bob := env.login("bob@example.com")
	for i := 1; i <= 3; i++ {
		if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, r.status, r.body)
		}
	}
	r := env.standIn(ada, "chat", "ok")
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("4th call status=%d, want 429", r.status)
	}
	// 3 per minute refill one every 20 s.
	if got := r.header.Get("Retry-After"); got != "20" {
		t.Errorf("Retry-After=%q, want 20", got)
	}
	if k := keys(r.object(t)); !reflect.DeepEqual(k, []string{"error"}) {
		t.Errorf("rate-limit body keys=%v, want [error]", k)
	}
	if got := env.used(ada); got != 3 {
		t.Fatalf("used=%v, want 3: a refused call was charged", got)
	}
	// Another user has a bucket of their own.
	if r := env.standIn(bob, "chat", "ok"); r.status != http.StatusOK {
		t.Fatalf("bob: %d %s", r.status, r.body)
	}
	env.clock.Advance(19 * time.Second)
	if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
		t.Fatalf("after 19 s: status=%d Retry-After=%q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	env.clock.Advance(time.Second)
	if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusOK {
		t.Fatalf("after 20 s: %d %s", r.status, r.body)
	}
}

// TestAIQuotaMonthRollover: the quota resets at the first instant of the
// next UTC month, as resetsAt says.
func TestAIQuotaMonthRollover(t *testing.T) {
	env := newEnv(t, withClock(time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)), withStandInAI(), withPlans("free.credits=2,free.rpm=1000"))
	ada := env.login("ada@example.com")
	for range 2 {
		if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	r := env.standIn(ada, "chat", "ok")
	r.wantQuota(t, 2, 2, billing.Free)
	if got := r.header.Get("Retry-After"); got != "60" {
		t.Errorf("Retry-After=%q, want 60 (seconds to 1 December 00:00 UTC)", got)
	}
	if got := env.usage(ada)["resetsAt"]; got != "2026-12-01T00:00:00Z" {
		t.Fatalf("resetsAt=%v", got)
	}

	env.clock.Advance(59*time.Second + 999*time.Millisecond) // 23:59:59.999
	env.standIn(ada, "chat", "ok").wantQuota(t, 2, 2, billing.Free)
	env.clock.Advance(time.Millisecond) // 00:00:00 on 1 December
	if r := env.standIn(ada, "chat", "ok"); r.status != http.StatusOK {
		t.Fatalf("first call of December: %d %s", r.status, r.body)
	}
	want := map[string]any{"plan": "free", "used": float64(1), "limit": float64(2), "resetsAt": "2027-01-01T00:00:00Z"}
	if got := env.usage(ada); !reflect.DeepEqual(got, want) {
		t.Fatalf("usage=%v, want %v", got, want)
	}
}

// TestAIOwnerPays: notes/rewrite charges the board's owner, at the owner's
// plan, whoever calls; the caller must have access to the board.
func TestAIOwnerPays(t *testing.T) {
	env := newEnv(t, withClock(billStart), withStandInAI(), withPlans("free.credits=2,free.rpm=1000,pro.credits=50"))
	owner := env.login("owner@example.com")
	eve := env.login("eve@example.com")
	const boardID = "owner-pays"
	env.claimAs(owner, boardID)
	// ada may edit (pro); vic, on the free plan, may only view.
	ada := env.invite(owner, boardID, "ada@example.com", billing.Pro)
	vic := env.invite(owner, boardID, "vic@example.com", billing.Free)
	rewrite := func(session, body string) answer {
		return env.do("POST", "/test/ai/rewrite", session, []byte(body))
	}
	body := `{"instruction":"shorter","boardId":"owner-pays","content":"Some long text."}`

	r := rewrite(ada, body)
	if r.status != http.StatusOK {
		t.Fatalf("invitee's rewrite: %d %s", r.status, r.body)
	}
	if got := r.object(t)["echo"]; got != body {
		t.Fatalf("the handler got body %q, want %q", got, body)
	}
	if got, want := env.used(owner), 1; got != want {
		t.Fatalf("owner used=%v, want %v", got, want)
	}
	if got := env.used(ada); got != 0 {
		t.Fatalf("invitee used=%v, want 0", got)
	}
	if r := rewrite(owner, body); r.status != http.StatusOK {
		t.Fatalf("owner's rewrite: %d %s", r.status, r.body)
	}
	// The owner's quota (free: 2) is spent: the invitee hears about the
	// owner's plan and usage.
	rewrite(ada, body).wantQuota(t, 2, 2, billing.Free)

	refusals := []struct {
		name, session, body string
		status              int
	}{
		{"ErrNoAccess", eve, body, http.StatusForbidden},
		{"ErrViewOnly", vic, body, http.StatusForbidden},
		{"ErrUnclaimedBoard", ada, `{"boardId":"nobody-owns-this"}`, http.StatusNotFound},
		{"ErrNoBoardID", ada, `{"instruction":"shorter"}`, http.StatusBadRequest},
		{"ErrBoardIDNotString", ada, `{"boardId":7}`, http.StatusBadRequest},
		{"ErrBoardIDTwice", ada, `{"boardId":"nobody-owns-this","boardId":"owner-pays"}`, http.StatusBadRequest},
		{"ErrNotJSON", ada, `boardId=owner-pays`, http.StatusBadRequest},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			if r := rewrite(tt.session, tt.body); r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			for _, s := range []string{ada, eve, vic} {
				if got := env.used(s); got != 0 {
					t.Fatalf("a refused call charged the caller: used=%v", got)
				}
			}
			if got := env.used(owner); got != 2 {
				t.Fatalf("owner used=%v, want 2", got)
			}
		})
	}
}

// TestUsageEndpoint: GET /api/me/usage answers exactly plan, used, limit,
// resetsAt, and needs a session.
func TestUsageEndpoint(t *testing.T) {
	env := newEnv(t, withClock(billStart))
	if r := env.do("GET", "/api/me/usage", "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("without a session: %d, want 401", r.status)
	}
	ada := env.login("ada@example.com")
	want := map[string]any{"plan": "free", "used": float64(0), "limit": float64(100), "resetsAt": "2026-12-01T00:00:00Z"}
	if got := env.usage(ada); !reflect.DeepEqual(got, want) {
		t.Fatalf("usage=%v, want %v", got, want)
	}
}
