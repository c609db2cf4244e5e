package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"corkboard/web"
)

// TestNosniffOnEveryAnswer checks X-Content-Type-Options: nosniff on every
// kind of answer the public listener gives: JSON successes and errors from
// the API (a browser must never sniff a JSON body into HTML), the
// operations endpoints, and the app shell, which also carries the
// Content-Security-Policy.
func TestNosniffOnEveryAnswer(t *testing.T) {
	app, err := web.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withApp(app))
	session := e.login("ada@example.com")
	crossSite := http.Header{"Sec-Fetch-Site": {"cross-site"}}

	for _, tc := range []struct {
		name    string
		method  string
		path    string
		session string
		body    any
		header  []http.Header
		status  int
	}{
		{name: "OK", method: "GET", path: "/api/auth/me", session: session, status: http.StatusOK},
		{name: "ClientConfig", method: "GET", path: "/api/config", status: http.StatusOK},
		{name: "ErrUnauthorized", method: "GET", path: "/api/auth/me", status: http.StatusUnauthorized},
		{name: "ErrInvalid", method: "POST", path: "/api/auth/send-otp", body: map[string]any{"email": 7}, status: http.StatusBadRequest},
		{name: "ErrNoEndpoint", method: "GET", path: "/api/nope", status: http.StatusNotFound},
		{name: "ErrMethod", method: "DELETE", path: "/api/auth/me", session: session, status: http.StatusMethodNotAllowed},
		{name: "ErrCrossSite", method: "POST", path: "/api/boards/x/claim", session: session, header: []http.Header{crossSite}, status: http.StatusForbidden},
		{name: "Health", method: "GET", path: "/healthz", status: http.StatusOK},
		{name: "Shell", method: "GET", path: "/b/roadmap", session: session, status: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do(tc.method, tc.path, tc.session, tc.body, tc.header...)
			a.wantStatus(t, tc.status)
			if got, want := a.header.Get("X-Content-Type-Options"), "nosniff"; got != want {
				t.Fatalf("%v: X-Content-Type-Options=%q, want %q", a, got, want)
			}
		})
	}

	t.Run("ShellPolicy", func(t *testing.T) {
		a := e.do("GET", "/", "", nil)
		a.wantStatus(t, http.StatusOK)
		if csp := a.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("Content-Security-Policy=%q, want the strict policy", csp)
		}
	})
}
