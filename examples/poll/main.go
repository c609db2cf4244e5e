// Command poll is a REST-only Corkboard client: it logs in with a one-time
// code, claims or opens a board, optionally pushes a note, then pulls every
// few seconds and prints what changed. It uses only the public HTTP API.
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
	every := flag.Duration("every", 3*time.Second, "time between pulls")
	note := flag.String("note", "", "push a note with this text first")
	flag.Parse()
	if *email == "" {
		fmt.Fprintln(os.Stderr, "poll: -email is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := client.New(*base)
	if err := run(ctx, c, *email, *boardID, *note, *every); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "poll:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c *client.Client, email, boardID, note string, every time.Duration) error {
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
		id := fmt.Sprintf("poll-%d", time.Now().UnixNano())
		push := map[string]any{"notes": map[string]any{"upserted": []map[string]any{{"id": id, "title": "From poll", "content": note, "x": 100, "y": 100, "color": "yellow", "type": "sticky"}}}}
		var res struct{ ServerVersion int64 }
		// The idempotency key makes a retry of this request safe.
		if err := c.Do(ctx, "POST", "/api/boards/"+boardID+"/sync", push, &res, "Idempotency-Key", id); err != nil {
			return fmt.Errorf("push: %w", err)
		}
		fmt.Printf("pushed note %s → version %d\n", id, res.ServerVersion)
	}

	// The client's copy of the board: what it knows and at which version.
	notes := map[string]noteRow{}
	var version int64
	for {
		var ch changes
		if err := c.Do(ctx, "GET", fmt.Sprintf("/api/boards/%s/sync?since=%d", boardID, version), nil, &ch); err != nil {
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
				fmt.Printf("   %s note %s (v%d): %q\n", verb, n.ID, n.Version, client.FirstLine(n.Title, n.Content))
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
