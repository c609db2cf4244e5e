package livesock

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"strings"
)

// upgrade answers a client's opening handshake (RFC 6455 section 4.2.2)
// for the fast engine and hijacks the connection: the same checks, the
// same refusals (status, headers, body) and the same answer as the plain
// engine's coder/websocket Accept with the options livesock gives it (no
// subprotocol, no compression), so that a client cannot tell the engines
// apart. It returns the connection and what net/http had read past the
// request (a client may send frames right after it); on an error the
// request has been answered.
func upgrade(w http.ResponseWriter, r *http.Request, originPatterns []string, log *slog.Logger) (net.Conn, []byte, error) {
	if code, err := checkHandshake(w, r); err != nil {
		http.Error(w, err.Error(), code)
		return nil, nil, err
	}
	if err := checkOrigin(r, originPatterns); err != nil {
		if errors.Is(err, path.ErrBadPattern) {
			log.Warn("live: bad origin pattern", slog.Any("err", err))
			err = errors.New(http.StatusText(http.StatusForbidden))
		}
		http.Error(w, err.Error(), http.StatusForbidden)
		return nil, nil, err
	}
	if !canHijack(w) {
		http.Error(w, http.StatusText(http.StatusNotImplemented), http.StatusNotImplemented)
		return nil, nil, errors.New("livesock: the response writer cannot hijack its connection")
	}
	h := w.Header()
	h.Set("Upgrade", "websocket")
	h.Set("Connection", "Upgrade")
	h.Set("Sec-WebSocket-Accept", acceptKey(r.Header.Get("Sec-WebSocket-Key")))
	// net/http writes the 101 when the connection is hijacked; writing it
	// through w lets middleware see the status.
	w.WriteHeader(http.StatusSwitchingProtocols)
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return nil, nil, fmt.Errorf("livesock: hijack: %w", err)
	}
	// net/http's buffers (and the request) are not kept: what its reader
	// holds past the request is copied out, and the connection is read
	// and written directly from now on.
	var ahead []byte
	if n := brw.Reader.Buffered(); n > 0 {
		p, _ := brw.Reader.Peek(n)
		ahead = bytes.Clone(p)
	}
	return conn, ahead, nil
}

// checkHandshake checks the request as coder/websocket's Accept does, in
// the same order, and gives the status to refuse it with.
func checkHandshake(w http.ResponseWriter, r *http.Request) (int, error) {
	if !r.ProtoAtLeast(1, 1) {
		return http.StatusUpgradeRequired, fmt.Errorf("WebSocket protocol violation: handshake request must be at least HTTP/1.1: %q", r.Proto)
	}
	if !hasToken(r.Header, "Connection", "Upgrade") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return http.StatusUpgradeRequired, fmt.Errorf("WebSocket protocol violation: Connection header %q does not contain Upgrade", r.Header.Get("Connection"))
	}
	if !hasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return http.StatusUpgradeRequired, fmt.Errorf("WebSocket protocol violation: Upgrade header %q does not contain websocket", r.Header.Get("Upgrade"))
	}
	if r.Method != http.MethodGet {
		return http.StatusMethodNotAllowed, fmt.Errorf("WebSocket protocol violation: handshake request method is not GET but %q", r.Method)
	}
	if v := r.Header.Get("Sec-WebSocket-Version"); v != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return http.StatusBadRequest, fmt.Errorf("unsupported WebSocket protocol version (only 13 is supported): %q", v)
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	switch {
	case len(keys) == 0:
		return http.StatusBadRequest, errors.New("WebSocket protocol violation: missing Sec-WebSocket-Key")
	case len(keys) > 1:
		return http.StatusBadRequest, errors.New("WebSocket protocol violation: multiple Sec-WebSocket-Key headers")
	}
	key := strings.TrimSpace(keys[0])
	if v, err := base64.StdEncoding.DecodeString(key); err != nil || len(v) != 16 {
		return http.StatusBadRequest, fmt.Errorf("WebSocket protocol violation: invalid Sec-WebSocket-Key %q, must be a 16 byte base64 encoded string", key)
	}
	return 0, nil
}

// hasToken reports whether a comma-separated header holds token, in any
// case.
func hasToken(h http.Header, key, token string) bool {
	for _, v := range h[textproto.CanonicalMIMEHeaderKey(key)] {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// checkOrigin lets a request without an Origin through (not a browser),
// and one from a page of the request's own host or of a host matching one
// of patterns (path.Match, in any case; a pattern with "://" matches the
// scheme too): the policy of coder/websocket's AcceptOptions.OriginPatterns,
// which the plain engine applies.
func checkOrigin(r *http.Request, patterns []string) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil {
		return fmt.Errorf("failed to parse Origin header %q: %w", origin, err)
	}
	if strings.EqualFold(r.Host, u.Host) {
		return nil
	}
	for _, p := range patterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		ok, err := path.Match(strings.ToLower(p), strings.ToLower(target))
		if err != nil {
			return fmt.Errorf("failed to parse path pattern %q: %w", p, err)
		}
		if ok {
			return nil
		}
	}
	if u.Host == "" {
		return fmt.Errorf("request Origin %q is not a valid URL with a host", origin)
	}
	return fmt.Errorf("request Origin %q is not authorized for Host %q", u.Host, r.Host)
}

// canHijack reports whether w, or a writer it wraps (Unwrap, as
// http.ResponseController looks), can hand over its connection.
func canHijack(w http.ResponseWriter) bool {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// acceptKey is Sec-WebSocket-Accept for a client's Sec-WebSocket-Key (RFC
// 6455 section 4.2.2, item 5.4): SHA-1 of the key and the protocol's GUID,
// in base64.
func acceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte("258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
