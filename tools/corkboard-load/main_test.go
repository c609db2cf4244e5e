package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corkboard/tools/internal/corkboardbin"
)

// corkboardBin is the real server, built once by TestMain for the tests
// that run the tool against it.
var corkboardBin string

func TestMain(m *testing.M) {
	// The memory-nodes mode starts its workers as this binary again.
	if len(os.Args) == 2 && os.Args[1] == workerArg {
		os.Exit(workerMain(context.Background()))
	}
	dir, err := os.MkdirTemp("", "corkboard-load-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if corkboardBin, err = corkboardbin.Build(context.Background(), dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startService runs the corkboard binary on a free loopback port and a
// temporary data folder, as -spawn-corkboard does; its login mail goes to
// its outbox folder (no SMTP).
func startService(t *testing.T) (url, outbox string) {
	t.Helper()
	srv := spawnServer(t, false)
	return srv.base, srv.outbox()
}

// spawnServer starts the corkboard binary for one test, with -pprof when
// asked, and stops it when the test ends.
func spawnServer(t *testing.T, pprof bool) *spawned {
	t.Helper()
	srv, err := spawnCorkboard(context.Background(), corkboardBin, pprof, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	return srv
}

func testConfig(url, outbox string) *Config {
	cfg := &Config{}
	fs := newFlagSet(cfg, io.Discard)
	if err := fs.Parse(nil); err != nil {
		panic(err)
	}
	cfg.URL, cfg.Outbox = url, outbox
	cfg.Timeout = time.Minute
	return cfg
}

// The tool logs in through the real API, opens the sockets, pushes, and
// every subscriber gets every push exactly once.
func TestLiveModesDeliverEveryPush(t *testing.T) {
	tests := []struct {
		name                   string
		mode, pushOver         string
		boards, conns, writers int
		rate                   float64
	}{
		{"fanout over ws", "fanout", "ws", 1, 5, 1, 20},
		{"fanout over rest", "fanout", "rest", 1, 5, 1, 20},
		{"spread", "spread", "ws", 3, 7, 2, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, outbox := startService(t)
			cfg := testConfig(url, outbox)
			cfg.Mode, cfg.PushOver = tt.mode, tt.pushOver
			cfg.Boards, cfg.Conns, cfg.Writers, cfg.Rate = tt.boards, tt.conns, tt.writers, tt.rate
			cfg.Duration = time.Second
			if err := cfg.check(); err != nil {
				t.Fatal(err)
			}
			rep, err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Runs) != 1 {
				t.Fatalf("%d runs, want 1", len(rep.Runs))
			}
			r := rep.Runs[0]
			if r.Connected != tt.conns || r.Errors != 0 {
				t.Fatalf("connected %d of %d, %d errors %v", r.Connected, tt.conns, r.Errors, r.ErrorSamples)
			}
			// 20 pushes a second for a second: every one sent and acknowledged.
			if want := int64(tt.rate); r.PushesSent != want || r.PushesAcked != want {
				t.Fatalf("sent %d, acknowledged %d, want %d each", r.PushesSent, r.PushesAcked, want)
			}
			// Each subscriber sees the pushes of its board's writers: here
			// every board has as many pushes as its writers sent.
			if r.Expected == 0 || r.Delivered != r.Expected || r.Missing != 0 || r.Duplicates != 0 || r.Drops != 0 {
				t.Fatalf("delivered %d of %d (missing %d, duplicates %d, drops %d)", r.Delivered, r.Expected, r.Missing, r.Duplicates, r.Drops)
			}
			if tt.mode == "fanout" && r.Delivered != int64(tt.conns)*r.PushesAcked {
				t.Fatalf("delivered %d, want %d subscribers × %d pushes", r.Delivered, tt.conns, r.PushesAcked)
			}
			if r.Latency.Count != int(r.Delivered) || r.AckLatency.Count != int(r.PushesAcked) {
				t.Fatalf("latency samples %d/%d, want %d/%d", r.Latency.Count, r.AckLatency.Count, r.Delivered, r.PushesAcked)
			}
		})
	}
}

func TestPullAndPushesModes(t *testing.T) {
	url, outbox := startService(t)
	cfg := testConfig(url, outbox)
	cfg.SessionFile = t.TempDir() + "/session"
	cfg.Duration = 300 * time.Millisecond
	cfg.Concurrency = 4
	cfg.PushBoards = 3

	cfg.Mode = "pull"
	rep, err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 {
		t.Fatalf("pull: %d runs, want Corkboard's and the bare handler's", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Requests == 0 || r.Errors != 0 {
			t.Fatalf("pull from %s: %d requests, %d errors %v", r.Target, r.Requests, r.Errors, r.ErrorSamples)
		}
	}
	if got := rep.Runs[1].Target; got != "bare net/http" {
		t.Fatalf("second pull run against %q, want the bare handler", got)
	}
	if p := rep.Pull; p == nil || p.Ratio <= 0 || p.CorkboardRPS != rep.Runs[0].RequestsPerS || p.BareRPS != rep.Runs[1].RequestsPerS {
		t.Fatalf("pull comparison %+v, want the two runs' requests/s and their ratio", p)
	}

	// The second run reuses the session kept in the file: no second code.
	cfg.Mode, cfg.Outbox = "pushes", ""
	rep, err = run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 3 {
		t.Fatalf("%d push phases, want 3", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.PushesAcked == 0 || r.Errors != 0 {
			t.Fatalf("%s: %d acknowledged, %d errors %v", r.Name, r.PushesAcked, r.Errors, r.ErrorSamples)
		}
	}
	if got := rep.Runs[2].Boards; got != 3 {
		t.Fatalf("last phase on %d boards, want 3", got)
	}
}

func TestOnlyLoopback(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:80", "ws://127.0.0.2:1234"} {
		if _, err := checkLoopbackURL(u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:8080", "http://example.com", "https://127.0.0.1", "http://192.168.1.1", "127.0.0.1:8080"} {
		if _, err := checkLoopbackURL(u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	cfg := testConfig("http://10.1.2.3:8080", t.TempDir())
	cfg.Mode = "fanout"
	if _, err := run(context.Background(), cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("run against 10.1.2.3: %v, want a loopback error", err)
	}
}

// The y-websocket side against the real y-websocket@1.5.4, when it is
// installed (cd bench/yws && npm install); skipped otherwise.
func TestCompareDeliversOnBothServers(t *testing.T) {
	ywsDir := filepath.Join("..", "..", "bench", "yws")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	if _, err := os.Stat(filepath.Join(ywsDir, "node_modules", "y-websocket", "bin", "server.js")); err != nil {
		t.Skip("y-websocket not installed: cd bench/yws && npm install")
	}
	url, outbox := startService(t)
	cfg := testConfig(url, outbox)
	cfg.Mode, cfg.YWSDir, cfg.TempDir = "compare", ywsDir, t.TempDir()
	cfg.Conns, cfg.Rate, cfg.Duration = 4, 20, time.Second
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	rep, err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Compare == nil {
		t.Fatalf("%d runs, compare %v; want 2 and a comparison", len(rep.Runs), rep.Compare)
	}
	for _, r := range rep.Runs {
		if r.PushesAcked != 20 || r.Delivered != 4*20 || r.Missing != 0 || r.Duplicates != 0 || r.Errors != 0 {
			t.Errorf("%s: acknowledged %d, delivered %d (missing %d, duplicates %d, errors %d %v), want 20 and 80",
				r.Target, r.PushesAcked, r.Delivered, r.Missing, r.Duplicates, r.Errors, r.ErrorSamples)
		}
	}
	if rep.Runs[1].Target != "y-websocket" || rep.Runs[1].Server.PID == 0 {
		t.Fatalf("second run %s with pid %d, want y-websocket with its pid", rep.Runs[1].Target, rep.Runs[1].Server.PID)
	}
}

// -cpuprofile profiles the real binary through its -pprof listener.
func TestCPUProfileOfTheRealBinary(t *testing.T) {
	srv := spawnServer(t, true)
	if srv.pprofBase == "" {
		t.Fatal("no pprof address for a server spawned to profile")
	}
	file := filepath.Join(t.TempDir(), "cpu.pprof")
	wait, err := startCPUProfile(context.Background(), srv.pprofBase, file, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// A profile is gzipped protobuf.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile of %d bytes does not start like gzip: % x", len(b), b[:min(len(b), 8)])
	}

	cfg := testConfig("", "")
	cfg.CPUProfile = file
	if err := cfg.check(); err == nil || !strings.Contains(err.Error(), "-spawn-corkboard") {
		t.Fatalf("-cpuprofile without -spawn-corkboard: err=%v", err)
	}
}

// TestLongPollMode: every poll is held, each push answers the polls of its
// board, and every answer is timed from its push.
func TestLongPollMode(t *testing.T) {
	url, outbox := startService(t)
	cfg := testConfig(url, outbox)
	cfg.Mode = "longpoll"
	cfg.Polls, cfg.Boards, cfg.Rate, cfg.Duration = 20, 2, 10, time.Second
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	rep, err := run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	l := rep.LongPoll
	if l == nil || l.Held != 20 || l.Errors != 0 || l.RunOut != 0 {
		t.Fatalf("long polls %+v, want 20 held, no errors and none run out", l)
	}
	// A poll of a board answered twice in a row before it polls again
	// sees one answer for two pushes: at most one answer per poll and push.
	if l.Pushes != 10 || l.Answers == 0 || l.Answers > l.Pushes*10 || l.Latency.Count != int(l.Answers) {
		t.Fatalf("%d pushes, %d answers, %d timed; want 10 pushes, 1 to 100 answers, each timed", l.Pushes, l.Answers, l.Latency.Count)
	}
}
