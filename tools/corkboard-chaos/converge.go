//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"corkboard/board"
)

// ConvergeConfig is one run of the converge workload (docs/chaos.md, "The
// converge workload"): clients editing a handful of notes, offline windows,
// and optionally kill -9 of a node, then the two checks.
type ConvergeConfig struct {
	Corkboard string // the corkboard binary
	// DSN is the PostgreSQL database the nodes share; "" runs one node on
	// bbolt.
	DSN  string
	Work string // a folder for the nodes' data
	Seed uint64
	// Nodes is how many nodes share DSN (1 on bbolt).
	Nodes int
	// Live and REST are how many clients of each kind edit the board.
	Live, REST int
	// Notes is how many notes the owner writes first; they stay for the
	// whole run, while the clients create and delete a few of their own.
	Notes int
	// Ops is how many operations each client makes; 0 runs them until
	// Duration is over.
	Ops      int
	Duration time.Duration
	// KillEvery is the mean pause between two kill -9s of a node (then
	// restarted); 0 kills nothing.
	KillEvery time.Duration
	// OverlapRule is what a client does when the rebase of an unsent edit
	// overlapped: OverlapNone, OverlapLog or OverlapKeepBase ("": the
	// last).
	OverlapRule string
	NodePoll    time.Duration
	// Converge bounds each wait after the work: the clients flushing their
	// edits, catching up, a node starting.
	Converge time.Duration
	Out      io.Writer
}

// ConvergeCounts are what happened in a converge run.
type ConvergeCounts struct {
	Edits, Creates, Deletes, Offline         int64
	Pushes, Acks, Retries, Replays, Busy     int64
	Crossed, ServerMerged, Rebases, Overlaps int64
	Revivals, Pulls, Gaps, LiveConns, Kills  int64
	LogsSent, FastAcks, Failures             int64
	LogEntries                               map[string]int // changelog entries by action
	Lines                                    LineCounts
	Refused                                  []string
}

// ConvergeResult is what a converge run found.
type ConvergeResult struct {
	// Summary is the one-line summary; Details lists the violations.
	Summary, Details string
	Violations       []Violation
	Counts           ConvergeCounts
	// Metrics are the nodes' merge and overlap series (summed over the
	// nodes, since each one's last start), when the server has them.
	Metrics map[string]float64
}

// convergeBoard is the board the clients share.
const convergeBoard = "converge"

// RunConverge runs the converge workload. An error means the run could not
// be carried out (a node would not start, a login failed); what the checks
// found is in the result.
func RunConverge(ctx context.Context, cfg ConvergeConfig) (ConvergeResult, error) {
	out := cfg.Out
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x636f6e76))
	backend := "bbolt"
	if cfg.DSN != "" {
		backend = fmt.Sprintf("PostgreSQL, %d nodes", cfg.Nodes)
	} else {
		cfg.Nodes = 1
	}
	switch cfg.OverlapRule {
	case "":
		cfg.OverlapRule = OverlapKeepBase
	case OverlapNone, OverlapLog, OverlapKeepBase:
	default:
		return ConvergeResult{}, fmt.Errorf("unknown overlap rule %q (%s, %s or %s)", cfg.OverlapRule, OverlapNone, OverlapLog, OverlapKeepBase)
	}
	fmt.Fprintf(out, "converge: seed %d, %s, %d live and %d REST clients, %d notes, %s, overlap rule %s\n",
		cfg.Seed, backend, cfg.Live, cfg.REST, cfg.Notes, workDesc(cfg), cfg.OverlapRule)

	var nodes []*node
	defer func() {
		for _, n := range nodes {
			n.shutdown()
		}
	}()
	for i := range cfg.Nodes {
		n, err := newNode(i, cfg.Corkboard, cfg.Work, cfg.DSN, cfg.NodePoll)
		if err != nil {
			return ConvergeResult{}, err
		}
		nodes = append(nodes, n)
		if err := n.start(ctx, cfg.Converge); err != nil {
			return ConvergeResult{}, err
		}
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	e := &convEnv{nodes: nodes, board: convergeBoard, http: hc, ledger: &ledger{removed: map[string]bool{}},
		st: &convStats{}, overlapRule: cfg.OverlapRule}

	// The owner claims the board; the clients are invitees on the pro plan.
	owner, err := login(ctx, nodes[0], "owner@converge.test")
	if err != nil {
		return ConvergeResult{}, err
	}
	if _, err := call(ctx, hc, "POST", nodes[0].base()+"/api/boards/"+convergeBoard+"/access", owner.cookie, nil, nil); err != nil {
		return ConvergeResult{}, fmt.Errorf("claim %s: %w", convergeBoard, err)
	}
	clients := make([]*cclient, cfg.Live+cfg.REST)
	for i := range clients {
		name := fmt.Sprintf("c%d", i+1)
		email := name + "@converge.test"
		home := i % len(nodes)
		s, err := login(ctx, nodes[home], email)
		if err != nil {
			return ConvergeResult{}, err
		}
		if _, err := call(ctx, hc, "POST", nodes[0].base()+"/api/boards/"+convergeBoard+"/invite", owner.cookie, map[string]string{"email": email}, nil); err != nil {
			return ConvergeResult{}, fmt.Errorf("invite %s: %w", email, err)
		}
		clients[i] = newClient(name, i < cfg.Live, s, rand.New(rand.NewPCG(cfg.Seed, uint64(i+1))), e, home)
	}
	// On bbolt, corkboard plan set waits a second for the locked file
	// before it asks the server's admin socket: all at once, then.
	planErrs := make(chan error, len(clients))
	for _, c := range clients {
		go func() {
			args := []string{"plan", "set", c.sess.email, "pro", "-data", nodes[c.home].data}
			if cfg.DSN != "" {
				args = append(args, "-store", cfg.DSN)
			}
			o, err := exec.CommandContext(ctx, cfg.Corkboard, args...).CombinedOutput()
			if err != nil {
				err = fmt.Errorf("plan set %s: %w: %s", c.sess.email, err, o)
			}
			planErrs <- err
		}()
	}
	for range clients {
		if err := <-planErrs; err != nil {
			return ConvergeResult{}, err
		}
	}
	// The plan is cached up to -cache-ttl: wait until every client may edit.
	for _, c := range clients {
		deadline := time.Now().Add(cfg.Converge)
		for {
			var acc struct{ CanEdit bool }
			_, err := call(ctx, hc, "GET", nodes[c.home].base()+"/api/boards/"+convergeBoard+"/access", c.sess.cookie, nil, &acc)
			if err == nil && acc.CanEdit {
				break
			}
			if time.Now().After(deadline) {
				return ConvergeResult{}, fmt.Errorf("%s cannot edit after %s (%v)", c.name, cfg.Converge, err)
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return ConvergeResult{}, err
			}
		}
	}
	// The owner writes the first notes, as a REST client that then only
	// catches up.
	c0 := newClient("c0", false, owner, rand.New(rand.NewPCG(cfg.Seed, 0)), e, 0)
	for range cfg.Notes {
		c0.createNote()
	}
	fctx, cancel := context.WithTimeout(ctx, cfg.Converge)
	err = c0.flush(fctx)
	cancel()
	if err != nil {
		return ConvergeResult{}, fmt.Errorf("the first notes: %w", err)
	}

	// The work: each client in its goroutine; faults meanwhile.
	start := time.Now()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.talk(ctx, c.pull)
			for op := 0; cfg.Ops == 0 || op < cfg.Ops; op++ {
				select {
				case <-stop:
					return
				default:
				}
				c.step(ctx)
				// Think time, so that the clients' edits interleave.
				time.Sleep(time.Duration(5+c.rng.IntN(40)) * time.Millisecond)
			}
		}()
	}
	worked := make(chan struct{})
	go func() { wg.Wait(); close(worked) }()
	var kills int64
	if cfg.KillEvery > 0 {
	faults:
		for cfg.Ops > 0 || time.Since(start) < cfg.Duration {
			pause := cfg.KillEvery/2 + time.Duration(rng.Int64N(int64(cfg.KillEvery)))
			if cfg.Ops == 0 {
				pause = min(pause, cfg.Duration-time.Since(start))
			}
			select {
			case <-worked:
				break faults
			case <-ctx.Done():
				return ConvergeResult{}, ctx.Err()
			case <-time.After(pause):
			}
			if cfg.Ops == 0 && time.Since(start) >= cfg.Duration {
				break
			}
			n := nodes[rng.IntN(len(nodes))]
			down := time.Duration(200+rng.IntN(1500)) * time.Millisecond
			if err := n.kill(); err != nil {
				return ConvergeResult{}, err
			}
			if err := sleep(ctx, down); err != nil {
				return ConvergeResult{}, err
			}
			if err := n.start(ctx, cfg.Converge); err != nil {
				return ConvergeResult{}, err
			}
			kills++
			fmt.Fprintf(out, "converge: %6.1fs kill -9 node %d, restarted after %s\n", time.Since(start).Seconds(), n.i, down)
		}
	}
	if cfg.Ops == 0 { // the clients work until the duration is over
		if err := sleep(ctx, cfg.Duration-time.Since(start)); err != nil {
			return ConvergeResult{}, err
		}
		close(stop)
	}
	<-worked

	// Quiet: everyone online, every edit pushed and absorbed; then every
	// client catches up to the server's version.
	all := append([]*cclient{c0}, clients...)
	var failed []string
	var mu sync.Mutex
	each := func(f func(context.Context, *cclient) error) {
		cctx, cancel := context.WithTimeout(ctx, cfg.Converge)
		defer cancel()
		var wg sync.WaitGroup
		for _, c := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := f(cctx, c); err != nil {
					mu.Lock()
					failed = append(failed, err.Error())
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	phase := time.Now()
	each(func(ctx context.Context, c *cclient) error { return c.flush(ctx) })
	final, err := fullPull(ctx, hc, nodes[0], owner, cfg.Converge)
	if err != nil {
		return ConvergeResult{}, err
	}
	fmt.Fprintf(out, "converge: %6.1fs every edit pushed (%s), the board at version %d\n", time.Since(start).Seconds(), time.Since(phase).Round(time.Millisecond), final.Version)
	phase = time.Now()
	each(func(ctx context.Context, c *cclient) error { return c.catchUp(ctx, final.Version) })
	fmt.Fprintf(out, "converge: %6.1fs every client caught up (%s)\n", time.Since(start).Seconds(), time.Since(phase).Round(time.Millisecond))

	h := ConvergeHistory{Final: final, Removed: e.ledger.removed, Typed: e.ledger.typed}
	for _, n := range nodes[1:] {
		p, err := fullPull(ctx, hc, n, owner, cfg.Converge)
		if err != nil {
			p.Err = err.Error()
		}
		h.Pulls = append(h.Pulls, p)
	}
	for _, c := range all {
		h.Copies = append(h.Copies, c.copyOf())
	}
	phase = time.Now()
	entries, err := readLog(ctx, hc, nodes[0], owner)
	if err != nil {
		return ConvergeResult{}, err
	}
	fmt.Fprintf(out, "converge: %6.1fs %d changelog entries read (%s)\n", time.Since(start).Seconds(), len(entries), time.Since(phase).Round(time.Millisecond))
	h.Log = map[string][]string{}
	actions := map[string]int{}
	for _, en := range entries {
		h.Log[en.NoteID] = append(h.Log[en.NoteID], en.Content)
		actions[en.Action]++
	}
	vs, lines := CheckConverge(h)
	for _, f := range failed {
		vs = append(vs, Violation{checkNotConverged, f})
	}
	for _, r := range e.st.refused {
		vs = append(vs, Violation{"refused", r})
	}

	st := e.st
	counts := ConvergeCounts{
		Edits: st.edits.Load(), Creates: st.creates.Load(), Deletes: st.deletes.Load(), Offline: st.offline.Load(),
		Pushes: st.pushes.Load(), Acks: st.acks.Load(), Retries: st.retries.Load(), Replays: st.replays.Load(), Busy: st.busy.Load(),
		Crossed: st.crossed.Load(), ServerMerged: st.serverMerged.Load(), Rebases: st.rebases.Load(), Overlaps: st.overlaps.Load(),
		Revivals: st.revivals.Load(), Pulls: st.pulls.Load(), Gaps: st.gaps.Load(), LiveConns: st.liveConns.Load(), Kills: kills,
		LogsSent: st.logsSent.Load(), FastAcks: st.fastAcks.Load(), Failures: st.errors.Load(), LogEntries: actions, Lines: lines, Refused: st.refused,
	}
	metrics := map[string]float64{}
	for _, n := range nodes {
		m, err := scrapeMerges(ctx, hc, n)
		if err != nil {
			fmt.Fprintf(out, "converge: node %d metrics: %v\n", n.i, err)
		}
		for k, v := range m {
			metrics[k] += v
		}
	}
	if kills == 0 {
		vs = append(vs, CheckCounters(metrics, MergeTally{ServerMerged: counts.ServerMerged,
			UpdateNotes: actions["update_note"], DeleteNotes: actions["delete_note"],
			LogsSent: counts.LogsSent, LogsTried: st.logsTried.Load()})...)
	}
	res := ConvergeResult{Violations: vs, Counts: counts, Metrics: metrics}
	res.Summary = convergeSummary(cfg, backend, final.Version, time.Since(start), counts, metrics, len(vs))
	var sb strings.Builder
	byCheck := map[string]int{}
	for _, v := range vs {
		byCheck[v.Check]++
	}
	checks := make([]string, 0, len(byCheck))
	for c := range byCheck {
		checks = append(checks, c)
	}
	sort.Strings(checks)
	for _, c := range checks {
		fmt.Fprintf(&sb, "  %s: %d\n", c, byCheck[c])
	}
	for i, v := range vs {
		if i == 20 {
			fmt.Fprintf(&sb, "  … %d more\n", len(vs)-20)
			break
		}
		fmt.Fprintf(&sb, "  - %s\n", v)
	}
	if len(lines.DuplicatedIn) > 0 {
		fmt.Fprintf(&sb, "  duplicated tokens (not a violation): %s\n", strings.Join(lines.DuplicatedIn, ", "))
		for _, d := range lines.DuplicatedIn {
			tok, id, _ := strings.Cut(d, " in ")
			n := final.Notes[id]
			for _, l := range strings.Split(n.Content, "\n") {
				if strings.Contains(l, tok) {
					fmt.Fprintf(&sb, "    %s: %q\n", id, l)
				}
			}
		}
	}
	res.Details = sb.String()
	return res, nil
}

func workDesc(cfg ConvergeConfig) string {
	w := fmt.Sprintf("%d operations per client", cfg.Ops)
	if cfg.Ops == 0 {
		w = cfg.Duration.String() + " of work"
	}
	if cfg.KillEvery > 0 {
		w += fmt.Sprintf(", kill -9 every %s on average", cfg.KillEvery)
	}
	return w
}

// convergeSummary is the run's one-line summary.
func convergeSummary(cfg ConvergeConfig, backend string, version int64, took time.Duration, c ConvergeCounts, metrics map[string]float64, violations int) string {
	var m []string
	for k, v := range metrics {
		m = append(m, fmt.Sprintf("%s=%g", k, v))
	}
	sort.Strings(m)
	ms := "none"
	if len(m) > 0 {
		ms = strings.Join(m, " ")
	}
	l := c.Lines
	return fmt.Sprintf("converge summary (seed %d, %s, %s): %d clients, %d edits (%d notes created, %d deleted), %d offline windows, %d kills; "+
		"%d pushes (%d acked, %d at once, %d crossed others; %d retries, %d replays, %d busy), %d pulls, %d gaps, %d failed requests; "+
		"%d rows merged by the server, %d rebases (%d overlapped, rule %s; %d rows logged by clients), %d revivals pushed; "+
		"changelog update_note %d, delete_note %d; board at version %d; "+
		"%d lines typed: %d in the notes, %d in the changelog, %d removed by a client, %d in deleted notes, %d lost, %d duplicated; "+
		"server merge metrics: %s; %d violations",
		cfg.Seed, backend, took.Round(100*time.Millisecond), cfg.Live+cfg.REST, c.Edits, c.Creates, c.Deletes, c.Offline, c.Kills,
		c.Pushes, c.Acks, c.FastAcks, c.Crossed, c.Retries, c.Replays, c.Busy, c.Pulls, c.Gaps, c.Failures,
		c.ServerMerged, c.Rebases, c.Overlaps, cfg.OverlapRule, c.LogsSent, c.Revivals,
		c.LogEntries["update_note"], c.LogEntries["delete_note"], version,
		l.Typed, l.InNote, l.InLog, l.Removed, l.InDeletedNote, l.Lost, l.Duplicated, ms, violations)
}

// fullPull is a full pull (since=0) from n, retried until it answers or
// bound passes.
func fullPull(ctx context.Context, hc *http.Client, n *node, s session, bound time.Duration) (NoteCopy, error) {
	c := NoteCopy{Name: fmt.Sprintf("full pull from node %d", n.i), Notes: map[string]board.Note{}}
	deadline := time.Now().Add(bound)
	for {
		var m message
		_, err := call(ctx, hc, "GET", n.base()+"/api/boards/"+convergeBoard+"/sync?since=0", s.cookie, nil, &m)
		if err == nil {
			for _, note := range m.Notes {
				c.Notes[note.ID] = note
			}
			c.Version = m.ServerVersion
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("full pull from node %d: %w", n.i, err)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return c, err
		}
	}
}

// logEntryText is a changelog entry with its Markdown.
type logEntryText struct {
	Key, NoteID, Action, Timestamp, Content string
}

// readLog lists the board's whole changelog, page by page, then reads
// every entry (four at a time).
func readLog(ctx context.Context, hc *http.Client, n *node, s session) ([]logEntryText, error) {
	var all []logEntryText
	before := ""
	for {
		u := n.base() + "/api/boards/" + convergeBoard + "/log?limit=500"
		if before != "" {
			u += "&before=" + url.QueryEscape(before)
		}
		var page struct {
			Entries []logEntryText `json:"entries"`
		}
		if _, err := call(ctx, hc, "GET", u, s.cookie, nil, &page); err != nil {
			return nil, fmt.Errorf("changelog list: %w", err)
		}
		all = append(all, page.Entries...)
		if len(page.Entries) < 500 {
			break
		}
		before = page.Entries[len(page.Entries)-1].Timestamp
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failed  error
		claimed atomic.Int64
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(claimed.Add(1)) - 1; i < len(all); i = int(claimed.Add(1)) - 1 {
				text, err := getText(ctx, hc, n.base()+"/api/boards/"+convergeBoard+"/log/"+all[i].Key, s.cookie)
				mu.Lock()
				if err != nil && failed == nil {
					failed = fmt.Errorf("changelog entry %s: %w", all[i].Key, err)
				}
				stop := failed != nil
				mu.Unlock()
				if stop {
					return
				}
				all[i].Content = text
			}
		}()
	}
	wg.Wait()
	return all, failed
}

// getText GETs a text answer.
func getText(ctx context.Context, hc *http.Client, u, cookie string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return "", err
	}
	req.AddCookie(&http.Cookie{Name: "session", Value: cookie})
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if res.StatusCode != 200 {
		return "", &statusError{res.StatusCode, strings.TrimSpace(string(b))}
	}
	return string(b), nil
}

// scrapeMerges reads n's metrics and returns the series about merges,
// overlaps and revivals (Corkboard's names start with corkboard_), or
// none when the server has no such metrics.
func scrapeMerges(ctx context.Context, hc *http.Client, n *node) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+n.metrics+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, "corkboard_") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok || !(strings.Contains(name, "merge") || strings.Contains(name, "overlap") || strings.Contains(name, "reviv")) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out, sc.Err()
}
