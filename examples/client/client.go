// Package client is what the example clients share: logging in with a
// one-time code, opening (or claiming) a board, and JSON calls to the REST
// API with the session cookie. Like the examples, it uses only the public
// HTTP API.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client talks to one Corkboard server's REST API with the session cookie
// Login obtained.
type Client struct {
	base    string
	http    *http.Client
	session string
}

// New returns a client of the server at base (e.g. http://localhost:8080)
// whose requests time out after 45 seconds (a long poll is held up to 30).
func New(base string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Timeout: 45 * time.Second}}
}

// Base returns the server's address, without a trailing slash.
func (c *Client) Base() string { return c.base }

// Session returns the session cookie's value, empty before Login.
func (c *Client) Session() string { return c.session }

// Login asks for a code by e-mail, reads it from in, and keeps the session.
func (c *Client) Login(ctx context.Context, email string, in *bufio.Reader) error {
	if err := c.Do(ctx, "POST", "/api/auth/send-otp", map[string]string{"email": email}, nil); err != nil {
		return fmt.Errorf("send-otp: %w", err)
	}
	fmt.Printf("A login code was sent to %s (without -smtp, the server logs it).\ncode: ", email)
	code, err := in.ReadString('\n')
	if err != nil {
		return fmt.Errorf("read code: %w", err)
	}
	body, _ := json.Marshal(map[string]string{"email": email, "code": strings.TrimSpace(code)})
	req, _ := http.NewRequestWithContext(ctx, "POST", c.base+"/api/auth/verify-otp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := check(res); err != nil {
		return fmt.Errorf("verify-otp: %w", err)
	}
	// The cookie is Secure; a cookie jar would not send it over plain
	// http://localhost, so the client keeps it itself.
	for _, ck := range res.Cookies() {
		if ck.Name == "session" {
			c.session = ck.Value
		}
	}
	if c.session == "" {
		return errors.New("verify-otp set no session cookie")
	}
	return nil
}

// Access is the caller's standing on a board, as
// GET /api/boards/{id}/access answers it.
type Access struct {
	HasAccess, IsOwner, IsUnclaimed, CanEdit bool
}

// OpenBoard claims the board when nobody has (and says so), or checks that
// the caller may open it. It returns the access as it was before any claim.
func (c *Client) OpenBoard(ctx context.Context, id string) (Access, error) {
	var acc Access
	if err := c.Do(ctx, "GET", "/api/boards/"+id+"/access", nil, &acc); err != nil {
		return Access{}, fmt.Errorf("access: %w", err)
	}
	switch {
	case acc.IsUnclaimed:
		if err := c.Do(ctx, "POST", "/api/boards/"+id+"/access", nil, nil); err != nil {
			return Access{}, fmt.Errorf("claim: %w", err)
		}
		fmt.Printf("claimed board %s\n", id)
	case !acc.HasAccess:
		return Access{}, fmt.Errorf("board %s belongs to someone else: ask its owner to invite you", id)
	}
	return acc, nil
}

// Do sends a JSON request and decodes a JSON answer into out (if not nil);
// header is extra header name/value pairs.
func (c *Client) Do(ctx context.Context, method, path string, in, out any, header ...string) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if c.session != "" {
		req.AddCookie(&http.Cookie{Name: "session", Value: c.session})
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := check(res); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// check turns an error answer into an error with the server's message.
func check(res *http.Response) error {
	if res.StatusCode < 300 {
		return nil
	}
	var e struct{ Error, Field string }
	_ = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&e)
	if e.Field != "" {
		return fmt.Errorf("%s: %s (field %s)", res.Status, e.Error, e.Field)
	}
	return fmt.Errorf("%s: %s", res.Status, e.Error)
}

// FirstLine is a one-line summary of a note for printing: the first line of
// its content (or of its title when the content is empty), cut at 60
// characters, not bytes, so a multi-byte character is never split.
func FirstLine(title, content string) string {
	s := content
	if s == "" {
		s = title
	}
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return s
}
