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
	// Only the profiler's own listener serves it.
	if _, body := get(t, base+"/debug/pprof/"); strings.Contains(body, pprofIndex) {
		t.Fatal("the API's address serves pprof")
	}
	if status, _ := get(t, pprofBase+"/api/auth/me"); status != http.StatusNotFound {
		t.Fatalf("the pprof address answers the API: %d", status)
	}
}
