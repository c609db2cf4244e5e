package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// get fetches url and returns its status and body.
func get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// pprofIndex is a phrase of net/http/pprof's index page.
const pprofIndex = "Types of profiles available"

func TestPprofOffByDefault(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Pprof != "" {
		t.Fatalf("Pprof=%q, want off by default", cfg.Pprof)
	}
	base, logs, stop := start(t, "-data", t.TempDir())
	defer stop()
	if _, body := get(t, base+"/debug/pprof/"); strings.Contains(body, pprofIndex) {
		t.Fatal("the API's address serves pprof")
	}
	if strings.Contains(logs.String(), "pprof listening") {
		t.Fatalf("pprof started without -pprof:\n%s", logs.String())
	}
}

func TestPprofRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "192.168.1.5:6060", "board.example.com:6060", "6060"} {
		t.Run(addr, func(t *testing.T) {
			data := t.TempDir()
			err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", data, "-pprof", addr},
				func(string) string { return "" }, io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), "-pprof") {
				t.Fatalf("err=%v, want one naming -pprof", err)
			}
			// Refused at start-up, before storage is opened.
			if entries, _ := os.ReadDir(data); len(entries) > 0 {
				t.Fatalf("the data folder has %s: storage was opened before the refusal", entries[0].Name())
			}
		})
	}
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.2:6060", "[::1]:6060", "localhost:6060"} {
		t.Run(addr, func(t *testing.T) {
			if err := checkPprofAddr(addr); err != nil {
				t.Fatalf("checkPprofAddr(%q)=%v, want nil", addr, err)
			}
		})
	}
}

func TestPprofServesOnLoopback(t *testing.T) {
	base, logs, stop := start(t, "-data", filepath.Join(t.TempDir(), "data"), "-pprof", "127.0.0.1:0")
	defer stop()
	m := regexp.MustCompile(`msg="pprof listening" addr=(\S+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no pprof address in the log:\n%s", logs.String())
	}
	pprofBase := "http://" + m[1]
	if status, body := get(t, pprofBase+"/debug/pprof/"); status != http.StatusOK || !strings.Contains(body, pprofIndex) {
		t.Fatalf("GET /debug/pprof/ = %d %.200s, want pprof's index", status, body)
	}
	if status, body := get(t, pprofBase+"/debug/pprof/goroutine?debug=1"); status != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Fatalf("GET /debug/pprof/goroutine = %d %.200s", status, body)
	}
	// With the profiler, the fan-out's stage log is served beside it
	// (internal/stagelog; the load tool reads it).
	if status, body := get(t, pprofBase+"/debug/corkboard/stages"); status != http.StatusOK || !strings.Contains(body, `"messages"`) || !strings.Contains(body, `"seconds"`) {
		t.Fatalf("GET /debug/corkboard/stages = %d %.200s, want the stage log", status, body)
	}
	// Only the profiler's own listener serves it.
	if _, body := get(t, base+"/debug/pprof/"); strings.Contains(body, pprofIndex) {
		t.Fatal("the API's address serves pprof")
	}
	if _, body := get(t, base+"/debug/corkboard/stages"); strings.Contains(body, `"messages"`) {
		t.Fatal("the API's address serves the stage log")
	}
	if status, _ := get(t, pprofBase+"/api/auth/me"); status != http.StatusNotFound {
		t.Fatalf("the pprof address answers the API: %d", status)
	}
}

// getWithHost fetches url with the Host header set to host.
func getWithHost(tb testing.TB, url, host string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// A page of another site whose name was rebound to 127.0.0.1 sends its own
// name as Host: the profiler refuses it, so /debug/pprof/cmdline (which
// shows the flags, secrets among them) is never readable by a web page.
func TestPprofRefusesNonLoopbackHost(t *testing.T) {
	_, logs, stop := start(t, "-data", filepath.Join(t.TempDir(), "data"), "-pprof", "127.0.0.1:0")
	defer stop()
	m := regexp.MustCompile(`msg="pprof listening" addr=(\S+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no pprof address in the log:\n%s", logs.String())
	}
	url := "http://" + m[1] + "/debug/pprof/cmdline"
	for _, tt := range []struct {
		host string
		want int
	}{
		{"localhost", http.StatusOK},
		{"localhost:6060", http.StatusOK},
		{"LocalHost:6060", http.StatusOK},
		{"127.0.0.1", http.StatusOK},
		{m[1], http.StatusOK},
		{"[::1]", http.StatusOK},
		{"[::1]:6060", http.StatusOK},
		{"evil.example.com", http.StatusForbidden},
		{"evil.example.com:6060", http.StatusForbidden},
		{"localhost.evil.example.com", http.StatusForbidden},
		{"127.0.0.1.nip.io:6060", http.StatusForbidden},
		{"10.0.0.1:6060", http.StatusForbidden},
	} {
		t.Run(tt.host, func(t *testing.T) {
			status, body := getWithHost(t, url, tt.host)
			if status != tt.want {
				t.Fatalf("Host %q: status %d, want %d (%.100s)", tt.host, status, tt.want, body)
			}
			if tt.want != http.StatusOK && !strings.Contains(body, "loopback") {
				t.Fatalf("Host %q: body %q does not say why", tt.host, body)
			}
		})
	}
}
