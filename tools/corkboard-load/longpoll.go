package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LongPollResult is what the longpoll mode measured: N held polls over M
// boards, a pusher, and the time from a push being sent to each poll of its
// board being answered.
type LongPollResult struct {
	Polls  int     `json:"polls"`
	Boards int     `json:"boards"`
	WaitS  int     `json:"waitSeconds"`
	Held   int     `json:"held"` // polls written and unanswered when RSS was sampled
	Pushes int64   `json:"pushes"`
	RateS  float64 `json:"pushesPerSecond"`
	// Answers counts answers with a newer version; RunOut those whose wait
	// ran out (the same version).
	Answers int64 `json:"answers"`
	RunOut  int64 `json:"runOut"`
	Errors  int64 `json:"errors"`
	// Latency is push sent → poll answered, for every poll of the board.
	Latency *Summary `json:"latency,omitempty"`
	// IdleRSS is the server before the polls, HeldRSS with all held.
	IdleRSS, HeldRSS int64   `json:"-"`
	IdleMiB          float64 `json:"idleRssMiB,omitempty"`
	HeldMiB          float64 `json:"heldRssMiB,omitempty"`
	// PerPollKiB is (HeldRSS - IdleRSS) / Held.
	PerPollKiB   float64  `json:"perPollKiB,omitempty"`
	ErrorSamples []string `json:"errorSamples,omitempty"`
}

// pushTimes records when each version of each board was pushed, so that a
// poll answered with version v knows which push woke it.
type pushTimes struct {
	mu   sync.Mutex
	sent []map[int64]time.Time // by board index
}

func (p *pushTimes) set(board int, v int64, t time.Time) {
	p.mu.Lock()
	p.sent[board][v] = t
	p.mu.Unlock()
}

func (p *pushTimes) get(board int, v int64) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.sent[board][v]
	return t, ok
}

// runLongPoll holds polls long polls (wait seconds) spread over boards,
// samples the server's RSS with all of them held, then pushes rate × d
// times at rate to the boards in turn and measures push → answer. Each poll that is
// answered polls again from the version it got (without the follow-up
// pull a client would make: only the wake-up is measured).
func runLongPoll(ctx context.Context, a *api, pid int, prefix string, polls, nBoards, wait int, rate float64, d time.Duration, dialConc int, settle time.Duration, log *slog.Logger) (*LongPollResult, error) {
	res := &LongPollResult{Polls: polls, Boards: nBoards, WaitS: wait, RateS: rate}
	boards := make([]string, nBoards)
	for i := range boards {
		boards[i] = fmt.Sprintf("%s-lp%d", prefix, i)
	}
	if err := forEach(ctx, boards, 16, a.claim); err != nil {
		return res, err
	}
	// Version 1 everywhere: since=0 is a full sync, never held.
	versions := make([]int64, nBoards)
	for i, b := range boards {
		if _, err := a.do(ctx, "POST", "/api/boards/"+b+"/sync", notePush(marker{Writer: i}), nil); err != nil {
			return res, err
		}
		versions[i] = 1
	}
	probe := newProber(pid)
	var idle *ProcSample
	probe.sample(&idle)

	// One connection per poll: a held request occupies its connection.
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConnsPerHost: polls,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Duration(wait)*time.Second + 30*time.Second}

	times := &pushTimes{sent: make([]map[int64]time.Time, nBoards)}
	for i := range times.sent {
		times.sent[i] = map[int64]time.Time{}
	}
	var (
		mu        sync.Mutex
		lat       []time.Duration
		samples   []string
		answers   atomic.Int64
		runOut    atomic.Int64
		errs      atomic.Int64
		inFlight  atomic.Int64
		firstSent sync.WaitGroup
	)
	pollCtx, stopPolls := context.WithCancel(ctx)
	defer stopPolls()
	gate := make(chan struct{}, dialConc) // bounds connections being opened at once
	var wg sync.WaitGroup
	firstSent.Add(polls)
	for i := range polls {
		b := i % nBoards
		wg.Go(func() {
			since := int64(1)
			first := true
			for pollCtx.Err() == nil {
				var once sync.Once
				wrote := func() {
					once.Do(func() {
						inFlight.Add(1)
						if first {
							<-gate
							firstSent.Done()
						}
					})
				}
				if first {
					gate <- struct{}{}
				}
				v, err := longPollOnce(pollCtx, client, a, boards[b], since, wait, wrote)
				now := time.Now()
				once.Do(func() { // never written: release what wrote would have
					inFlight.Add(1)
					if first {
						<-gate
						firstSent.Done()
					}
				})
				inFlight.Add(-1)
				first = false
				switch {
				case pollCtx.Err() != nil:
					return
				case err != nil:
					errs.Add(1)
					mu.Lock()
					if len(samples) < 5 {
						samples = append(samples, err.Error())
					}
					mu.Unlock()
					select { // do not spin on a failing server
					case <-time.After(100 * time.Millisecond):
					case <-pollCtx.Done():
						return
					}
				case v == since:
					runOut.Add(1)
				default:
					answers.Add(1)
					if t, ok := times.get(b, v); ok {
						mu.Lock()
						lat = append(lat, now.Sub(t))
						mu.Unlock()
					}
					since = v
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { firstSent.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		stopPolls()
		wg.Wait()
		return res, ctx.Err()
	}
	log.Info("every poll sent; letting the server settle", "polls", polls, "settle", settle)
	select {
	case <-time.After(settle):
	case <-ctx.Done():
	}
	res.Held = int(inFlight.Load())
	var held *ProcSample
	probe.sample(&held)
	if idle != nil && held != nil {
		res.IdleRSS, res.HeldRSS = idle.RSSBytes, held.RSSBytes
		res.IdleMiB, res.HeldMiB = float64(idle.RSSBytes)/(1<<20), float64(held.RSSBytes)/(1<<20)
		if res.Held > 0 {
			res.PerPollKiB = float64(held.RSSBytes-idle.RSSBytes) / 1024 / float64(res.Held)
		}
	}
	log.Info("polls held", "held", res.Held, "rssMiB", res.HeldMiB)

	// The pusher: one push at a time, boards in turn, so that the version
	// each push makes is known before it is sent.
	log.Info("pushing", "rate", rate, "for", d)
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	// rate × d pushes, one a tick: a count, so a run's pushes are known.
	total := max(1, int(rate*d.Seconds()))
push:
	for n := 0; n < total; n++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			break push
		}
		b := n % nBoards
		versions[b]++
		times.set(b, versions[b], time.Now())
		var out struct {
			ServerVersion int64 `json:"serverVersion"`
		}
		if _, err := a.do(ctx, "POST", "/api/boards/"+boards[b]+"/sync", notePush(marker{Writer: b, Seq: int64(n)}), &out); err != nil {
			return res, fmt.Errorf("push: %w", err)
		}
		if out.ServerVersion != versions[b] {
			return res, fmt.Errorf("push to %s made version %d, want %d (another writer on the board?)", boards[b], out.ServerVersion, versions[b])
		}
		res.Pushes++
	}
	// The last push's answers arrive within a moment; then the polls stop.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	stopPolls()
	wg.Wait()
	s := summarize(lat)
	res.Latency = &s
	res.Answers, res.RunOut, res.Errors, res.ErrorSamples = answers.Load(), runOut.Load(), errs.Load(), samples
	return res, nil
}

// longPollOnce sends one GET /sync?since&wait and returns the version
// answered; wrote runs once the request is on the wire.
func longPollOnce(ctx context.Context, client *http.Client, a *api, boardID string, since int64, wait int, wrote func()) (int64, error) {
	url := a.base + "/api/boards/" + boardID + "/sync?since=" + strconv.FormatInt(since, 10) + "&wait=" + strconv.Itoa(wait)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote() }})
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Cookie", "session="+a.session)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 4096))
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d: %.200s", res.StatusCode, bytes.TrimSpace(body))
	}
	var v struct {
		ServerVersion *int64 `json:"serverVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.ServerVersion == nil {
		return 0, fmt.Errorf("answer %.200q: want {serverVersion}", body)
	}
	return *v.ServerVersion, nil
}

// printLongPoll prints the longpoll mode's figures.
func printLongPoll(w io.Writer, l *LongPollResult) {
	fmt.Fprintf(w, "\nlong polls: %d over %d boards (wait=%d), %d held when sampled; server RSS %.1f MiB idle, %.1f MiB held (%.1f KiB per poll)\n",
		l.Polls, l.Boards, l.WaitS, l.Held, l.IdleMiB, l.HeldMiB, l.PerPollKiB)
	fmt.Fprintf(w, "  %d pushes at %.1f/s: %d answers with a newer version, %d ran out, %d errors\n", l.Pushes, l.RateS, l.Answers, l.RunOut, l.Errors)
	if s := l.Latency; s != nil {
		fmt.Fprintf(w, "  push → poll answer: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%d answers timed)\n", s.P50Ms, s.P90Ms, s.P99Ms, s.MaxMs, s.Count)
	}
	for _, e := range l.ErrorSamples {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
}
