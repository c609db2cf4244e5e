// Command live is a WebSocket Corkboard client: it logs in with a one-time
// code, claims or opens a board, joins its live channel and prints changes
// and presence as they happen. Each line typed is pushed as a note;
// "/pointer X Y" moves your pointer. When the server drops the connection
// (a restart, or this client falling behind) it reconnects with the last
// version it has, and the server sends what it missed. It uses only the
// public HTTP API.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"corkboard/examples/client"
)

// Close codes of the live protocol (docs/live-protocol.md).
const (
	closeGoingAway = 1001
	closeForbidden = 4003
	closeResync    = 4008
)

func main() {
	base := flag.String("url", "http://localhost:8080", "Corkboard's address")
	email := flag.String("email", "", "your e-mail address (required)")
	boardID := flag.String("board", "demo", "board ID: 1 to 64 of A-Z a-z 0-9 _ -")
	flag.Parse()
	if *email == "" {
		fmt.Fprintln(os.Stderr, "live: -email is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := client.New(*base)
	if err := run(ctx, c, *email, *boardID); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c *client.Client, email, boardID string) error {
	in := bufio.NewReader(os.Stdin)
	if err := c.Login(ctx, email, in); err != nil {
		return err
	}
	if _, err := c.OpenBoard(ctx, boardID); err != nil {
		return err
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	fmt.Println(`type a line to push it as a note, "/pointer X Y" to move your pointer, Ctrl-C to quit`)

	var version int64 // the last version this client has applied
	backoff := time.Second
	for {
		code, err := connect(ctx, c, boardID, &version, lines)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch code {
		case websocket.StatusNormalClosure:
			return nil
		case closeForbidden:
			return errors.New("your access to the board was withdrawn")
		case closeResync:
			fmt.Println("-- fell behind; reconnecting for what was missed")
			backoff = 0
		case closeGoingAway:
			fmt.Println("-- the server is restarting; reconnecting")
		default:
			fmt.Printf("-- connection lost (%v); reconnecting\n", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff+time.Second, 30*time.Second)
	}
}

// message is any server message; type says which fields are set.
type message struct {
	Type          string `json:"type"`
	ID            string `json:"id"`
	From          string `json:"from"`
	Since         int64  `json:"since"`
	ServerVersion int64  `json:"serverVersion"`
	Reset         bool   `json:"reset"`
	Board         struct {
		Name string `json:"name"`
	} `json:"board"`
	Notes []struct {
		ID, Title, Content string
		Version            int64
	} `json:"notes"`
	DeletedNoteIDs []string `json:"deletedNoteIds"`
	You            struct {
		ID, Email, Color string
		CanEdit          bool
	} `json:"you"`
	Present []struct{ ID, Email, Color string } `json:"present"`
	// PresentCount is how many others are here (present is a page).
	PresentCount int `json:"presentCount"`
	// Joined, Left and Count are a presence batch's.
	Joined []struct{ ID, Email, Color string } `json:"joined"`
	Left   []string                            `json:"left"`
	Count  int                                 `json:"count"`
	Email  string                              `json:"email"`
	Color  string                              `json:"color"`
	X, Y   float64
	Status int    `json:"status"`
	Error  string `json:"error"`
	Field  string `json:"field"`
}

// connect runs one connection until it closes and returns its close code.
func connect(ctx context.Context, c *client.Client, boardID string, version *int64, lines <-chan string) (websocket.StatusCode, error) {
	u := "ws" + strings.TrimPrefix(c.Base(), "http") + fmt.Sprintf("/api/boards/%s/live?since=%d", boardID, *version)
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	conn, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"session=" + c.Session()}}})
	cancel()
	if err != nil {
		return -1, err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(-1) // the server's messages may be as large as a push

	cctx, stop := context.WithCancel(ctx)
	defer stop()
	go sendLines(cctx, conn, lines)

	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return websocket.CloseStatus(err), err
		}
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			fmt.Println("?? undecodable message:", err)
			continue
		}
		if m.Type == "changes" && !showChanges(m, version) {
			conn.Close(websocket.StatusNormalClosure, "resync")
			return closeResync, nil
		}
		show(m, version)
	}
}

// sendLines turns each typed line into a message on the socket until ctx
// ends, the socket fails, or lines closes (which closes the socket).
func sendLines(ctx context.Context, conn *websocket.Conn, lines <-chan string) {
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case line, ok := <-lines:
			if !ok {
				conn.Close(websocket.StatusNormalClosure, "bye")
				return
			}
			msg := lineToMessage(line, &n)
			if msg == nil {
				continue
			}
			b, _ := json.Marshal(msg)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// show prints a server message other than "changes".
func show(m message, version *int64) {
	switch m.Type {
	case "hello":
		fmt.Printf("-- connected as %s (%s, can edit: %v) at version %d\n", m.You.Email, m.You.Color, m.You.CanEdit, m.ServerVersion)
		for _, p := range m.Present {
			fmt.Printf("   here: %s (%s)\n", p.Email, p.Color)
		}
		if more := m.PresentCount - len(m.Present); more > 0 {
			fmt.Printf("   and %d more\n", more)
		}
	case "ack":
		fmt.Printf("-- your push %s is version %d\n", m.ID, m.ServerVersion)
		*version = max(*version, m.ServerVersion)
	case "error":
		fmt.Printf("!! %s: %d %s %s\n", m.ID, m.Status, m.Error, m.Field)
	case "presence":
		for _, p := range m.Joined {
			fmt.Printf("++ %s joined (%s)\n", p.Email, p.Color)
		}
		if len(m.Left) > 0 {
			fmt.Printf("-- %d left\n", len(m.Left))
		}
		fmt.Printf("   %d here\n", m.Count)
	case "pointer":
		fmt.Printf("   %s's pointer at %.0f,%.0f\n", m.Email, m.X, m.Y)
	}
}

// showChanges prints a "changes" message and moves version past it. It
// reports false when the client missed versions and must reconnect.
func showChanges(m message, version *int64) bool {
	switch {
	case m.Reset:
		// The server could not patch this client's copy (its version is
		// older than the forgotten deletions, or newer than the board):
		// this full state replaces it, whatever the versions.
		fmt.Println("-- reset: the local copy is replaced by this full state")
	case m.Since > *version:
		// A gap: this client missed versions. Reconnecting with its
		// version makes the server send them.
		fmt.Printf("-- gap (have %d, change starts after %d); resyncing\n", *version, m.Since)
		return false
	case m.ServerVersion <= *version:
		return true // already applied (a catch-up covered it)
	}
	who := "someone (REST)"
	if m.From != "" {
		who = "connection " + m.From
	}
	fmt.Printf("-- version %d (%q) by %s\n", m.ServerVersion, m.Board.Name, who)
	for _, n := range m.Notes {
		fmt.Printf("   note %s: %q\n", n.ID, client.FirstLine(n.Title, n.Content))
	}
	for _, id := range m.DeletedNoteIDs {
		fmt.Printf("   deleted note %s\n", id)
	}
	*version = m.ServerVersion
	return true
}

// lineToMessage turns a typed line into a push or pointer message.
func lineToMessage(line string, n *int) any {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if rest, ok := strings.CutPrefix(line, "/pointer "); ok {
		f := strings.Fields(rest)
		if len(f) != 2 {
			fmt.Println("usage: /pointer X Y")
			return nil
		}
		x, err1 := strconv.ParseFloat(f[0], 64)
		y, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			fmt.Println("usage: /pointer X Y")
			return nil
		}
		return map[string]any{"type": "pointer", "x": x, "y": y}
	}
	*n++
	id := fmt.Sprintf("live-%d-%d", time.Now().UnixNano(), *n)
	return map[string]any{
		"type":           "push",
		"id":             strconv.Itoa(*n),
		"idempotencyKey": id,
		"push": map[string]any{"notes": map[string]any{"upserted": []map[string]any{{
			"id": id, "title": "From live", "content": line, "x": 40 * *n, "y": 40 * *n, "color": "blue", "type": "sticky",
		}}}},
	}
}
