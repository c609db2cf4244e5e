package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// spawned is a server process the tool started and must stop.
type spawned struct {
	name string
	cmd  *exec.Cmd
	dir  string // temp folder (data, log); removed on stop unless keep
	keep bool
	base string // http://127.0.0.1:port
	// pprofBase is the server's -pprof address (http://127.0.0.1:port),
	// when it was started with one.
	pprofBase string
	log       *os.File
	done      chan error
	// stoppedIn and startedAt are the last restart's (presence.go).
	stoppedIn time.Duration
	startedAt time.Time
	// launched is when the process was started (its GC trace's clock
	// starts then); logPath its log file.
	launched time.Time
	logPath  string
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; the server then fails to start and
// the tool says so.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs cmd with its output in dir/<name>.log and waits until
// readyURL answers (any status), at most 30 s.
func (s *spawned) start(ctx context.Context, readyURL string) error {
	f, err := os.Create(filepath.Join(s.dir, s.name+".log"))
	if err != nil {
		return err
	}
	s.log, s.logPath = f, f.Name()
	s.cmd.Stdout, s.cmd.Stderr = f, f
	s.launched = time.Now()
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.name, err)
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil}}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := client.Get(readyURL); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			client.CloseIdleConnections()
			return nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("%s exited before it was ready (%v); see %s", s.name, err, f.Name())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after 30s; see %s", s.name, f.Name())
		case <-tick.C:
		}
	}
}

// PID returns the process ID.
func (s *spawned) PID() int { return s.cmd.Process.Pid }

// stop sends SIGTERM, waits up to 20 s (then kills), and removes the temp
// folder unless it is kept.
func (s *spawned) stop() {
	if s.done != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	if s.log != nil {
		s.log.Close()
	}
	if !s.keep {
		os.RemoveAll(s.dir)
	}
}

// unlimitedLive are the corkboard flags that lift the live caps, the push
// budgets and the long poll caps for a load run.
var unlimitedLive = []string{
	"-live-max-per-board", "1000000", "-live-max-per-user", "1000000", "-live-max", "1000000",
	"-live-push-rate", "1000000", "-live-user-push-rate", "1000000",
	"-poll-max-per-user", "1000000", "-poll-max", "1000000",
	// One person's thousands of sockets answer the server's pings: past
	// -live-user-message-rate (300/s) the pongs alone closed sockets with
	// 4029 in a 5,000-socket presence run.
	"-live-message-rate", "1000000", "-live-user-message-rate", "1000000",
}

// spawnCorkboard starts the corkboard binary on a fresh data folder under
// parent and a free loopback port; login codes land in its outbox. With
// pprof set it also serves Go's profiler on another free loopback port
// (corkboard -pprof), at the returned pprofBase. extra are more flags.
func spawnCorkboard(ctx context.Context, bin string, pprof bool, parent string, keep bool, extra ...string) (*spawned, error) {
	return spawnCorkboardEnv(ctx, bin, pprof, parent, keep, nil, extra...)
}

// spawnCorkboardEnv is spawnCorkboard with env added to the server's
// environment (GODEBUG=gctrace=1 for the timeline).
func spawnCorkboardEnv(ctx context.Context, bin string, pprof bool, parent string, keep bool, env []string, extra ...string) (*spawned, error) {
	dir, err := os.MkdirTemp(parent, "corkboard-load-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// The tool is one person opening every connection and pushing at the
	// whole rate: the server's per-person caps and push budgets (abuse
	// limits) are lifted so that they are not what is measured.
	args := append([]string{"-addr", "127.0.0.1:" + strconv.Itoa(port), "-data", filepath.Join(dir, "data"), "-public-url", base}, unlimitedLive...)
	args = append(args, extra...)
	var pprofBase string
	if pprof {
		pport, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(pport)
		args, pprofBase = append(args, "-pprof", addr), "http://"+addr
	}
	// The server reads CORKBOARD_* variables; the flags above win, and the
	// rest of the environment is the operator's.
	s := &spawned{name: "corkboard", cmd: exec.Command(bin, args...), dir: dir, keep: keep, base: base, pprofBase: pprofBase}
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	if err := s.start(ctx, base+"/api/auth/me"); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// outbox is the spawned server's outbox folder.
func (s *spawned) outbox() string { return filepath.Join(s.dir, "data", "outbox") }

// spawnYWS starts y-websocket's server from dir (bench/yws, after npm
// install) on a free loopback port.
func spawnYWS(ctx context.Context, dir, parent string, keep bool) (*spawned, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "node_modules", "y-websocket", "bin", "server.js")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%s: run npm install in %s first: %w", script, dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "corkboard-load-yws-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port))
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	s := &spawned{name: "y-websocket", cmd: cmd, dir: tmp, keep: keep, base: base}
	if err := s.start(ctx, base+"/"); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// generateUpdates runs bench/yws/gen-updates.js for n updates into a file
// in tmp and returns its path.
func generateUpdates(ctx context.Context, dir, tmp string, n int) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "updates.bin")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "gen-updates.js"), strconv.Itoa(n), out)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gen-updates.js: %w: %s", err, b)
	}
	return out, nil
}

// centrifugoConfig is the configuration the tool starts Centrifugo with
// (v6 layout): the in-memory engine (its default), no history and no
// presence (channel defaults), clients connecting without a token
// (client.insecure, the test channels only exist on loopback), and the
// HTTP API behind a key made for this run. Its log stays at warnings:
// what Centrifugo logs per connection at info would be measured too.
func centrifugoConfig(port int, apiKey string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"http_server": map[string]any{"address": "127.0.0.1", "port": port},
		"log":         map[string]any{"level": "warn"},
		"engine":      map[string]any{"type": "memory"},
		"http_api":    map[string]any{"key": apiKey},
		"client":      map[string]any{"insecure": true},
		"channel": map[string]any{"without_namespace": map[string]any{
			"allow_subscribe_for_client":    true,
			"allow_subscribe_for_anonymous": true,
			"presence":                      false,
			"history_size":                  0,
		}},
	}, "", "  ")
}

// spawnCentrifugo starts a Centrifugo binary on a fresh config in a temp
// folder under parent and a free loopback port, with a new API key.
func spawnCentrifugo(ctx context.Context, bin, parent string, keep bool, env []string) (*spawned, string, error) {
	dir, err := os.MkdirTemp(parent, "corkboard-load-centrifugo-")
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	apiKey := hex.EncodeToString(key)
	conf, err := centrifugoConfig(port, apiKey)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	s := &spawned{name: "centrifugo", cmd: exec.Command(bin, "--config", path), dir: dir, keep: keep, base: base}
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	if err := s.start(ctx, base+"/"); err != nil {
		s.stop()
		return nil, "", err
	}
	return s, apiKey, nil
}
