// Command poll is a REST-only Corkboard client: it logs in with a one-time
// code, claims or opens a board, optionally pushes a note, then prints what
// changes: with -wait (the default) each pull is a long poll that the server
// holds until the board changes, otherwise it pulls every few seconds. It
// uses only the public HTTP API.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"corkboard/examples/client"
)

func main() {
	base := flag.String("url", "http://localhost:8080", "Corkboard's address")
	email := flag.String("email", "", "your e-mail address (required)")
	boardID := flag.String("board", "demo", "board ID: 1 to 64 of A-Z a-z 0-9 _ -")
	every := flag.Duration("every", 3*time.Second, "time between pulls without -wait, and before retrying a failed one")
	wait := flag.Int("wait", 25, "long poll: seconds the server may hold a pull until the board changes (0: plain polling every -every; the server caps it at 30)")
	note := flag.String("note", "", "push a note with this text first")
	flag.Parse()
	if *email == "" {
		fmt.Fprintln(os.Stderr, "poll: -email is required")
		os.Exit(2)
	}
	if *wait < 0 || *wait > 30 {
		fmt.Fprintln(os.Stderr, "poll: -wait must be 0 to 30 seconds")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := client.New(*base)
	if err := run(ctx, c, *email, *boardID, *note, *every, *wait); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "poll:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c *client.Client, email, boardID, note string, every time.Duration, wait int) error {
	if err := c.Login(ctx, email, bufio.NewReader(os.Stdin)); err != nil {
		return err
	}
	acc, err := c.OpenBoard(ctx, boardID)
	if err != nil {
		return err
	}
	if !acc.IsUnclaimed {
		fmt.Printf("opened board %s (owner: %v, can edit: %v)\n", boardID, acc.IsOwner, acc.CanEdit)
	}
	if note != "" {
		if err := pushNote(ctx, c, boardID, note); err != nil {
			return err
		}
	}
	p := &poller{c: c, boardID: boardID, every: every, wait: wait, notes: map[string]noteRow{}}
	return p.loop(ctx)
}

// pushNote adds a sticky note holding text to the board.
func pushNote(ctx context.Context, c *client.Client, boardID, text string) error {
	id := fmt.Sprintf("poll-%d", time.Now().UnixNano())
	push := map[string]any{"notes": map[string]any{"upserted": []map[string]any{{"id": id, "title": "From poll", "content": text, "x": 100, "y": 100, "color": "yellow", "type": "sticky"}}}}
	var res struct{ ServerVersion int64 }
	// The idempotency key makes a retry of this request safe.
	if err := c.Do(ctx, "POST", "/api/boards/"+boardID+"/sync", push, &res, "Idempotency-Key", id); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	fmt.Printf("pushed note %s → version %d\n", id, res.ServerVersion)
	return nil
}

// poller is the client's copy of the board: what it knows and at which
// version, and how it asks for more.
type poller struct {
	c       *client.Client
	boardID string
	every   time.Duration
	wait    int

	notes   map[string]noteRow
	version int64
	pulled  bool // the first pull (since=0) is the whole board
}

// loop pulls until ctx ends: after a long poll says the board moved, or
// every p.every without long polls.
func (p *poller) loop(ctx context.Context) error {
	for {
		if p.pulled && p.wait > 0 {
			changed, err := p.waitForChange(ctx)
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
		}
		var ch changes
		if err := p.c.Do(ctx, "GET", fmt.Sprintf("/api/boards/%s/sync?since=%d", p.boardID, p.version), nil, &ch); err != nil {
			fmt.Fprintln(os.Stderr, "pull:", err)
			if !sleep(ctx, p.every) {
				return ctx.Err()
			}
			continue
		}
		p.pulled = true
		if ch.Board != nil { // nil: the {serverVersion} no-change answer
			p.apply(ch)
		}
		if p.wait > 0 {
			continue // the long poll does the waiting
		}
		if !sleep(ctx, p.every) {
			return ctx.Err()
		}
	}
}

// waitForChange is a long poll: the server answers {serverVersion} when
// the board passes p.version, or with p.version itself when the wait runs
// out. Only then is a pull worth making (docs/sync.md, "Long polling"). It
// reports whether the board moved; an error only when ctx ended.
func (p *poller) waitForChange(ctx context.Context) (bool, error) {
	var w struct{ ServerVersion int64 }
	asked := time.Now()
	if err := p.c.Do(ctx, "GET", fmt.Sprintf("/api/boards/%s/sync?since=%d&wait=%d", p.boardID, p.version, p.wait), nil, &w); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// 429 or 503 (too many held polls), a restart: wait, then poll again.
		fmt.Fprintln(os.Stderr, "long poll:", err)
		if !sleep(ctx, p.every) {
			return false, ctx.Err()
		}
		return false, nil
	}
	if w.ServerVersion != p.version {
		return true, nil
	}
	// Nothing changed during the wait. An answer long before the wait ran
	// out means a server that does not hold polls: pause as plain polling
	// does, never spin.
	if time.Since(asked) < time.Duration(p.wait)*time.Second/2 && !sleep(ctx, p.every) {
		return false, ctx.Err()
	}
	return false, nil
}

// apply brings the local copy up to ch and prints what changed.
func (p *poller) apply(ch changes) {
	if ch.Reset {
		fmt.Println("-- reset: replacing the local copy")
		clear(p.notes)
	}
	fmt.Printf("-- board %q at version %d\n", ch.Board.Name, ch.ServerVersion)
	for _, n := range ch.Notes {
		verb := "new"
		if _, ok := p.notes[n.ID]; ok {
			verb = "changed"
		}
		p.notes[n.ID] = n
		fmt.Printf("   %s note %s (v%d): %q\n", verb, n.ID, n.Version, client.FirstLine(n.Title, n.Content))
	}
	for _, id := range ch.DeletedNoteIDs {
		delete(p.notes, id)
		fmt.Printf("   deleted note %s\n", id)
	}
	for _, it := range ch.TrackerItems {
		fmt.Printf("   item %s %s: %q\n", it.ID, it.Key, it.Summary)
	}
	for _, id := range ch.DeletedTrackerItemIDs {
		fmt.Printf("   deleted item %s\n", id)
	}
	p.version = ch.ServerVersion
}

// sleep waits d, or less when ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
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
