package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startService runs a Corkboard service in-process on a loopback
// listener, its login mail going to its outbox folder as with no SMTP.
func startService(t *testing.T) (url, outbox string) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewUnstartedServer(nil)
	url = "http://" + srv.Listener.Addr().String()
	svc, err := newService(t.TempDir(), url, log)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = svc.Handler
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close()
		if err := svc.CloseRooms(ctx); err != nil {
			t.Errorf("close rooms: %v", err)
		}
		svc.CloseStorage(ctx)
	})
	return url, svc.Outbox
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
	if r := rep.Runs[0]; r.Requests == 0 || r.Errors != 0 {
		t.Fatalf("pull: %d requests, %d errors %v", r.Requests, r.Errors, r.ErrorSamples)
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
