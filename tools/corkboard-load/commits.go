package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"corkboard/board"
	"corkboard/persist/bolt"
)

// CommitsReport is what one bbolt commit of a push costs on a disk
// (-mode commits): the server's own store, in a fresh folder under -tmp,
// one single-note push a commit at -rate for -duration, nothing else. It
// is the floor under every fan-out's p99: a change goes out only once it
// is durable, so a slow fsync of the disk delays every subscriber
// (docs/benchmarks.md, "What a commit costs on this disk").
type CommitsReport struct {
	Folder  string  `json:"folder"`
	Rate    float64 `json:"rate"`
	Commits int     `json:"commits"`
	Latency Summary `json:"latency"`
}

// runCommits times commits of the bbolt store; an error ends the run.
func runCommits(ctx context.Context, cfg *Config, rep *Report, log *slog.Logger) error {
	dir, err := os.MkdirTemp(cfg.TempDir, "corkboard-load-commits-")
	if err != nil {
		return fmt.Errorf("commits: %w", err)
	}
	defer os.RemoveAll(dir)
	db, err := bolt.Open(dir)
	if err != nil {
		return fmt.Errorf("commits: open the store: %w", err)
	}
	defer db.Close()
	const boardID = "commits"
	if _, err := db.ClaimBoard(ctx, boardID, cfg.Email); err != nil {
		return fmt.Errorf("commits: claim: %w", err)
	}
	n := max(1, int(cfg.Rate*cfg.Duration.Seconds()))
	log.Info("timing commits", "folder", dir, "commits", n, "rate", cfg.Rate)
	tick := time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
	defer tick.Stop()
	took := make([]time.Duration, 0, n)
	for i := range n {
		p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{
			ID: "n" + strconv.Itoa(i%50), Title: "Commit", Content: "push " + strconv.Itoa(i), X: float64(i % 50 * 240),
		}}}}
		start := time.Now()
		if _, _, err := db.ApplyPush(ctx, boardID, p, ""); err != nil {
			return fmt.Errorf("commits: push %d: %w", i, err)
		}
		took = append(took, time.Since(start))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	rep.Commits = &CommitsReport{Folder: dir, Rate: cfg.Rate, Commits: len(took), Latency: summarize(took)}
	return nil
}

// printCommits writes the commits line of the text report.
func printCommits(w io.Writer, c *CommitsReport) {
	l := c.Latency
	fmt.Fprintf(w, "bbolt commits in %s: %d at %.0f/s: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms, mean %.2f ms\n",
		c.Folder, c.Commits, c.Rate, l.P50Ms, l.P90Ms, l.P99Ms, l.MaxMs, l.MeanMs)
}
