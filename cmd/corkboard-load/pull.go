package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxRequestsPerClient bounds one pull client's loop besides its deadline.
const maxRequestsPerClient = 50_000_000

// runPull measures pulls with nothing new: conc keep-alive clients send
// GET /sync?since=<current> to the boards (client i to board i mod len)
// for d, checking every answer is {"serverVersion":current}.
func runPull(ctx context.Context, a *api, pid int, boards []string, conc int, d time.Duration) (*RunResult, error) {
	res := &RunResult{Name: "pull no-change (load tool)", Target: "corkboard", Boards: len(boards), Conns: conc, DurationS: d.Seconds()}
	urls := make([]string, len(boards))
	wants := make([][]byte, len(boards))
	for i, b := range boards {
		// One push first: a board at version 0 would make since=0 (a full
		// sync by the spec) and the no-change answer the same request.
		if _, err := a.do(ctx, "POST", "/api/boards/"+b+"/sync", notePush(marker{Writer: i}), nil); err != nil {
			return nil, err
		}
		v, err := a.versionOf(ctx, b)
		if err != nil {
			return nil, err
		}
		urls[i] = a.base + "/api/boards/" + b + "/sync?since=" + strconv.FormatInt(v, 10)
		wants[i] = []byte(`{"serverVersion":` + strconv.FormatInt(v, 10) + `}`)
	}
	probe := newProber(pid)
	res.Server = probe.stats()
	probe.sample(&res.Server.Idle)

	type tally struct {
		lat    []time.Duration
		errs   int64
		sample string
	}
	tallies := make([]tally, conc)
	cpu0, tool0 := probe.cpu(), selfCPU()
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i := range tallies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := &tallies[i]
			url, want := urls[i%len(urls)], wants[i%len(wants)]
			buf := make([]byte, 0, 256)
			for n := 0; n < maxRequestsPerClient && ctx.Err() == nil; n++ {
				now := time.Now()
				if now.After(deadline) {
					return
				}
				body, err := a.get(ctx, url, buf[:0])
				lat := time.Since(now)
				if err == nil && !bytes.Equal(bytes.TrimSpace(body), want) {
					err = fmt.Errorf("answer %q, want %q", body, want)
				}
				if err != nil {
					t.errs++
					if t.sample == "" {
						t.sample = err.Error()
					}
					continue
				}
				t.lat = append(t.lat, lat)
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
	res.Requests = int64(len(lat))
	res.RequestsPerS = float64(len(lat)) / elapsed.Seconds()
	res.WindowS = elapsed.Seconds()
	s := summarize(lat)
	res.Latency = &s
	res.LoadToolCPUSeconds = (tool1 - tool0).Seconds()
	if cpu0 >= 0 && cpu1 >= 0 {
		res.Server.CPUSeconds = (cpu1 - cpu0).Seconds()
		if res.Requests > 0 {
			res.Server.CPUPerMessageUs = float64(cpu1-cpu0) / float64(time.Microsecond) / float64(res.Requests)
		}
	}
	return res, nil
}

// get is a lean GET for the pull loop: the body (at most 4 KiB) appended to
// buf, an error for any status but 200.
func (a *api) get(ctx context.Context, url string, buf []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", "session="+a.session)
	res, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	w := bytes.NewBuffer(buf)
	_, err = io.Copy(w, io.LimitReader(res.Body, 4096))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %.200s", res.StatusCode, w.Bytes())
	}
	return w.Bytes(), nil
}
