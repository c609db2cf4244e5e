package aihttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"corkboard/aifeature"
	"corkboard/billing"
)

// The gate's decision on credits is behind a small interface
// (CreditGate), so the gate is tested with a fake instead of a Meter.

type fakeCredits struct {
	adm      billing.Admission
	refunded []billing.Charge
}

func (c *fakeCredits) AllowCall(context.Context, string) error { return nil }
func (c *fakeCredits) Admit(context.Context, string, billing.Feature) (billing.Admission, error) {
	return c.adm, nil
}
func (c *fakeCredits) Refund(_ context.Context, ch billing.Charge) error {
	c.refunded = append(c.refunded, ch)
	return nil
}

func TestAIGateRendersTheDecision(t *testing.T) {
	charge := billing.Charge{Payer: "ada@example.com", Feature: aifeature.Chat, Credits: 1}
	tests := []struct {
		name        string
		adm         billing.Admission
		handler     int // the status the AI handler answers
		wantStatus  int
		wantRefunds int
		wantBody    string
	}{
		{"AdmittedKept", billing.Admission{Charge: charge}, http.StatusOK, http.StatusOK, 0, ""},
		{"AdmittedFailedRefunded", billing.Admission{Charge: charge}, http.StatusBadGateway, http.StatusBadGateway, 1, ""},
		{"Refused", billing.Admission{Refused: &billing.QuotaError{Used: 100, Limit: 100, Plan: billing.Free, RetryAfter: 90 * time.Second}},
			http.StatusOK, http.StatusTooManyRequests, 0,
			`{"error":"Your monthly AI credits are used up.","used":100,"limit":100,"plan":"free"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			credits := &fakeCredits{adm: tt.adm}
			s := New(Deps{Credits: credits})
			ran := false
			h := s.aiGate(aifeature.Chat, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ran = true
				w.WriteHeader(tt.handler)
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/canvas/chat", nil))
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			if len(credits.refunded) != tt.wantRefunds || (tt.wantRefunds > 0 && credits.refunded[0] != charge) {
				t.Fatalf("refunded %+v, want %d of %+v", credits.refunded, tt.wantRefunds, charge)
			}
			if tt.wantBody == "" {
				if !ran {
					t.Fatal("an admitted call did not run")
				}
				return
			}
			if ran {
				t.Fatal("a refused call ran")
			}
			var got any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if gb, _ := json.Marshal(got); string(gb) != mustCanon(tt.wantBody) {
				t.Fatalf("body %s, want %s", rec.Body.Bytes(), tt.wantBody)
			}
			if ra := rec.Header().Get("Retry-After"); ra != "90" {
				t.Fatalf("Retry-After %q, want 90", ra)
			}
		})
	}
}

// mustCanon is s re-encoded with sorted keys, to compare JSON bodies.
func mustCanon(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
