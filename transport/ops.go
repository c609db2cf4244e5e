package transport

import (
	"context"
	"corkboard/transport/respond"
	"log/slog"
	"net/http"
	"time"
)

// readyTimeout bounds the store's answer to a readiness check: a store
// slower than this is not ready, and the probe must not hang.
const readyTimeout = 2 * time.Second

// opsBody is the answer of /healthz and /readyz.
type opsBody struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// serveOps answers the operations endpoints and reports whether path was
// one. They are served before the router: no session, no cross-origin
// check, and no request log line, since a load balancer probes every few
// seconds (a failed readiness check logs its own warning).
//
//	GET /healthz  200 while the process runs
//	GET /readyz   200 while the store answers; 503 when it does not, or
//	              once the server drains for shutdown (Drain)
//	/metrics      404 here: metrics are served on their own listener
//	              (cmd/corkboard -metrics-addr), never on the public one
func (s *Server) serveOps(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/healthz", "/readyz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			respond.JSON(w, http.StatusMethodNotAllowed, respond.ErrorBody{Error: "Method not allowed on this endpoint."})
			return true
		}
		if r.URL.Path == "/healthz" {
			respond.JSON(w, http.StatusOK, opsBody{Status: "ok"})
		} else {
			s.ready(w, r)
		}
		return true
	case "/metrics":
		respond.JSON(w, http.StatusNotFound, respond.ErrorBody{Error: "No such endpoint."})
		return true
	}
	return false
}

// OpsHandler serves /healthz and /readyz alone, for an admin listener:
// there they keep answering (503 once draining) after the public listener
// has closed for shutdown.
func (s *Server) OpsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" || !s.serveOps(w, r) {
			respond.JSON(w, http.StatusNotFound, respond.ErrorBody{Error: "No such endpoint."})
		}
	})
}

// ready answers /readyz.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		respond.JSON(w, http.StatusServiceUnavailable, opsBody{Status: "draining", Error: "The server is shutting down."})
		return
	}
	if s.db == nil {
		respond.JSON(w, http.StatusServiceUnavailable, opsBody{Status: "unavailable", Error: "No store is configured."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		// The store's error is for the operator's log, not for the probe.
		s.log.WarnContext(ctx, "readiness check: the store does not answer", slog.Any("err", err))
		respond.JSON(w, http.StatusServiceUnavailable, opsBody{Status: "unavailable", Error: "The store does not answer."})
		return
	}
	respond.JSON(w, http.StatusOK, opsBody{Status: "ready"})
}

// Drain makes /readyz answer 503 from now on, while every other request is
// served as before: call it when shutdown begins, so that load balancers
// stop sending new requests while the in-flight ones finish. Safe to call
// more than once.
func (s *Server) Drain() { s.draining.Store(true) }
