package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/persist/bolt"
)

// syncBuffer is a log sink safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the binary's run() on a free port and returns its base URL and
// a stop function that waits for a clean exit.
func start(t *testing.T, args ...string) (string, *syncBuffer, func()) {
	t.Helper()
	return startMain(t, func(*Main) {}, args...)
}

// startMain is start with a say over the Main before it opens (its hooks).
func startMain(t *testing.T, setup func(*Main), args ...string) (string, *syncBuffer, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	logs := &syncBuffer{}
	go func() {
		done <- runMain(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), func(string) string { return "" }, logs, io.Discard, func(m *Main) {
			m.Ready = ready
			setup(m)
		})
	}()
	select {
	case addr := <-ready:
		stopped := false
		return "http://" + addr, logs, func() {
			if stopped {
				return
			}
			stopped = true
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("run returned %v after shutdown", err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("run did not return after shutdown")
			}
		}
	case err := <-done:
		cancel()
		t.Fatalf("run exited early: %v\n%s", err, logs.String())
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	return "", nil, nil
}

func TestRunServesAndShutsDown(t *testing.T) {
	data := t.TempDir()
	base, logs, stop := start(t, "-data", data)
	defer stop()

	resp, err := http.Get(base + "/api/auth/me")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"error"`) {
		t.Fatalf("GET /api/auth/me = %d %s, want 401 JSON error", resp.StatusCode, body)
	}

	// A second process on the same data folder fails at once, clearly.
	startAt := time.Now()
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", data}, func(string) string { return "" }, io.Discard, io.Discard, nil)
	if !errors.Is(err, bolt.ErrLocked) || !strings.Contains(err.Error(), "another corkboard") {
		t.Fatalf("second run err=%v, want a clear 'in use' error", err)
	}
	if d := time.Since(startAt); d > 5*time.Second {
		t.Fatalf("second run took %v to fail", d)
	}

	stop()
	if !strings.Contains(logs.String(), "stopped") {
		t.Fatalf("no clean stop in logs:\n%s", logs.String())
	}
	// After shutdown the file is closed: a new process can open it.
	db, err := bolt.Open(data)
	if err != nil {
		t.Fatalf("reopen after shutdown: %v", err)
	}
	db.Close()
}

func TestParseConfigEnv(t *testing.T) {
	env := map[string]string{
		"CORKBOARD_ADDR":        "0.0.0.0:9999",
		"CORKBOARD_PUBLIC_URL":  "https://board.example.com",
		"CORKBOARD_DATA":        "/from/env",
		"CORKBOARD_TRUST_PROXY": "true",
	}
	cfg, err := parseConfig([]string{"-data", "/from/flag"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "0.0.0.0:9999" || cfg.PublicURL != "https://board.example.com" || !cfg.TrustProxy {
		t.Fatalf("env not applied: %+v", cfg)
	}
	if cfg.DataDir != "/from/flag" {
		t.Fatalf("DataDir=%q, want the flag to win over the environment", cfg.DataDir)
	}

	if _, err := parseConfig(nil, func(k string) string {
		if k == "CORKBOARD_SESSION_MAX_AGE" {
			return "soon"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "CORKBOARD_SESSION_MAX_AGE") {
		t.Fatalf("bad env value err=%v, want it to name the variable", err)
	}
}

func TestHelpListsFlags(t *testing.T) {
	var out bytes.Buffer
	_, err := parseConfig([]string{"-h"}, func(string) string { return "" }, &out)
	if !errors.Is(err, flagErrHelp()) {
		t.Fatalf("err=%v, want flag.ErrHelp", err)
	}
	for _, f := range []string{"-addr", "-data", "-public-url", "-smtp", "-mail-from", "-otp-email-limit", "-otp-ip-limit", "CORKBOARD_"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("help does not mention %s", f)
		}
	}
}

func flagErrHelp() error { return flag.ErrHelp }

func TestHTTPServerHasTimeouts(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler(), context.Background(), slog.New(slog.DiscardHandler))
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": srv.ReadHeaderTimeout,
		"ReadTimeout":       srv.ReadTimeout,
		"WriteTimeout":      srv.WriteTimeout,
		"IdleTimeout":       srv.IdleTimeout,
	} {
		if d <= 0 || d > 5*time.Minute {
			t.Errorf("%s=%v, want set and at most 5 minutes", name, d)
		}
	}
	if srv.ReadHeaderTimeout > 30*time.Second {
		t.Errorf("ReadHeaderTimeout=%v: slow-header clients would hold connections", srv.ReadHeaderTimeout)
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 1<<20 {
		t.Errorf("MaxHeaderBytes=%d", srv.MaxHeaderBytes)
	}
}

// TestAuthDocFlags: every row of docs/auth.md's rate-limit table that
// names a flag names one the server has, with the default the row says;
// and the rows of limits that have a flag name it.
func TestAuthDocFlags(t *testing.T) {
	doc, err := os.ReadFile("../../docs/auth.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := newFlagSet(&Config{}, io.Discard)
	rows := 0
	for line := range strings.Lines(string(doc)) {
		if !strings.HasPrefix(line, "| send-otp") && !strings.HasPrefix(line, "| verify-otp") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		limit, flagCell := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[3])
		// The cell reads `-name default` (…).
		words := strings.Fields(strings.Trim(strings.TrimSpace(strings.Split(flagCell, "(")[0]), "`"))
		if len(words) != 2 || !strings.HasPrefix(words[0], "-") {
			t.Errorf("row %q names no flag: %q", limit, flagCell)
			continue
		}
		name, def := strings.TrimPrefix(words[0], "-"), words[1]
		if f := fs.Lookup(name); f == nil {
			t.Errorf("docs/auth.md names -%s, which the server does not have", name)
		} else if f.DefValue != def {
			t.Errorf("docs/auth.md gives -%s the default %s, the server %s", name, def, f.DefValue)
		}
	}
	if rows != 4 {
		t.Fatalf("found %d rate-limit rows in docs/auth.md, want 4", rows)
	}
}

// TestReadmeFindsLoginCode runs the README walk-through's line that reads
// the login code from the outbox against a real server, and logs in with
// what it finds; the server's log has the code on a "login code" line too.
func TestReadmeFindsLoginCode(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the README's shell line")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "CODE=$(") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatal("the README's walk-through does not show how to read the login code (a CODE=$(…) line)")
	}

	dir := t.TempDir()
	base, logs, stop := start(t, "-data", filepath.Join(dir, "data"))
	defer stop()
	post := func(path, body string) int {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post("/api/auth/send-otp", `{"email":"ada@example.com"}`); status != http.StatusOK {
		t.Fatalf("send-otp: %d", status)
	}
	var code string
	for deadline := time.Now().Add(10 * time.Second); code == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		cmd := exec.Command(sh, "-c", line+`; printf %s "$CODE"`)
		cmd.Dir = dir
		out, _ := cmd.Output() // no outbox file yet fails the grep
		code = string(out)
	}
	if len(code) != 6 {
		t.Fatalf("the README's line found %q, want a six-digit code", code)
	}
	if status := post("/api/auth/verify-otp", `{"email":"ada@example.com","code":"`+code+`"}`); status != http.StatusOK {
		t.Fatalf("verify-otp with the README's code: %d", status)
	}
	// The mailer logs after it closes the outbox file; once the server has
	// stopped (mail drained), the line is there.
	stop()
	if !strings.Contains(logs.String(), "login code: "+code) {
		t.Errorf("no 'login code' line with %s in the log:\n%s", code, logs.String())
	}
}
