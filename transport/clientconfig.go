package transport

import (
	"corkboard/transport/respond"
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) registerClientConfigRoutes(r chi.Router) {
	// GET /api/config — public facts the browser client needs before login.
	r.Get("/config", s.handleClientConfig)
}

// clientConfig is the answer of GET /api/config.
type clientConfig struct {
	// LoginCodesInLog is true when no SMTP server is configured: login codes
	// are in the server log and <data>/outbox/, not in anyone's mailbox.
	LoginCodesInLog bool `json:"loginCodesInLog"`
}

func (s *Server) handleClientConfig(w http.ResponseWriter, r *http.Request) {
	respond.JSON(w, http.StatusOK, clientConfig{LoginCodesInLog: s.cfg.LoginCodesInLog})
}
