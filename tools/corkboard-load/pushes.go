package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// maxPushesPerPusher bounds one closed-loop pusher besides its deadline.
const maxPushesPerPusher = 10_000_000

// runPushes measures REST pushes sent as fast as they are acknowledged:
// one pusher per entry of boards (a board may appear more than once), each
// sending its next push when the last one is answered, for d.
func runPushes(ctx context.Context, a *api, pid int, name string, boards []string, d time.Duration) (*RunResult, error) {
	distinct := map[string]bool{}
	for _, b := range boards {
		distinct[b] = true
	}
	res := &RunResult{Name: name, Target: "corkboard", Boards: len(distinct), Writers: len(boards), PushOver: "rest", DurationS: d.Seconds()}
	paths := make([]string, len(boards))
	for i, b := range boards {
		paths[i] = "/api/boards/" + b + "/sync"
	}
	run := closedLoop(ctx, pid, res, len(boards), d, maxPushesPerPusher, func(i int, n int64, start, now time.Time) error {
		body, err := json.Marshal(notePush(marker{Writer: i, Seq: n, SentNs: int64(now.Sub(start))}))
		if err == nil {
			_, err = a.do(ctx, "POST", paths[i], body, nil)
		}
		return err
	})
	res.PushesSent = int64(len(run.lat)) + res.Errors
	res.PushesAcked = int64(len(run.lat))
	res.PushesPerS = float64(len(run.lat)) / run.elapsed.Seconds()
	s := summarize(run.lat)
	res.AckLatency = &s
	res.setCPU(run.cpu0, run.cpu1, 0) // no per-message figure for pushes
	return res, nil
}

// pushPhases are the pushes mode's three runs: one pusher on one board (one
// fsync per push at best), p pushers on one board (the room batches them),
// p boards with a pusher each (bbolt's Batch shares fsyncs across boards).
func pushPhases(ctx context.Context, a *api, pid int, prefix string, p int, d time.Duration) ([]*RunResult, error) {
	one := prefix + "-one"
	many := make([]string, p)
	for i := range many {
		many[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	if err := forEach(ctx, append([]string{one}, many...), 16, a.claim); err != nil {
		return nil, err
	}
	same := make([]string, p)
	for i := range same {
		same[i] = one
	}
	phases := []struct {
		name   string
		boards []string
	}{
		{"pushes 1 board × 1 pusher", []string{one}},
		{fmt.Sprintf("pushes 1 board × %d pushers", p), same},
		{fmt.Sprintf("pushes %d boards × 1 pusher", p), many},
	}
	var out []*RunResult
	for _, ph := range phases {
		r, err := runPushes(ctx, a, pid, ph.name, ph.boards, d)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
