package transport

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"corkboard/board"
)

// SessionCookie is the session cookie's name, fixed by the spec.
const SessionCookie = "session"

type ctxKey int

const (
	ctxEmail ctxKey = iota
	ctxBoard
)

// recoverPanics turns a handler panic into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				if sw, ok := w.(interface{ Status() int }); ok && sw.Status() != 0 {
					// The answer has begun: a second status would corrupt it,
					// so cut the connection instead.
					panic(http.ErrAbortHandler)
				}
				writeJSON(w, http.StatusInternalServerError, errorBody{Error: "Internal error."})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// logRequests logs one line per request.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "http",
			slog.Group("req", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("ip", s.clientIP(r))),
			slog.Group("resp", slog.Int("status", ww.Status()), slog.Int("bytes", ww.BytesWritten()), slog.Duration("took", time.Since(start))),
		)
	})
}

// crossOriginProtection refuses state-changing requests from other sites
// (Sec-Fetch-Site or Origin), trusting PublicURL. The billing webhook is
// called by a payment provider's servers and is exempt.
func (s *Server) crossOriginProtection() func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	if s.cfg.PublicURL != "" {
		if err := cop.AddTrustedOrigin(strings.TrimRight(s.cfg.PublicURL, "/")); err != nil {
			s.log.Warn("public URL is not a valid origin; only same-origin requests are trusted", slog.String("publicURL", s.cfg.PublicURL), slog.Any("err", err))
		}
	}
	cop.AddInsecureBypassPattern("POST /api/billing/webhook")
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, errorBody{Error: "Cross-site request refused."})
	}))
	return cop.Handler
}

// clientIP is the address rate limits are keyed on: the connection's, unless
// the server is configured to trust a proxy's X-Forwarded-For.
func (s *Server) clientIP(r *http.Request) string {
	if s.cfg.TrustProxy {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			// The last hop is the one our proxy appended; earlier ones are
			// whatever the client claimed.
			parts := strings.Split(xff, ",")
			if ip := strings.TrimSpace(parts[len(parts)-1]); net.ParseIP(ip) != nil {
				return ip
			}
		}
		if ip := strings.TrimSpace(r.Header.Get("X-Real-IP")); net.ParseIP(ip) != nil {
			return ip
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// requireSession lets a request through only with a live session and puts
// the user's e-mail in its context.
func (s *Server) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(SessionCookie)
		if err != nil || c.Value == "" {
			s.writeError(w, r, board.Errorf(board.EUNAUTHORIZED, "Not logged in."))
			return
		}
		email, err := s.auth.Authenticate(r.Context(), c.Value)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxEmail, email)))
	})
}

// sessionToken is the request's session cookie value ("" without one).
func sessionToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// userEmail is the logged-in user's e-mail (set by requireSession).
func userEmail(ctx context.Context) string {
	e, _ := ctx.Value(ctxEmail).(string)
	return e
}
