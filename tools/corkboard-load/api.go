package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// api talks to one Corkboard server as one logged-in user. Every request
// carries the session cookie and the server's own Origin, as a page of the
// server would.
type api struct {
	base    string // http://127.0.0.1:8080, no trailing slash
	origin  string
	session string
	http    *http.Client // keep-alive REST
	dial    *http.Client // WebSocket handshakes (connections are hijacked)
}

// maxAPIBody bounds every answer the tool reads.
const maxAPIBody = 8 << 20

func newAPI(base string, conns int) (*api, error) {
	u, err := checkLoopbackURL(base)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback only, never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	dialTr := &http.Transport{
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	return &api{
		base:   strings.TrimRight(u.String(), "/"),
		origin: u.Scheme + "://" + u.Host,
		http:   &http.Client{Transport: tr, Timeout: 30 * time.Second},
		dial:   &http.Client{Transport: dialTr},
	}, nil
}

// checkLoopbackURL accepts only http URLs whose host is a loopback address
// (or localhost): the load tool never sends traffic anywhere else.
func checkLoopbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "ws" {
		return nil, fmt.Errorf("server URL %q: want http:// (or ws://) on a loopback address", raw)
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("server URL %q: only loopback addresses (127.0.0.0/8, ::1, localhost) are allowed", raw)
	}
	return u, nil
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// apiError is a non-2xx answer.
type apiError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, strings.TrimSpace(e.Body))
}

// do sends a JSON request (body nil for none) and decodes a 2xx answer into
// out (nil to discard). It returns the response for its headers.
func (a *api) do(ctx context.Context, method, path string, body, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Origin", a.origin)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.session != "" {
		req.Header.Set("Cookie", "session="+a.session)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAPIBody))
	if err != nil {
		return res, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		return res, &apiError{Method: method, Path: path, Status: res.StatusCode, Body: string(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return res, fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return res, nil
}

// login logs email in through the real endpoints: send-otp, the code from
// the server's outbox folder, verify-otp; it keeps the session cookie.
func (a *api) login(ctx context.Context, email, outbox string) error {
	sent := time.Now()
	if _, err := a.do(ctx, "POST", "/api/auth/send-otp", map[string]string{"email": email}, nil); err != nil {
		return fmt.Errorf("send-otp: %w", err)
	}
	// File times are coarser than our clock; a second of slack, and the
	// newest mail wins (each send voids the previous code).
	code, err := waitCode(ctx, outbox, email, sent.Add(-time.Second), 15*time.Second)
	if err != nil {
		return err
	}
	res, err := a.do(ctx, "POST", "/api/auth/verify-otp", map[string]string{"email": email, "code": code}, nil)
	if err != nil {
		return fmt.Errorf("verify-otp: %w", err)
	}
	for _, c := range res.Cookies() {
		if c.Name == "session" && c.Value != "" {
			a.session = c.Value
			return nil
		}
	}
	return fmt.Errorf("verify-otp set no session cookie")
}

// sessionValid reports whether the current session still works.
func (a *api) sessionValid(ctx context.Context) bool {
	if a.session == "" {
		return false
	}
	_, err := a.do(ctx, "GET", "/api/auth/me", nil, nil)
	return err == nil
}

// claim claims a board for the logged-in user.
func (a *api) claim(ctx context.Context, boardID string) error {
	if _, err := a.do(ctx, "POST", "/api/boards/"+boardID+"/access", nil, nil); err != nil {
		return fmt.Errorf("claim %s: %w", boardID, err)
	}
	return nil
}

// versionOf returns a board's current version (a full pull).
func (a *api) versionOf(ctx context.Context, boardID string) (int64, error) {
	var v struct {
		ServerVersion int64 `json:"serverVersion"`
	}
	if _, err := a.do(ctx, "GET", "/api/boards/"+boardID+"/sync?since=0", nil, &v); err != nil {
		return 0, err
	}
	return v.ServerVersion, nil
}

// dialLive opens a board's live channel.
func (a *api) dialLive(ctx context.Context, boardID string) (*websocket.Conn, error) {
	h := http.Header{}
	h.Set("Origin", a.origin)
	h.Set("Cookie", "session="+a.session)
	url := "ws" + strings.TrimPrefix(a.base, "http") + "/api/boards/" + boardID + "/live"
	c, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: a.dial, HTTPHeader: h})
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("live %s: %d: %w", boardID, res.StatusCode, err)
		}
		return nil, fmt.Errorf("live %s: %w", boardID, err)
	}
	// hello lists everyone present: 1,000 subscribers are ~80 KB.
	c.SetReadLimit(4 << 20)
	return c, nil
}
