package transport

import (
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// registerUsageRoutes adds the caller's own plan and AI credit usage.
func (s *Server) registerUsageRoutes(r chi.Router) {
	// GET /api/me/usage
	r.Get("/me/usage", s.handleUsage)
}

// usageBody is the answer of GET /api/me/usage.
type usageBody struct {
	Plan     string    `json:"plan"`
	Used     int       `json:"used"`
	Limit    int       `json:"limit"`
	ResetsAt time.Time `json:"resetsAt"`
}

// handleUsage is GET /api/me/usage: the caller's plan, the credits they
// have used this UTC month (calls charged to them as a board owner
// included), the plan's monthly limit, and when the count resets.
func (s *Server) handleUsage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	email := reqctx.Email(ctx)
	u, err := s.meter.Usage(ctx, email)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, usageBody{
		Plan:     u.Plan.Name,
		Used:     u.Used,
		Limit:    u.Plan.CreditsPerMonth,
		ResetsAt: u.ResetsAt,
	})
}
