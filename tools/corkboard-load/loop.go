package main

import (
	"context"
	"sync"
	"time"
)

// loopRun is what closedLoop measured.
type loopRun struct {
	lat        []time.Duration // of the calls that succeeded
	elapsed    time.Duration
	cpu0, cpu1 cpuTimes // at the start and the end
}

// closedLoop measures clients calling op back to back, each making its next
// call when the last one is answered, until d has passed, ctx ends or the
// client has made maxCalls calls; op gets the client's number and call's,
// the run's start and the call's. It samples server pid before and after
// into res.Server and sets res's errors and window.
func closedLoop(ctx context.Context, pid int, res *RunResult, clients int, d time.Duration, maxCalls int64, op func(client int, call int64, start, now time.Time) error) loopRun {
	probe := newProber(pid)
	res.Server = probe.stats()
	probe.sample(&res.Server.Idle)

	type tally struct {
		lat    []time.Duration
		errs   int64
		sample string
	}
	tallies := make([]tally, clients)
	var run loopRun
	run.cpu0 = probe.cpuTimes()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range tallies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := &tallies[i]
			for n := int64(0); n < maxCalls && ctx.Err() == nil; n++ {
				now := time.Now()
				if now.After(deadline) {
					return
				}
				if err := op(i, n, start, now); err != nil {
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
	run.elapsed = time.Since(start)
	run.cpu1 = probe.cpuTimes()
	probe.sample(&res.Server.After)

	for _, t := range tallies {
		run.lat = append(run.lat, t.lat...)
		res.Errors += t.errs
		if t.sample != "" && len(res.ErrorSamples) < 5 {
			res.ErrorSamples = append(res.ErrorSamples, t.sample)
		}
	}
	res.WindowS = run.elapsed.Seconds()
	return run
}
