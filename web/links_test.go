package web_test

import (
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"corkboard/web"
)

// TestLinkPages: a read-only link's page (/l/<token>) is the app shell,
// marked noindex in its HTML and its headers, never cached, and sent on
// as no Referer; other pages keep their own headers and no robots tag.
func TestLinkPages(t *testing.T) {
	for _, tc := range []struct {
		name, index string
	}{
		{"with a head", "<!doctype html><html><head><title>Corkboard</title></head><body><div id=root></div></body></html>"},
		{"without a head", "<!doctype html><title>Corkboard</title><div id=root></div>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := web.NewHandlerFS(fstest.MapFS{"index.html": {Data: []byte(tc.index)}})
			if err != nil {
				t.Fatal(err)
			}
			rec := get(h, "GET", "/l/abcDEF123_-abcDEF123_-abcDEF123_-abcDEF123")
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, "<div id=root>") {
				t.Fatalf("status %d, body %q: want the app shell", rec.Code, body)
			}
			if !strings.Contains(body, `<meta name="robots" content="noindex, nofollow">`) {
				t.Fatalf("body %q has no robots noindex tag", body)
			}
			if i, j := strings.Index(body, `<meta name="robots"`), strings.Index(body, "</head>"); j >= 0 && i > j {
				t.Fatalf("robots tag outside the head: %q", body)
			}
			for k, want := range map[string]string{
				"X-Robots-Tag":    "noindex, nofollow",
				"Referrer-Policy": "no-referrer",
				"Cache-Control":   "no-store",
				"X-Frame-Options": "DENY",
			} {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			other := get(h, "GET", "/b/roadmap")
			if strings.Contains(other.Body.String(), "robots") || other.Header().Get("X-Robots-Tag") != "" {
				t.Fatalf("a board's page is marked noindex: %q", other.Body.String())
			}
			if got := other.Header().Get("Referrer-Policy"); got != "same-origin" {
				t.Fatalf("a board's page: Referrer-Policy %q", got)
			}
		})
	}
}
