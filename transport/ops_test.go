package transport_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/transport"
)

// The probes need no session, answer JSON that no cache keeps, and
// /readyz follows the store.
func TestHealthAndReadiness(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		a := e.do("GET", path, "", nil)
		want := map[string]any{"status": map[string]string{"/healthz": "ok", "/readyz": "ready"}[path]}
		a.wantExactObject(t, http.StatusOK, want)
		if got := a.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("GET %s Cache-Control = %q, want no-store", path, got)
		}
		if got := a.header.Get("Content-Type"); !strings.HasPrefix(got, "application/json") {
			t.Errorf("GET %s Content-Type = %q, want JSON", path, got)
		}
		e.do("HEAD", path, "", nil).wantStatus(t, http.StatusOK)
		e.do("POST", path, "", nil).wantStatus(t, http.StatusMethodNotAllowed)
	}

	t.Run("ErrStoreClosed", func(t *testing.T) {
		e := newEnv(t)
		if err := e.db.Close(); err != nil {
			t.Fatal(err)
		}
		a := e.do("GET", "/readyz", "", nil)
		if obj := a.wantObject(t, http.StatusServiceUnavailable); obj["status"] != "unavailable" {
			t.Fatalf("GET /readyz with the store closed = %v, want status unavailable", obj)
		}
		// The process is still up: a load balancer must not restart it for
		// a store outage.
		e.do("GET", "/healthz", "", nil).wantStatus(t, http.StatusOK)
	})
}

// Draining turns /readyz to 503 at once, while everything else, a request
// already in flight included, is served to its end.
func TestReadinessWhileDraining(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	out := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")

	e.api.Drain()
	e.do("GET", "/readyz", "", nil).wantExactObject(t, http.StatusServiceUnavailable, map[string]any{"status": "draining", "error": "The server is shutting down."})
	e.do("GET", "/healthz", "", nil).wantStatus(t, http.StatusOK)
	e.pushOK(s, "b1", notePush(board.Note{ID: "n2"}))
	answered(t, out).wantBody(t, http.StatusOK, `{"serverVersion":2}`)
	e.api.Drain() // twice is fine
	e.do("GET", "/readyz", "", nil).wantStatus(t, http.StatusServiceUnavailable)
}

// The public listener never serves metrics, not even the browser client's
// page in their place: a scraper pointed at it gets a plain 404.
func TestNoMetricsOnThePublicListener(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<!doctype html>") })
	srv := httptest.NewServer(transport.New(transport.Config{}, transport.Deps{App: app}, nil))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /metrics on the public listener = %d %q %s, want the JSON 404", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
}
