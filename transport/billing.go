package transport

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"corkboard/billing"
	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/persist"
	"corkboard/transport/reqbody"
	"corkboard/transport/respond"
)

// Billing configures the payment provider's webhook.
type Billing struct {
	// Verifier checks webhook signatures (billing.NewVerifier); nil, or one
	// holding no secret, makes the webhook answer 503.
	Verifier billing.Verifier
	// PlanMap maps the provider's prices and products to plans, and holds
	// the plan of a paid checkout that names none.
	PlanMap billing.PlanMap
}

// billingState is the Server's share of payments: the webhook
// configuration. Plans, credits, the AI rate limit and canEdit are the
// Meter's (Server.meter).
type billingState struct {
	webhook Billing
}

// now is the server's clock, in UTC: the Meter's, so that the quota month,
// the webhook's tolerance and the AI rate limit read the same time.
func (s *Server) now() time.Time { return s.meter.Now() }

// registerWebhookRoutes adds the payment provider's webhook. It needs no
// session, and the Origin check exempts it (crossOriginProtection): a
// provider's servers send no browser headers.
func (s *Server) registerWebhookRoutes(r chi.Router) {
	// POST /api/billing/webhook
	r.Post("/billing/webhook", s.handleBillingWebhook)
}

// webhookAnswer is the webhook's 200 body: ok, plus whether the event was a
// replay or was ignored (unknown type or unknown customer).
type webhookAnswer struct {
	OK       bool `json:"ok"`
	Replayed bool `json:"replayed,omitempty"`
	Ignored  bool `json:"ignored,omitempty"`
}

// planEvent reports whether events of type t can change a plan; the others
// are acknowledged and ignored.
func planEvent(t string) bool {
	switch t {
	case billing.EventCheckoutCompleted, billing.EventCheckoutAsyncPaymentPassed,
		billing.EventSubscriptionCreated, billing.EventSubscriptionUpdated, billing.EventSubscriptionDeleted:
		return true
	}
	return false
}

// handleBillingWebhook is POST /api/billing/webhook. Order: 503 when no
// secret is configured (before the body is read), the raw body cut at
// billing.MaxWebhookBytes (413), the signature on those exact bytes (400),
// then decoding (400) and the plan change, applied at most once per event id.
// Everything after a valid signature that is not a storage failure answers
// 200, because the provider retries any other status for days.
func (s *Server) handleBillingWebhook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := s.billing.webhook.Verifier
	if v == nil {
		s.writeError(w, r, board.Errorf(board.EUNAVAILABLE, "Billing webhook is not configured: no signing secret is set (-billing-secret)."))
		return
	}
	body, err := reqbody.Read(w, r, billing.MaxWebhookBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := v.Verify(r.Header, body, s.now()); err != nil {
		// The reason is logged for the operator (a wrong secret, a skewed
		// clock); it names no secret.
		s.log.WarnContext(ctx, "billing webhook refused", slog.String("reason", board.ErrorMessage(err)))
		s.writeError(w, r, err)
		return
	}
	ev, err := billing.ParseWebhook(r.Header, body)
	if err != nil {
		s.log.WarnContext(ctx, "billing webhook: signed body is not an event", slog.String("reason", board.ErrorMessage(err)))
		s.writeError(w, r, err)
		return
	}
	evAttrs := slog.Group("event", slog.String("id", ev.ID), slog.String("type", ev.Type))
	if !planEvent(ev.Type) {
		// Not recorded as processed: it changes nothing, so a replay of it
		// is harmless, and the ledger stays as small as the plan changes.
		s.log.DebugContext(ctx, "billing event ignored: type changes no plan", evAttrs)
		respond.JSON(w, http.StatusOK, webhookAnswer{OK: true, Ignored: true})
		return
	}

	var from, to string
	changed := false
	u, replayed, err := s.db.ApplyBillingEvent(ctx, persist.BillingUpdate{
		EventID:    ev.ID,
		CustomerID: ev.CustomerID,
		Email:      ev.Email,
		Plan: func(current string) (string, bool) {
			if current == "" {
				current = s.meter.PlanNamed("").Name
			}
			from = current
			to, changed = billing.PlanFor(ev, s.billing.webhook.PlanMap, current)
			return to, changed
		},
	}, s.meter.PlanNamed("").Name)
	switch {
	case board.ErrorCode(err) == board.ENOTFOUND:
		// A subscription event for a customer no checkout introduced (bought
		// outside Corkboard, or the checkout event was lost). Not recorded:
		// should the checkout event arrive later, a redelivery of this one
		// can still apply.
		s.log.WarnContext(ctx, "billing event ignored: unknown customer", evAttrs, slog.String("customer", ev.CustomerID))
		respond.JSON(w, http.StatusOK, webhookAnswer{OK: true, Ignored: true})
		return
	case err != nil:
		s.writeError(w, r, err)
		return
	case replayed:
		s.log.InfoContext(ctx, "billing event replayed: nothing changed", evAttrs)
		respond.JSON(w, http.StatusOK, webhookAnswer{OK: true, Replayed: true})
		return
	}
	// The new plan counts from the user's next request, not after the
	// Meter's cache forgets the old one.
	s.meter.Invalidate(cache.Plan, u.Email)
	s.announce(cache.Plan, u.Email)
	if changed {
		s.PlanChanged(ctx, u.Email)
	}
	if changed {
		s.log.InfoContext(ctx, "plan changed by billing event", evAttrs,
			slog.String("email", u.Email), slog.String("from", from), slog.String("to", to))
	} else {
		s.log.InfoContext(ctx, "billing event applied: plan unchanged", evAttrs,
			slog.String("email", u.Email), slog.String("plan", u.Plan))
	}
	respond.JSON(w, http.StatusOK, webhookAnswer{OK: true})
}
