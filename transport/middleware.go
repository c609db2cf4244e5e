package transport

import (
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"corkboard/board"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// SessionCookie is the session cookie's name, fixed by the spec.
const SessionCookie = "session"

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
				respond.JSON(w, http.StatusInternalServerError, respond.ErrorBody{Error: "Internal error."})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// logRequests logs one line per request: at Info, or at Debug for a
// successful request a handler marked with logQuietly. It also starts the
// request's state (requestState). The groups are built as slog.GroupValue
// of attributes, not slog.Group of ...any, which boxes each attribute:
// polls make this the busiest line in the program.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, st := reqctx.Start(r.Context())
		r = r.WithContext(ctx)
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		level := slog.LevelInfo
		if st.Quiet() && ww.Status() == http.StatusOK {
			level = slog.LevelDebug
		}
		if !s.log.Enabled(r.Context(), level) {
			return
		}
		s.log.LogAttrs(r.Context(), level, "http",
			slog.Attr{Key: "req", Value: slog.GroupValue(slog.String("method", r.Method), slog.String("path", redactPath(r.URL.Path)), slog.String("ip", s.clientIP(r)))},
			slog.Attr{Key: "resp", Value: slog.GroupValue(slog.Int("status", ww.Status()), slog.Int("bytes", ww.BytesWritten()), slog.Duration("took", time.Since(start)))},
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
		respond.JSON(w, http.StatusForbidden, respond.ErrorBody{Error: "Cross-site request refused."})
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
		if link := linkToken(r); link != "" {
			// A read-only link's request (links.go): the link decides,
			// whatever session cookie comes with it.
			s.serveWithLink(w, r, link, next)
			return
		}
		token := sessionToken(r)
		if token == "" {
			s.writeError(w, r, board.Errorf(board.EUNAUTHORIZED, "Not logged in."))
			return
		}
		email, err := s.auth.Authenticate(r.Context(), token)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if ctx := reqctx.WithEmail(r.Context(), email); ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// sessionToken is the request's session cookie value ("" without one):
// what r.Cookie(SessionCookie) answers (the same trimming, quotes, value
// check and cookie-count limit, held to it by FuzzSessionToken), without
// parsing every cookie of the request into a new slice on every request.
func sessionToken(r *http.Request) string {
	lines := r.Header["Cookie"]
	count := 0
	for _, line := range lines {
		count += strings.Count(line, ";") + 1
	}
	if count > maxCookies {
		return ""
	}
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ";") {
			part = textproto.TrimString(part)
			if part == "" {
				continue
			}
			name, val, _ := strings.Cut(part, "=")
			if textproto.TrimString(name) != SessionCookie {
				continue
			}
			if len(val) > 1 && val[0] == '"' && val[len(val)-1] == '"' {
				val = val[1 : len(val)-1]
			}
			if validCookieValue(val) {
				return val
			}
		}
	}
	return ""
}

// maxCookies is net/http's limit on the cookies of a request (its
// httpcookiemaxnum default): past it r.Cookie finds none.
const maxCookies = 3000

// validCookieValue reports whether v is a cookie value net/http accepts
// (RFC 6265 cookie-octets, plus space and comma as net/http allows).
func validCookieValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}
