package transport

import (
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// registerAuthRoutes adds the login endpoints. send-otp and verify-otp need
// no session; me and logout do (401 without one, as the spec's
// Authentication part lists only the first two as exempt).
func (s *Server) registerAuthRoutes(r chi.Router) {
	// POST /api/auth/send-otp
	r.Post("/auth/send-otp", s.handleSendOTP)
	// POST /api/auth/verify-otp
	r.Post("/auth/verify-otp", s.handleVerifyOTP)
	// GET /api/auth/me
	r.With(s.requireSession).Get("/auth/me", s.handleMe)
	// GET /api/auth/logout. A GET that changes state, as the spec has it;
	// cross-site logout is not possible because the SameSite=Strict cookie
	// is not sent on cross-site requests.
	r.With(s.requireSession).Get("/auth/logout", s.handleLogout)
}

type sendOTPRequest struct {
	Email string `json:"email"`
}

// handleSendOTP is POST /api/auth/send-otp. Its answer is the same for every
// well-formed address: the mail leaves from a background queue.
func (s *Server) handleSendOTP(w http.ResponseWriter, r *http.Request) {
	var req sendOTPRequest
	if err := reqbody.Decode(w, r, limitAuthBody, decodeStringFields(map[string]*string{"email": &req.Email})); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.auth.SendCode(r.Context(), req.Email, s.clientIP(r)); err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, respond.OK)
}

type verifyOTPRequest struct {
	Email string `json:"email"`
	Code  string `json:"code"`
}

// handleVerifyOTP is POST /api/auth/verify-otp: a correct code sets the
// session cookie.
func (s *Server) handleVerifyOTP(w http.ResponseWriter, r *http.Request) {
	var req verifyOTPRequest
	if err := reqbody.Decode(w, r, limitAuthBody, decodeStringFields(map[string]*string{"email": &req.Email, "code": &req.Code})); err != nil {
		s.writeError(w, r, err)
		return
	}
	login, err := s.auth.Verify(r.Context(), req.Email, req.Code, s.clientIP(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	http.SetCookie(w, sessionCookie(login.Token, int(login.MaxAge/time.Second)))
	respond.JSON(w, http.StatusOK, respond.OK)
}

// handleMe is GET /api/auth/me.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) {
	respond.JSON(w, http.StatusOK, map[string]string{"email": reqctx.Email(r.Context())})
}

// handleLogout is GET /api/auth/logout: the session is deleted on the
// server and the cookie cleared.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil {
		if err := s.auth.Logout(r.Context(), c.Value); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	http.SetCookie(w, sessionCookie("", -1))
	respond.JSON(w, http.StatusOK, respond.OK)
}

// sessionCookie is the session cookie with the spec's attributes. maxAge is
// in seconds; negative clears the cookie (Max-Age=0, and an Expires in the
// past for clients that ignore Max-Age). No Domain: the cookie stays on the
// exact host that set it.
func sessionCookie(value string, maxAge int) *http.Cookie {
	c := &http.Cookie{
		Name:     SessionCookie,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   true,
		SameSite: http.SameSiteStrictMode,
	}
	if maxAge < 0 {
		c.Expires = time.Unix(0, 0)
	}
	return c
}
