// Command poll is a REST-only Corkboard client: it logs in with a one-time
// code, claims or opens a board, optionally pushes a note, then pulls every
// few seconds and prints what changed. It uses only the public HTTP API.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	base := flag.String("url", "http://localhost:8080", "Corkboard's address")
	email := flag.String("email", "", "your e-mail address (required)")
	boardID := flag.String("board", "demo", "board ID: 1 to 64 of A-Z a-z 0-9 _ -")
	every := flag.Duration("every", 3*time.Second, "time between pulls")
	note := flag.String("note", "", "push a note with this text first")
	flag.Parse()
	if *email == "" {
		fmt.Fprintln(os.Stderr, "poll: -email is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := &client{base: strings.TrimRight(*base, "/"), http: &http.Client{Timeout: 30 * time.Second}}
	if err := run(ctx, c, *email, *boardID, *note, *every); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "poll:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c *client, email, boardID, note string, every time.Duration) error {
	if err := c.login(ctx, email, bufio.NewReader(os.Stdin)); err != nil {
		return err
	}
	if err := c.openBoard(ctx, boardID); err != nil {
		return err
	}
	if note != "" {
		id := fmt.Sprintf("poll-%d", time.Now().UnixNano())
		push := map[string]any{"notes": map[string]any{"upserted": []map[string]any{{"id": id, "title": "From poll", "content": note, "x": 100, "y": 100, "color": "yellow", "type": "sticky"}}}}
		var res struct{ ServerVersion int64 }
		// The idempotency key makes a retry of this request safe.
		if err := c.do(ctx, "POST", "/api/boards/"+boardID+"/sync", push, &res, "Idempotency-Key", id); err != nil {
			return fmt.Errorf("push: %w", err)
		}
		fmt.Printf("pushed note %s → version %d\n", id, res.ServerVersion)
	}

	// The client's copy of the board: what it knows and at which version.
	notes := map[string]noteRow{}
	var version int64
	for {
		var ch changes
		if err := c.do(ctx, "GET", fmt.Sprintf("/api/boards/%s/sync?since=%d", boardID, version), nil, &ch); err != nil {
			fmt.Fprintln(os.Stderr, "pull:", err)
		} else if ch.Board != nil { // nil: the {serverVersion} no-change answer
			if ch.Reset {
				fmt.Println("-- reset: replacing the local copy")
				clear(notes)
			}
			fmt.Printf("-- board %q at version %d\n", ch.Board.Name, ch.ServerVersion)
			for _, n := range ch.Notes {
				verb := "new"
				if _, ok := notes[n.ID]; ok {
					verb = "changed"
				}
				notes[n.ID] = n
				fmt.Printf("   %s note %s (v%d): %q\n", verb, n.ID, n.Version, firstLine(n.Title, n.Content))
			}
			for _, id := range ch.DeletedNoteIDs {
				delete(notes, id)
				fmt.Printf("   deleted note %s\n", id)
			}
			for _, it := range ch.TrackerItems {
				fmt.Printf("   item %s %s: %q\n", it.ID, it.Key, it.Summary)
			}
			for _, id := range ch.DeletedTrackerItemIDs {
				fmt.Printf("   deleted item %s\n", id)
			}
			version = ch.ServerVersion
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

type noteRow struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Content string `json:"content"`
	Version int64  `json:"version"`
}

type changes struct {
	Board *struct {
		Name string `json:"name"`
	} `json:"board"`
	Notes          []noteRow `json:"notes"`
	DeletedNoteIDs []string  `json:"deletedNoteIds"`
	TrackerItems   []struct {
		ID, Key, Summary string
	} `json:"trackerItems"`
	DeletedTrackerItemIDs []string `json:"deletedTrackerItemIds"`
	ServerVersion         int64    `json:"serverVersion"`
	Reset                 bool     `json:"reset"`
}

func firstLine(title, content string) string {
	s := content
	if s == "" {
		s = title
	}
	s, _, _ = strings.Cut(s, "\n")
	// Cut at 60 characters, not bytes, so a multi-byte character is never split.
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return s
}

// client talks to the API with the session cookie.
type client struct {
	base    string
	http    *http.Client
	session string
}

// login asks for a code by e-mail, reads it from in, and keeps the session.
func (c *client) login(ctx context.Context, email string, in *bufio.Reader) error {
	if err := c.do(ctx, "POST", "/api/auth/send-otp", map[string]string{"email": email}, nil); err != nil {
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

// openBoard claims the board when nobody has, or checks access to it.
func (c *client) openBoard(ctx context.Context, id string) error {
	var acc struct {
		HasAccess, IsOwner, IsUnclaimed, CanEdit bool
	}
	if err := c.do(ctx, "GET", "/api/boards/"+id+"/access", nil, &acc); err != nil {
		return fmt.Errorf("access: %w", err)
	}
	switch {
	case acc.IsUnclaimed:
		if err := c.do(ctx, "POST", "/api/boards/"+id+"/access", nil, nil); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		fmt.Printf("claimed board %s\n", id)
	case !acc.HasAccess:
		return fmt.Errorf("board %s belongs to someone else: ask its owner to invite you", id)
	default:
		fmt.Printf("opened board %s (owner: %v, can edit: %v)\n", id, acc.IsOwner, acc.CanEdit)
	}
	return nil
}

// do sends a JSON request and decodes a JSON answer into out (if not nil);
// extra is header name/value pairs.
func (c *client) do(ctx context.Context, method, path string, in, out any, extra ...string) error {
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
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
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
