//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"corkboard/tools/internal/corkboardbin"
)

// node is one corkboard process of the cluster: the chaos tool starts,
// kills, stops and resumes it through its process only.
type node struct {
	i    int
	bin  string
	addr string
	data string
	args []string
	// metrics is the address of its -metrics-addr (GET /metrics).
	metrics string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd exited
	stopped bool          // SIGSTOPped
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// newNode prepares node i on the PostgreSQL database dsn, or on a bbolt
// file of its own in its data folder when dsn is "".
func newNode(i int, bin, work, dsn string, nodePoll time.Duration) (*node, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(work, fmt.Sprintf("node%d", i))
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("node %d: %w", i, err)
	}
	args := []string{
		"-addr", addr, "-data", data, "-metrics-addr", metrics,
		"-node-id", fmt.Sprintf("chaos%d", i), "-node-poll", nodePoll.String(),
		// Every client logs in from 127.0.0.1 at the start.
		"-otp-ip-limit", "10000/1m", "-otp-email-limit", "100/1m",
		"-otp-verify-ip-limit", "10000/1m", "-otp-verify-email-limit", "100/1m",
		"-cache-ttl", "1s", "-shutdown-grace", "2s",
	}
	if dsn != "" {
		args = append(args, "-store", dsn)
	}
	return &node{i: i, bin: bin, addr: addr, data: data, args: args, metrics: metrics}, nil
}

func (n *node) base() string { return "http://" + n.addr }

// start starts the process and waits (up to timeout) until it is ready.
func (n *node) start(ctx context.Context, timeout time.Duration) error {
	log, err := os.OpenFile(filepath.Join(n.data, "node.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("node %d: log: %w", n.i, err)
	}
	cmd := exec.Command(n.bin, n.args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("node %d: start: %w", n.i, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	n.mu.Lock()
	n.cmd, n.done, n.stopped = cmd, done, false
	n.mu.Unlock()
	return n.waitReady(ctx, timeout, done)
}

func (n *node) waitReady(ctx context.Context, timeout time.Duration, done chan struct{}) error {
	deadline := time.Now().Add(timeout)
	c := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", n.base()+"/readyz", nil)
		if res, err := c.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-done:
			return fmt.Errorf("node %d exited while starting (see %s)", n.i, filepath.Join(n.data, "node.log"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d not ready after %s (see %s)", n.i, timeout, filepath.Join(n.data, "node.log"))
		}
	}
}

// signal sends sig to the running process.
func (n *node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return fmt.Errorf("node %d not running", n.i)
	}
	switch sig {
	case syscall.SIGSTOP:
		n.stopped = true
	case syscall.SIGCONT:
		n.stopped = false
	}
	return n.cmd.Process.Signal(sig)
}

// kill kills the process with SIGKILL and waits for it to be gone.
func (n *node) kill() error {
	if err := n.signal(syscall.SIGKILL); err != nil {
		return err
	}
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	<-done
	return nil
}

// shutdown resumes a stopped process and ends it with SIGTERM (SIGKILL
// after a grace).
func (n *node) shutdown() {
	n.mu.Lock()
	cmd, done, stopped := n.cmd, n.done, n.stopped
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	if stopped {
		_ = cmd.Process.Signal(syscall.SIGCONT)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// buildCorkboard builds the corkboard binary into dir, in the product's
// module (corkboardbin says why there).
func buildCorkboard(ctx context.Context, dir string) (string, error) {
	return corkboardbin.Build(ctx, dir)
}

// session is a logged-in person: the cookie works on every node.
type session struct {
	email, cookie string
}

var codeRe = regexp.MustCompile(`\b(\d{6})\b`)

// login asks n for a code, reads it from n's outbox and verifies it.
func login(ctx context.Context, n *node, email string) (session, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	if _, err := call(ctx, c, "POST", n.base()+"/api/auth/send-otp", "", map[string]string{"email": email}, nil); err != nil {
		return session{}, fmt.Errorf("send-otp %s: %w", email, err)
	}
	var code string
	deadline := time.Now().Add(30 * time.Second)
	for code == "" {
		var err error
		if code, err = findCode(filepath.Join(n.data, "outbox"), email); err != nil {
			return session{}, err
		}
		if code != "" {
			break
		}
		if time.Now().After(deadline) {
			return session{}, fmt.Errorf("no login code for %s in %s/outbox", email, n.data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	body, _ := json.Marshal(map[string]string{"email": email, "code": code})
	req, _ := http.NewRequestWithContext(ctx, "POST", n.base()+"/api/auth/verify-otp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return session{}, fmt.Errorf("verify-otp %s: %w", email, err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
		return session{}, fmt.Errorf("verify-otp %s: %s %s", email, res.Status, b)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == "session" {
			return session{email: email, cookie: ck.Value}, nil
		}
	}
	return session{}, fmt.Errorf("verify-otp %s: no session cookie", email)
}

// findCode returns the code of a mail to email in the outbox folder, or "".
// Each address logs in once per run, so any mail to it is the one.
func findCode(dir, email string) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		head, _, _ := strings.Cut(string(b), "\r\n\r\n")
		if !strings.Contains(strings.ToLower(head), "to: "+email) && !strings.Contains(strings.ToLower(head), "<"+email+">") {
			continue
		}
		for _, line := range strings.Split(head, "\n") {
			if strings.HasPrefix(strings.ToLower(line), "subject:") {
				if m := codeRe.FindStringSubmatch(line); m != nil {
					return m[1], nil
				}
			}
		}
	}
	return "", nil
}

// statusError is a non-2xx answer.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// call sends a JSON request with the session cookie and decodes the answer
// into out; it returns the answer's headers.
func call(ctx context.Context, c *http.Client, method, url, cookie string, in, out any, header ...string) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "session", Value: cookie})
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
		return res.Header, &statusError{res.StatusCode, strings.TrimSpace(string(b))}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		return res.Header, nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return res.Header, fmt.Errorf("decode %s %s: %w", method, url, err)
	}
	return res.Header, nil
}
