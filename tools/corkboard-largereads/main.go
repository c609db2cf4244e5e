// Command corkboard-largereads measures what large reads cost a Corkboard
// server in memory (issue 21): it starts the real binary, seeds one board
// with many notes through the API, then runs phases of parallel full
// pulls (GET /sync?since=0, with and without gzip) and snapshot creations
// (POST /snapshot), sampling the server's VmRSS from /proc every few
// milliseconds. Each phase gets a freshly started server on the same data
// folder, so that its peak is its own. It reports per phase the RSS
// before, the peak, the answers by status (429 and 503 are the large-read
// gate's refusals) and the time taken. See docs/benchmarks.md, "Large
// reads (issue 21)".
//
// It talks only to the server it started, on a loopback port.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type config struct {
	bin        string
	store      string
	notes      int
	batch      int
	parallel   []int
	snapPar    []int
	sample     time.Duration
	serverArgs []string
	snapshots  bool
	pulls      bool
	keep       bool
	jsonOut    bool
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-largereads:", err)
		os.Exit(2)
	}
	ctx, stop := signalContext()
	defer stop()
	rep, err := run(ctx, cfg)
	if rep != nil {
		if cfg.jsonOut {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		} else {
			printReport(os.Stdout, rep)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-largereads:", err)
		os.Exit(1)
	}
}

func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func parseFlags(args []string) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("corkboard-largereads", flag.ContinueOnError)
	fs.StringVar(&cfg.bin, "bin", "", "the corkboard binary to measure (required)")
	fs.StringVar(&cfg.store, "store", "", "postgres://… to measure on PostgreSQL (a fresh database: the tool claims a board in it); empty: bbolt in a temp folder")
	fs.IntVar(&cfg.notes, "notes", 100000, "notes on the measured board")
	fs.IntVar(&cfg.batch, "batch", 500, "notes per push while seeding")
	par := fs.String("parallel", "1,10,50", "parallel requests of each pull phase, comma-separated")
	snapPar := fs.String("snapshot-parallel", "1,10,50", "parallel requests of each snapshot phase (a snapshot built in memory costs about 280 MiB on a 100,000-note board: mind the machine's memory)")
	fs.DurationVar(&cfg.sample, "sample", 5*time.Millisecond, "how often the server's VmRSS is read")
	extra := fs.String("server-args", "", "extra corkboard flags, space-separated (e.g. a raised notes-per-board limit, or the large-read gate's)")
	fs.BoolVar(&cfg.snapshots, "snapshots", true, "measure POST /snapshot phases")
	fs.BoolVar(&cfg.pulls, "pulls", true, "measure full pull phases")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the temp folder (data and server logs)")
	fs.BoolVar(&cfg.jsonOut, "json", false, "report as JSON")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if cfg.bin == "" {
		return nil, errors.New("-bin is required")
	}
	var err error
	if cfg.parallel, err = parseCounts("-parallel", *par); err != nil {
		return nil, err
	}
	if cfg.snapPar, err = parseCounts("-snapshot-parallel", *snapPar); err != nil {
		return nil, err
	}
	if cfg.notes < 1 || cfg.batch < 1 || cfg.sample <= 0 {
		return nil, errors.New("-notes, -batch and -sample must be positive")
	}
	cfg.serverArgs = strings.Fields(*extra)
	return cfg, nil
}

// parseCounts reads a comma-separated list of counts from 1 to 1000.
func parseCounts(name, list string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("%s: %q is not a count from 1 to 1000", name, p)
		}
		out = append(out, n)
	}
	return out, nil
}

// Report is the tool's result.
type Report struct {
	Binary     string   `json:"binary"`
	Store      string   `json:"store"`
	Notes      int      `json:"notes"`
	ServerArgs []string `json:"serverArgs"`
	SeedTook   string   `json:"seedTook"`
	// PullBytes is the size of one full pull without gzip, and with.
	PullBytes     int64   `json:"pullBytes"`
	PullGzipBytes int64   `json:"pullGzipBytes"`
	Phases        []Phase `json:"phases"`
}

// Phase is one measured burst of parallel requests on a fresh server.
type Phase struct {
	Name      string  `json:"name"`
	Parallel  int     `json:"parallel"`
	RSSBefore float64 `json:"rssBeforeMiB"`
	RSSPeak   float64 `json:"rssPeakMiB"`
	// AnonPeak is the peak of RssAnon: VmRSS less the pages of mapped
	// files (bbolt's data file is one), i.e. the heap and stacks.
	AnonPeak   float64        `json:"rssAnonPeakMiB"`
	Statuses   map[string]int `json:"statuses"`
	Took       string         `json:"took"`
	Samples    int            `json:"samples"`
	ClientErrs int            `json:"clientErrors"`
}

// server is one run of the binary on the tool's data folder.
type server struct {
	cmd  *exec.Cmd
	base string
	done chan error
	log  *os.File
}

func run(ctx context.Context, cfg *config) (*Report, error) {
	dir, err := os.MkdirTemp("", "corkboard-largereads-")
	if err != nil {
		return nil, err
	}
	if !cfg.keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "data and logs in", dir)
	}
	rep := &Report{Binary: cfg.bin, Store: "bbolt", Notes: cfg.notes, ServerArgs: cfg.serverArgs}
	if cfg.store != "" {
		rep.Store = "postgres"
	}
	s, err := startServer(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	c := newClient(s.base)
	email := "load@example.com"
	if err := c.login(ctx, email, filepath.Join(dir, "data", "outbox")); err != nil {
		s.stop()
		return nil, err
	}
	boardID := "large-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	if err := seed(ctx, c, boardID, cfg.notes, cfg.batch); err != nil {
		s.stop()
		return nil, err
	}
	rep.SeedTook = time.Since(start).Round(time.Millisecond).String()
	if rep.PullBytes, err = c.pullSize(ctx, boardID, false); err == nil {
		rep.PullGzipBytes, err = c.pullSize(ctx, boardID, true)
	}
	s.stop()
	if err != nil {
		return nil, err
	}

	type phaseKind struct {
		name     string
		parallel []int
		req      func(ctx context.Context) (int, error)
	}
	var kinds []phaseKind
	if cfg.pulls {
		kinds = append(kinds,
			phaseKind{"pull since=0", cfg.parallel, func(ctx context.Context) (int, error) { return c.pull(ctx, boardID, false) }},
			phaseKind{"pull since=0 gzip", cfg.parallel, func(ctx context.Context) (int, error) { return c.pull(ctx, boardID, true) }})
	}
	if cfg.snapshots {
		kinds = append(kinds, phaseKind{"POST snapshot", cfg.snapPar, func(ctx context.Context) (int, error) { return c.snapshot(ctx, boardID) }})
	}
	for _, k := range kinds {
		for _, n := range k.parallel {
			ph, err := runPhase(ctx, cfg, dir, c, k.name, n, k.req)
			if err != nil {
				return rep, err
			}
			rep.Phases = append(rep.Phases, *ph)
			fmt.Fprintf(os.Stderr, "%-18s x%-3d peak %7.1f MiB (anon %7.1f)  %v %s\n", ph.Name, ph.Parallel, ph.RSSPeak, ph.AnonPeak, ph.Statuses, ph.Took)
		}
	}
	return rep, nil
}

// runPhase starts a fresh server, lets it settle, and sends n requests at
// once while sampling its RSS.
func runPhase(ctx context.Context, cfg *config, dir string, c *client, name string, n int, req func(context.Context) (int, error)) (*Phase, error) {
	s, err := startServer(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	c.base = s.base
	c.http.CloseIdleConnections()
	pid := s.cmd.Process.Pid
	before, _, err := vmRSS(pid)
	if err != nil {
		return nil, err
	}
	ph := &Phase{Name: name, Parallel: n, RSSBefore: mib(before), Statuses: map[string]int{}}
	stop := make(chan struct{})
	var peak, anonPeak int64
	var samples int
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(cfg.sample)
		defer t.Stop()
		for {
			if v, anon, err := vmRSS(pid); err == nil {
				peak, anonPeak = max(peak, v), max(anonPeak, anon)
				samples++
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			status, err := req(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ph.ClientErrs++
				return
			}
			ph.Statuses[strconv.Itoa(status)]++
		}()
	}
	close(gate)
	wg.Wait()
	ph.Took = time.Since(start).Round(time.Millisecond).String()
	close(stop)
	<-sampled
	ph.RSSPeak, ph.AnonPeak, ph.Samples = mib(peak), mib(anonPeak), samples
	return ph, ctx.Err()
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// vmRSS reads the process's resident set size, and its anonymous part
// (RssAnon), from /proc.
func vmRSS(pid int) (rss, anon int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var found int
	for line := range strings.Lines(string(data)) {
		for _, f := range []struct {
			prefix string
			to     *int64
		}{{"VmRSS:", &rss}, {"RssAnon:", &anon}} {
			rest, ok := strings.CutPrefix(line, f.prefix)
			if !ok {
				continue
			}
			fields := strings.Fields(rest)
			if len(fields) < 1 {
				return 0, 0, fmt.Errorf("bad %s line", f.prefix)
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return 0, 0, err
			}
			*f.to = kb << 10
			found++
		}
	}
	if found != 2 {
		return 0, 0, errors.New("no VmRSS or RssAnon in /proc status")
	}
	return rss, anon, nil
}

func startServer(ctx context.Context, cfg *config, dir string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	args := []string{"-addr", "127.0.0.1:" + strconv.Itoa(port), "-data", filepath.Join(dir, "data"), "-public-url", base, "-log-format", "json"}
	if cfg.store != "" {
		args = append(args, "-store", cfg.store)
	}
	args = append(args, cfg.serverArgs...)
	log, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	s := &server{cmd: exec.Command(cfg.bin, args...), base: base, done: make(chan error, 1), log: log}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", cfg.bin, err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := hc.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			log.Close()
			return nil, fmt.Errorf("corkboard exited before it was ready: %v (log in %s)", err, log.Name())
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("corkboard not ready after 30s")
		}
	}
}

// stop ends the server with SIGTERM (then SIGKILL after 20 s).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
}

// client is one logged-in person.
type client struct {
	base    string
	session string
	http    *http.Client
}

func newClient(base string) *client {
	return &client{base: base, http: &http.Client{
		Timeout:   10 * time.Minute,
		Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 1000},
	}}
}

func (c *client) request(ctx context.Context, method, path string, body []byte, header map[string]string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.session != "" {
		req.Header.Set("Cookie", "session="+c.session)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return c.http.Do(req)
}

// call sends a request and fails unless it answers 200.
func (c *client) call(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	res, err := c.request(ctx, method, path, body, nil)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, bytes.TrimSpace(data))
	}
	return res, nil
}

var codeLine = regexp.MustCompile(`(?m)^Subject: Your Corkboard login code: ([0-9]{6})`)

// login asks for a code, reads it from the server's outbox (the newest
// mail), and keeps the session.
func (c *client) login(ctx context.Context, email, outbox string) error {
	body, _ := json.Marshal(map[string]string{"email": email})
	if _, err := c.call(ctx, "POST", "/api/auth/send-otp", body); err != nil {
		return err
	}
	var code string
	for deadline := time.Now().Add(15 * time.Second); code == "" && time.Now().Before(deadline); {
		files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
		sort.Strings(files)
		if len(files) > 0 {
			data, _ := os.ReadFile(files[len(files)-1])
			if m := codeLine.FindSubmatch(data); m != nil {
				code = string(m[1])
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // polling a folder: no event to wait on
	}
	if code == "" {
		return errors.New("no login code in the outbox after 15s")
	}
	body, _ = json.Marshal(map[string]string{"email": email, "code": code})
	res, err := c.call(ctx, "POST", "/api/auth/verify-otp", body)
	if err != nil {
		return err
	}
	for _, ck := range res.Cookies() {
		if ck.Name == "session" && ck.Value != "" {
			c.session = ck.Value
			return nil
		}
	}
	return errors.New("verify-otp set no session cookie")
}

// seed claims the board and pushes notes in batches: small notes, about
// 250 bytes each in a pull.
func seed(ctx context.Context, c *client, boardID string, notes, batch int) error {
	if _, err := c.call(ctx, "POST", "/api/boards/"+boardID+"/access", nil); err != nil {
		return err
	}
	for i := 0; i < notes; i += batch {
		var b bytes.Buffer
		b.WriteString(`{"clientVersion":0,"notes":{"upserted":[`)
		for j := i; j < min(notes, i+batch); j++ {
			if j > i {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"note-%06d","title":"Note %d","content":"Some text of note %d, a line or two long.","x":%d,"y":%d,"color":"yellow","type":"note","updatedAt":"2026-11-26T10:00:00Z"}`,
				j, j, j, j%1000*10, j/1000*10)
		}
		b.WriteString(`],"deleted":[]},"trackerItems":{"upserted":[],"deleted":[]}}`)
		if _, err := c.call(ctx, "POST", "/api/boards/"+boardID+"/sync", b.Bytes()); err != nil {
			return fmt.Errorf("seed push at note %d: %w", i, err)
		}
	}
	return nil
}

func encodingHeader(gzip bool) map[string]string {
	if gzip {
		return map[string]string{"Accept-Encoding": "gzip"}
	}
	return map[string]string{"Accept-Encoding": "identity"}
}

// pull reads a full pull to the end and returns its status.
func (c *client) pull(ctx context.Context, boardID string, gzip bool) (int, error) {
	res, err := c.request(ctx, "GET", "/api/boards/"+boardID+"/sync?since=0", nil, encodingHeader(gzip))
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, bufio.NewReader(res.Body)); err != nil {
		return 0, err
	}
	return res.StatusCode, nil
}

// pullSize is the size of one full pull's body as sent.
func (c *client) pullSize(ctx context.Context, boardID string, gzip bool) (int64, error) {
	res, err := c.request(ctx, "GET", "/api/boards/"+boardID+"/sync?since=0", nil, encodingHeader(gzip))
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("full pull: %d", res.StatusCode)
	}
	return io.Copy(io.Discard, res.Body)
}

// snapshot creates a snapshot and returns the status.
func (c *client) snapshot(ctx context.Context, boardID string) (int, error) {
	res, err := c.request(ctx, "POST", "/api/boards/"+boardID+"/snapshot", nil, nil)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

func printReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "binary %s, store %s, %d notes (seeded in %s), full pull %.1f MB (gzip %.1f MB), server args %q\n",
		r.Binary, r.Store, r.Notes, r.SeedTook, float64(r.PullBytes)/1e6, float64(r.PullGzipBytes)/1e6, r.ServerArgs)
	fmt.Fprintf(w, "| phase | parallel | RSS before (MiB) | RSS peak (MiB) | anon peak (MiB) | answers | took |\n|---|---|---|---|---|---|---|\n")
	for _, p := range r.Phases {
		keys := make([]string, 0, len(p.Statuses))
		for k := range p.Statuses {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s×%d", k, p.Statuses[k]))
		}
		if p.ClientErrs > 0 {
			parts = append(parts, fmt.Sprintf("errors×%d", p.ClientErrs))
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f | %s | %s |\n", p.Name, p.Parallel, p.RSSBefore, p.RSSPeak, p.AnonPeak, strings.Join(parts, " "), p.Took)
	}
}
