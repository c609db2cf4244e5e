package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/ai/aitest"
)

var metricsAddrInLog = regexp.MustCompile(`metrics listening"? addr=(\S+)`)

// metricsBase is the metrics listener's URL, from the line the server
// logs before it reports ready.
func metricsBase(t *testing.T, logs *syncBuffer) string {
	t.Helper()
	m := metricsAddrInLog.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no metrics listener in the log:\n%s", logs)
	}
	return "http://" + m[1]
}

// scrape reads the metrics listener's samples: series (name and labels, as
// written) to value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", res.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// do sends a request with the session cookie and returns status and body.
func do(t *testing.T, cookie *http.Cookie, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestMetricsOffByDefault(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MetricsAddr != "" || cfg.DrainDelay != 0 {
		t.Fatalf("MetricsAddr=%q DrainDelay=%s, want off by default", cfg.MetricsAddr, cfg.DrainDelay)
	}
	base, logs, stop := start(t, "-data", t.TempDir())
	defer stop()
	if status, body := get(t, base+"/metrics"); status != http.StatusNotFound || strings.Contains(body, "corkboard_") {
		t.Fatalf("GET /metrics on -addr = %d %s, want 404", status, body)
	}
	if strings.Contains(logs.String(), "metrics listening") {
		t.Fatalf("a metrics listener started without -metrics-addr:\n%s", logs)
	}
}

// TestMetricsMove drives the server as its users do (a push, a pull, a
// live connection, an AI call on a fake Ollama) and reads on the metrics
// listener that the series moved; the public listener serves no metrics.
func TestMetricsMove(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.JSON(map[string]any{"description": "How users log in.", "relationships": []any{}})))
	data := t.TempDir()
	base, logs, stop := start(t, "-data", data, "-metrics-addr", "127.0.0.1:0", "-ollama", fake.URL, "-model", "qwen3:4b")
	defer stop()
	mbase := metricsBase(t, logs)
	if status, body := get(t, base+"/metrics"); status != http.StatusNotFound || strings.Contains(body, "corkboard_") {
		t.Fatalf("GET /metrics on -addr = %d %s, want 404 with -metrics-addr set", status, body)
	}
	for _, u := range []string{base + "/healthz", base + "/readyz", mbase + "/healthz", mbase + "/readyz"} {
		if status, _ := get(t, u); status != http.StatusOK {
			t.Fatalf("GET %s = %d, want 200", u, status)
		}
	}
	before := scrape(t, mbase)

	cookie := loginFromOutbox(t, base, data, "ada@example.com")
	if status, body := do(t, cookie, "POST", base+"/api/boards/b1/access", ""); status != 200 {
		t.Fatalf("claim: %d %s", status, body)
	}
	if status, body := do(t, cookie, "POST", base+"/api/boards/b1/sync", `{"clientVersion":0,"notes":{"upserted":[{"id":"n1","title":"Login","content":"Users log in."}],"deleted":[]}}`); status != 200 {
		t.Fatalf("push: %d %s", status, body)
	}
	if status, body := do(t, cookie, "GET", base+"/api/boards/b1/sync?since=0", ""); status != 200 {
		t.Fatalf("pull: %d %s", status, body)
	}
	if status, body := do(t, cookie, "POST", base+"/api/canvas/generate-frontmatter", `{"boardId":"b1","noteId":"n1","title":"Login","content":"Users log in.","allNotes":[{"id":"n1","title":"Login","content":"Users log in."}]}`); status != 200 {
		t.Fatalf("generate-frontmatter: %d %s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/api/boards/b1/live", &websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {cookie.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if _, _, err := c.Read(ctx); err != nil { // hello: the connection has joined its room
		t.Fatal(err)
	}

	after := scrape(t, mbase)
	moved := func(series string, by float64) {
		t.Helper()
		if got := after[series] - before[series]; got < by {
			t.Errorf("%s moved by %g, want at least %g", series, got, by)
		}
	}
	moved("corkboard_pushes_total", 1)
	moved("corkboard_push_commit_seconds_count", 1)
	moved("corkboard_push_commit_batch_size_count", 1)
	moved(`corkboard_pulls_total{read="store"}`, 1)
	moved("corkboard_pull_seconds_count", 1)
	moved(`corkboard_ai_requests_total{feature="generate-frontmatter"}`, 1)
	moved(`corkboard_ai_tokens_total{feature="generate-frontmatter",kind="prompt"}`, 100)
	moved(`corkboard_ai_tokens_total{feature="generate-frontmatter",kind="completion"}`, 20)
	if got := after["corkboard_live_connections"]; got != 1 {
		t.Errorf("corkboard_live_connections = %g, want 1", got)
	}
	if got := after["corkboard_rooms"]; got != 1 {
		t.Errorf("corkboard_rooms = %g, want 1", got)
	}
	if _, ok := after["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
	for series := range after {
		if strings.Contains(series, "b1") || strings.Contains(series, "ada@") {
			t.Errorf("series %s names a board or a user", series)
		}
	}
}

// TestReadyzDrains: on shutdown /readyz answers 503 on both listeners for
// -drain-delay while the API still serves requests; a second signal ends
// the delay, and the metrics listener keeps saying 503 until the end.
func TestReadyzDrains(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sends itself SIGTERM")
	}
	data := t.TempDir()
	base, logs, stop := start(t, "-data", data, "-metrics-addr", "127.0.0.1:0", "-drain-delay", "10m")
	mbase := metricsBase(t, logs)
	cookie := loginFromOutbox(t, base, data, "ada@example.com")
	if status, _ := get(t, base+"/readyz"); status != http.StatusOK {
		t.Fatalf("GET /readyz before shutdown = %d, want 200", status)
	}

	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	// Drain starts once run has seen the cancelled context; wait for that
	// state, not for a time.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if status, _ := get(t, base+"/readyz"); status == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 503 after shutdown began:\n%s", logs)
		}
	}
	if status, body := get(t, mbase+"/readyz"); status != http.StatusServiceUnavailable || !strings.Contains(body, `"draining"`) {
		t.Fatalf("metrics listener GET /readyz while draining = %d %s, want 503 draining", status, body)
	}
	// Everything else is still served while load balancers take note.
	if status, _ := get(t, base+"/healthz"); status != http.StatusOK {
		t.Fatalf("GET /healthz while draining = %d, want 200", status)
	}
	if status, body := do(t, cookie, "POST", base+"/api/boards/b1/access", ""); status != 200 {
		t.Fatalf("a request while draining: %d %s", status, body)
	}
	// The drain has registered for a second signal before /readyz turned
	// 503, so this signal reaches it and does not end the test binary.
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatalf("the second signal did not end the drain:\n%s", logs)
	}
}
