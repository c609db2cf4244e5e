package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
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
	probe := newProber(pid)
	res.Server = probe.stats()
	probe.sample(&res.Server.Idle)

	type tally struct {
		lat    []time.Duration
		errs   int64
		sample string
	}
	tallies := make([]tally, len(boards))
	cpu0, tool0 := probe.cpu(), selfCPU()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i, b := range boards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := &tallies[i]
			path := "/api/boards/" + b + "/sync"
			for n := int64(0); n < maxPushesPerPusher && ctx.Err() == nil; n++ {
				now := time.Now()
				if now.After(deadline) {
					return
				}
				body, err := json.Marshal(notePush(marker{Writer: i, Seq: n, SentNs: int64(now.Sub(start))}))
				if err == nil {
					_, err = a.do(ctx, "POST", path, body, nil)
				}
				if err != nil {
					t.errs++
					if t.sample == "" {
						t.sample = err.Error()
					}
					continue
				}
				t.lat = append(t.lat, time.Since(now))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, tool1 := probe.cpu(), selfCPU()
	probe.sample(&res.Server.After)

	var lat []time.Duration
	for _, t := range tallies {
		lat = append(lat, t.lat...)
		res.Errors += t.errs
		if t.sample != "" && len(res.ErrorSamples) < 5 {
			res.ErrorSamples = append(res.ErrorSamples, t.sample)
		}
	}
	res.PushesSent = int64(len(lat)) + res.Errors
	res.PushesAcked = int64(len(lat))
	res.PushesPerS = float64(len(lat)) / elapsed.Seconds()
	res.WindowS = elapsed.Seconds()
	s := summarize(lat)
	res.AckLatency = &s
	res.LoadToolCPUSeconds = (tool1 - tool0).Seconds()
	if cpu0 >= 0 && cpu1 >= 0 {
		res.Server.CPUSeconds = (cpu1 - cpu0).Seconds()
	}
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
