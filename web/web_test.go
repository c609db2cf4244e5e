package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"corkboard/web"
)

var bigJS = strings.Repeat("console.log('corkboard');\n", 200)

func newTestHandler(tb testing.TB) http.Handler {
	tb.Helper()
	h, err := web.NewHandlerFS(fstest.MapFS{
		"index.html":             {Data: []byte("<!doctype html><title>Corkboard</title><div id=root></div>")},
		"sw.js":                  {Data: []byte("self.addEventListener('fetch', () => {});")},
		"assets/index-AbC123.js": {Data: []byte(bigJS)},
		"assets/tiny-Zz9.css":    {Data: []byte("body{margin:0}")},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func get(h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandler(t *testing.T) {
	h := newTestHandler(t)

	t.Run("IndexRevalidated", func(t *testing.T) { testIndexRevalidated(t, h) })

	t.Run("ShellSecurityHeaders", func(t *testing.T) { testShellSecurityHeaders(t, h) })

	t.Run("NosniffOnEveryFile", func(t *testing.T) {
		for _, p := range []string{"/sw.js", "/assets/index-AbC123.js", "/assets/tiny-Zz9.css", "/assets/index-old.js"} {
			if got, want := get(h, "GET", p).Header().Get("X-Content-Type-Options"), "nosniff"; got != want {
				t.Fatalf("%s: X-Content-Type-Options=%q, want %q", p, got, want)
			}
		}
	})

	t.Run("HashedAssetImmutable", func(t *testing.T) {
		rec := get(h, "GET", "/assets/index-AbC123.js")
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("status=%d, want %d", got, want)
		}
		if got, want := rec.Header().Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
			t.Fatalf("Cache-Control=%q, want %q", got, want)
		}
		if got, want := rec.Body.String(), bigJS; got != want {
			t.Fatal("body differs from the file")
		}
	})

	t.Run("ServiceWorkerRevalidated", func(t *testing.T) {
		rec := get(h, "GET", "/sw.js")
		if got, want := rec.Header().Get("Cache-Control"), "no-cache"; got != want {
			t.Fatalf("Cache-Control=%q, want %q", got, want)
		}
	})

	t.Run("ErrNotFoundAsset", func(t *testing.T) {
		rec := get(h, "GET", "/assets/index-old.js")
		if got, want := rec.Code, http.StatusNotFound; got != want {
			t.Fatalf("status=%d, want %d", got, want)
		}
	})

	t.Run("Gzip", func(t *testing.T) { testGzip(t, h) })

	t.Run("GzipRefused", func(t *testing.T) {
		for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
			rec := get(h, "GET", "/assets/index-AbC123.js", "Accept-Encoding", ae)
			if got := rec.Header().Get("Content-Encoding"); got != "" {
				t.Fatalf("Accept-Encoding %q: Content-Encoding=%q, want none", ae, got)
			}
		}
	})

	t.Run("SmallFileNotCompressed", func(t *testing.T) {
		rec := get(h, "GET", "/assets/tiny-Zz9.css", "Accept-Encoding", "gzip")
		if got := rec.Header().Get("Content-Encoding"); got != "" {
			t.Fatalf("Content-Encoding=%q, want none", got)
		}
	})

	t.Run("ETagNotModified", func(t *testing.T) {
		etag := get(h, "GET", "/").Header().Get("ETag")
		if etag == "" {
			t.Fatal("no ETag on index.html")
		}
		rec := get(h, "GET", "/", "If-None-Match", etag)
		if got, want := rec.Code, http.StatusNotModified; got != want {
			t.Fatalf("status=%d, want %d", got, want)
		}
	})

	t.Run("ErrMethod", func(t *testing.T) {
		rec := get(h, "POST", "/b/roadmap")
		if got, want := rec.Code, http.StatusMethodNotAllowed; got != want {
			t.Fatalf("status=%d, want %d", got, want)
		}
	})

	t.Run("Head", func(t *testing.T) {
		rec := get(h, "HEAD", "/b/roadmap")
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("status=%d, want %d", got, want)
		}
	})
}

// testIndexRevalidated: the app shell answers every client route, revalidated.
func testIndexRevalidated(t *testing.T, h http.Handler) {
	for _, p := range []string{"/", "/index.html", "/b/roadmap", "/some/client/route"} {
		rec := get(h, "GET", p)
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("%s: status=%d, want %d", p, got, want)
		}
		if got, want := rec.Header().Get("Cache-Control"), "no-cache"; got != want {
			t.Fatalf("%s: Cache-Control=%q, want %q", p, got, want)
		}
		if !strings.Contains(rec.Body.String(), "<div id=root>") {
			t.Fatalf("%s: body=%q, want the app shell", p, rec.Body.String())
		}
		if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, "text/html") {
			t.Fatalf("%s: Content-Type=%q", p, got)
		}
	}
}

// testShellSecurityHeaders: the app shell carries a strict CSP and nosniff.
func testShellSecurityHeaders(t *testing.T, h http.Handler) {
	for _, p := range []string{"/", "/index.html", "/b/roadmap"} {
		hdr := get(h, "GET", p).Header()
		csp := hdr.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "style-src-attr 'unsafe-inline'", "connect-src 'self'", "worker-src 'self'", "frame-ancestors 'none'", "base-uri 'self'", "form-action 'self'", "object-src 'none'"} {
			if !strings.Contains(csp, want+";") && !strings.HasSuffix(csp, want) {
				t.Fatalf("%s: Content-Security-Policy=%q, want it to hold %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
			t.Fatalf("%s: Content-Security-Policy=%q allows eval or inline scripts", p, csp)
		}
		if got, want := hdr.Get("X-Content-Type-Options"), "nosniff"; got != want {
			t.Fatalf("%s: X-Content-Type-Options=%q, want %q", p, got, want)
		}
	}
}

// testGzip: a large asset is gzipped for a client that takes it.
func testGzip(t *testing.T, h http.Handler) {
	rec := get(h, "GET", "/assets/index-AbC123.js", "Accept-Encoding", "br, gzip")
	if got, want := rec.Header().Get("Content-Encoding"), "gzip"; got != want {
		t.Fatalf("Content-Encoding=%q, want %q", got, want)
	}
	if got := rec.Header().Get("Vary"); got != "Accept-Encoding" {
		t.Fatalf("Vary=%q, want Accept-Encoding", got)
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, []byte(bigJS)) {
		t.Fatal("gunzipped body differs from the file")
	}
}

// TestEmbeddedBuild checks that the committed build is embedded and served.
func TestEmbeddedBuild(t *testing.T) {
	h, err := web.NewHandler()
	if err != nil {
		t.Fatal(err)
	}
	rec := get(h, "GET", "/b/anything")
	if got, want := rec.Code, http.StatusOK; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
	if !strings.Contains(rec.Body.String(), `<div id="root">`) {
		t.Fatalf("body=%q, want the built index.html", rec.Body.String())
	}
}
