package livesock_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"corkboard/internal/livesock"
)

// quietConn is a handler that reads nothing of interest.
type quietConn struct{ ended chan struct{} }

func (quietConn) Message([]byte) {}
func (quietConn) Control() bool  { return true }
func (quietConn) Pong()          {}
func (q quietConn) Ended()       { close(q.ended) }

// handshakeServer serves upgrades on an engine of kind, allowing pages of
// the hosts origins match besides the request's own; each accepted
// connection writes "hello" and is closed by the test's end.
func handshakeServer(t *testing.T, kind livesock.Kind, origins []string) *httptest.Server {
	t.Helper()
	e, err := livesock.New(kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := e.Accept(w, r, quietConn{ended: make(chan struct{})}, livesock.Options{OriginPatterns: origins})
		if err != nil {
			return
		}
		if err := conn.WriteNow(livesock.TextFrame([]byte("hello"))); err != nil {
			conn.CloseNow()
			return
		}
		conn.Read()
	}))
	t.Cleanup(func() {
		srv.Close()
		_ = e.Close()
	})
	return srv
}

// rawRequest sends a request written by hand and reads the answer's
// status line and headers.
func rawRequest(t *testing.T, addr, req string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHandshake: the engines answer a client's opening handshake alike:
// what RFC 6455 section 4.2.1 requires is refused with the same status
// (and the header that tells the client what to send), an Origin that is
// neither the request's host nor allowed is refused, and a good request
// gets the 101 whose Sec-WebSocket-Accept is the key's (the RFC's own
// example, section 1.3).
func TestHandshake(t *testing.T) {
	const key = "dGhlIHNhbXBsZSBub25jZQ=="
	good := map[string]string{
		"Upgrade":               "websocket",
		"Connection":            "keep-alive, Upgrade",
		"Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key":     key,
	}
	tests := []struct {
		name   string
		method string
		change map[string]string // "" removes the header
		status int
		header string // a header the answer must have, "Name: value"
	}{
		{"OK", "GET", nil, http.StatusSwitchingProtocols, "Sec-Websocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="},
		{"OK from an allowed origin", "GET", map[string]string{"Origin": "https://app.example.com"}, http.StatusSwitchingProtocols, "Upgrade: websocket"},
		{"OK from its own host", "GET", map[string]string{"Origin": "http://HOST"}, http.StatusSwitchingProtocols, "Connection: Upgrade"},
		{"ErrOrigin", "GET", map[string]string{"Origin": "https://evil.example.org"}, http.StatusForbidden, ""},
		{"ErrOriginNotURL", "GET", map[string]string{"Origin": "null"}, http.StatusForbidden, ""},
		{"ErrMethod", "POST", nil, http.StatusMethodNotAllowed, ""},
		{"ErrVersion", "GET", map[string]string{"Sec-WebSocket-Version": "8"}, http.StatusBadRequest, "Sec-Websocket-Version: 13"},
		{"ErrNoKey", "GET", map[string]string{"Sec-WebSocket-Key": ""}, http.StatusBadRequest, ""},
		{"ErrShortKey", "GET", map[string]string{"Sec-WebSocket-Key": "c2hvcnQga2V5"}, http.StatusBadRequest, ""},
		{"ErrKeyNotBase64", "GET", map[string]string{"Sec-WebSocket-Key": "not base64 at all!!!!!!"}, http.StatusBadRequest, ""},
		{"ErrNoUpgrade", "GET", map[string]string{"Upgrade": ""}, http.StatusUpgradeRequired, "Upgrade: websocket"},
		{"ErrConnection", "GET", map[string]string{"Connection": "keep-alive"}, http.StatusUpgradeRequired, "Connection: Upgrade"},
	}
	for _, kind := range engines() {
		t.Run(string(kind), func(t *testing.T) {
			srv := handshakeServer(t, kind, []string{"*.example.com"})
			addr := srv.Listener.Addr().String()
			for _, tt := range tests {
				h := map[string]string{}
				for k, v := range good {
					h[k] = v
				}
				for k, v := range tt.change {
					h[k] = strings.ReplaceAll(v, "HOST", addr)
				}
				req := tt.method + " /live HTTP/1.1\r\nHost: " + addr + "\r\n"
				for k, v := range h {
					if v != "" {
						req += k + ": " + v + "\r\n"
					}
				}
				if tt.method == "POST" {
					req += "Content-Length: 0\r\n"
				}
				res := rawRequest(t, addr, req+"\r\n")
				if got := res.StatusCode; got != tt.status {
					t.Errorf("%s: status %d, want %d", tt.name, got, tt.status)
					continue
				}
				if tt.header != "" {
					name, value, _ := strings.Cut(tt.header, ": ")
					if got := res.Header.Get(name); got != value {
						t.Errorf("%s: %s: %q, want %q", tt.name, name, got, value)
					}
				}
				if tt.status == http.StatusSwitchingProtocols {
					for _, name := range []string{"Sec-Websocket-Protocol", "Sec-Websocket-Extensions"} {
						if v := res.Header.Get(name); v != "" {
							t.Errorf("%s: %s %q: no subprotocol or extension is offered", tt.name, name, v)
						}
					}
				}
			}
		})
	}
}

// TestHandshakeRealClient: a real client (coder/websocket's Dial, which
// checks the 101's Sec-WebSocket-Accept against the key it sent) opens a
// connection and reads the hello; asked for compression and a
// subprotocol, it gets neither, from either engine.
func TestHandshakeRealClient(t *testing.T) {
	for _, kind := range engines() {
		t.Run(string(kind), func(t *testing.T) {
			srv := handshakeServer(t, kind, nil)
			ctx, cancel := context.WithTimeout(context.Background(), suiteWait)
			defer cancel()
			c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/live", &websocket.DialOptions{
				Subprotocols:    []string{"corkboard.v1"},
				CompressionMode: websocket.CompressionContextTakeover,
			})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.CloseNow()
			if got := res.Header.Get("Sec-WebSocket-Extensions") + res.Header.Get("Sec-WebSocket-Protocol"); got != "" {
				t.Errorf("answered %q; want no extension or subprotocol", got)
			}
			typ, msg, err := c.Read(ctx)
			if err != nil || typ != websocket.MessageText || string(msg) != "hello" {
				t.Fatalf("read %v %q %v, want the text hello", typ, msg, err)
			}
			if err := c.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(websocket.StatusNormalClosure, "bye"); err != nil {
				t.Fatalf("close handshake: %v", err)
			}
		})
	}
}
