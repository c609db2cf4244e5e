package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
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
	return pullLoop(ctx, a, pid, res, urls, wants, conc, d), nil
}

// runPullBare measures the same loop against the bare handler at url,
// which answers want.
func runPullBare(ctx context.Context, a *api, url string, want []byte, conc int, d time.Duration) *RunResult {
	res := &RunResult{Name: "pull no-change (load tool)", Target: "bare net/http", Boards: 1, Conns: conc, DurationS: d.Seconds()}
	return pullLoop(ctx, a, 0, res, []string{url}, [][]byte{want}, conc, d)
}

// pullLoop runs conc keep-alive clients getting urls (client i gets url i
// mod len) for d, each answer checked against wants.
func pullLoop(ctx context.Context, a *api, pid int, res *RunResult, urls []string, wants [][]byte, conc int, d time.Duration) *RunResult {
	bufs := make([][]byte, conc) // each client's answer buffer, reused
	for i := range bufs {
		bufs[i] = make([]byte, 0, 256)
	}
	run := closedLoop(ctx, pid, res, conc, d, maxRequestsPerClient, func(i int, _ int64, _, _ time.Time) error {
		body, err := a.get(ctx, urls[i%len(urls)], bufs[i][:0])
		if want := wants[i%len(wants)]; err == nil && !bytes.Equal(bytes.TrimSpace(body), want) {
			err = fmt.Errorf("answer %q, want %q", body, want)
		}
		return err
	})
	res.Requests = int64(len(run.lat))
	res.RequestsPerS = float64(len(run.lat)) / run.elapsed.Seconds()
	s := summarize(run.lat)
	res.Latency = &s
	res.setCPU(run.cpu0, run.cpu1, res.Requests)
	return res
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
