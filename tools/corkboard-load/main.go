// Command corkboard-load measures a Corkboard server: live fan-out latency,
// many held connections, no-change pulls (side by side with a bare net/http
// handler it starts itself), concurrent pushes, held long polls, and the
// same fan-out side by side with y-websocket and with Centrifugo. See
// docs/benchmarks.md.
//
// It logs in through the real API (the login code comes from the server's
// outbox folder), talks only to loopback addresses, and bounds every loop by
// a count and a deadline.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Config is the tool's flags.
type Config struct {
	Mode string

	URL            string
	Outbox         string
	ServerPID      int
	SpawnCorkboard string
	TempDir        string
	Keep           bool
	Email          string
	SessionFile    string

	Boards      int
	Conns       int
	Writers     int
	Rate        float64
	Duration    time.Duration
	PushOver    string
	MaxInFlight int

	Concurrency int
	Wrk         string
	WrkThreads  int

	PushBoards int

	Polls    int
	PollWait int

	YWSURL     string
	YWSPID     int
	YWSDir     string
	YWSUpdates string

	DialConcurrency int
	ConnectTimeout  time.Duration
	SettleMax       time.Duration
	Drain           time.Duration
	Timeout         time.Duration

	JSON bool

	CPUProfile    string
	CPUProfileFor time.Duration

	Memory   memoryFlags
	NodesCfg nodesConfig
	Many     manyFlags
	Presence presenceFlags
	Votes    voteFlags

	Centrifugo centrifugoFlags
}

func newFlagSet(cfg *Config, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("corkboard-load", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Mode, "mode", "fanout", "fanout | spread | pull | pushes | compare | longpoll | memory | nodes | memory-nodes | presence | votes | centrifugo | commits")
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "Corkboard's base URL (loopback only); ignored with -spawn-corkboard")
	fs.StringVar(&cfg.Outbox, "outbox", "", "the server's <data>/outbox folder, where login codes land when no SMTP is configured")
	fs.IntVar(&cfg.ServerPID, "server-pid", 0, "Corkboard's process ID, to report its RSS and CPU from /proc")
	fs.StringVar(&cfg.SpawnCorkboard, "spawn-corkboard", "", "path to a corkboard binary: start it on a temp data folder and a free port, and stop it at the end")
	fs.StringVar(&cfg.TempDir, "tmp", "", "parent folder of spawned servers' data (default: the system temp folder)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep spawned servers' data folders and logs")
	fs.StringVar(&cfg.Email, "email", "load@example.com", "the address to log in as")
	fs.StringVar(&cfg.SessionFile, "session-file", "", "reuse the session cookie kept in this file, and keep a new one there (send-otp is rate limited)")
	fs.IntVar(&cfg.Boards, "boards", 1, "boards (M) for spread and pull")
	fs.IntVar(&cfg.Conns, "conns", 1000, "WebSocket subscribers (N)")
	fs.IntVar(&cfg.Writers, "writers", 1, "writers (W) for spread; fanout and compare use 1")
	fs.Float64Var(&cfg.Rate, "rate", 50, "pushes per second, all writers together (R)")
	fs.DurationVar(&cfg.Duration, "duration", 20*time.Second, "how long to push or pull (D)")
	fs.StringVar(&cfg.PushOver, "push-over", "ws", "writers push over the live socket (ws) or POST /sync (rest)")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", 32, "REST pushes one writer may have awaiting an answer")
	fs.IntVar(&cfg.Concurrency, "concurrency", 64, "keep-alive HTTP clients for pull (C)")
	fs.StringVar(&cfg.Wrk, "wrk", "", "pull: also run this wrk binary with the same URL, cookie and connections")
	fs.IntVar(&cfg.WrkThreads, "wrk-threads", 2, "wrk threads")
	fs.IntVar(&cfg.PushBoards, "push-boards", 100, "pushes: boards (P) pushing at once")
	fs.IntVar(&cfg.Polls, "polls", 10_000, "longpoll: long polls held at once, spread over -boards")
	fs.IntVar(&cfg.PollWait, "poll-wait", 25, "longpoll: each poll's wait, in seconds (the server caps it at 30)")
	fs.StringVar(&cfg.YWSURL, "yws-url", "", "compare: a running y-websocket server (ws://127.0.0.1:1234); empty starts one from -yws-dir")
	fs.IntVar(&cfg.YWSPID, "yws-pid", 0, "compare: the running y-websocket server's process ID")
	fs.StringVar(&cfg.YWSDir, "yws-dir", "bench/yws", "compare: folder with y-websocket installed (npm install) and gen-updates.js")
	fs.StringVar(&cfg.YWSUpdates, "yws-updates", "", "compare: pre-generated Yjs updates file; empty generates one with gen-updates.js")
	fs.IntVar(&cfg.DialConcurrency, "dial-concurrency", 64, "WebSocket handshakes in flight")
	fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", 3*time.Minute, "bound on opening all connections")
	fs.DurationVar(&cfg.SettleMax, "settle", 30*time.Second, "bound on waiting for join announcements to die down before pushing")
	fs.DurationVar(&cfg.Drain, "drain", 10*time.Second, "bound on waiting for the last deliveries after the last push")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "bound on the whole run")
	fs.BoolVar(&cfg.JSON, "json", false, "print the report as JSON instead of a table")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "with -spawn-corkboard: start the server with -pprof and write its CPU profile here (see -cpuprofile-for)")
	fs.DurationVar(&cfg.CPUProfileFor, "cpuprofile-for", time.Minute, "-cpuprofile: how long to profile the server, from just after it starts; the tool waits for the profile before stopping the server")
	cfg.Memory.register(fs)
	addNodesFlags(fs, &cfg.NodesCfg)
	addManyFlags(fs, &cfg.Many)
	addPresenceFlags(fs, &cfg.Presence)
	cfg.Votes.register(fs)
	cfg.Centrifugo.register(fs)
	return fs
}

func (cfg *Config) check() error {
	switch cfg.Mode {
	case "fanout", "compare":
		cfg.Boards, cfg.Writers = 1, 1
	case "centrifugo":
		cfg.Boards, cfg.Writers = 1, 1
		if err := cfg.Centrifugo.check(); err != nil {
			return err
		}
	case "spread", "pull", "pushes", "longpoll":
	case "commits":
		// The store is opened in-process: no server, no login.
		if cfg.Rate <= 0 || cfg.Rate > 10_000 || cfg.Duration <= 0 || cfg.Duration > time.Hour {
			return fmt.Errorf("-mode commits needs -rate above 0 and at most 10000, and -duration above 0 and at most 1h")
		}
		return nil
	case "memory":
		if err := cfg.Memory.check(); err != nil {
			return err
		}
	case "votes":
		if err := cfg.Votes.check(); err != nil {
			return err
		}
	case "nodes":
		return cfg.checkNodes()
	case "memory-nodes":
		return cfg.checkMemoryNodes()
	case "presence":
		return cfg.checkPresence()
	default:
		return fmt.Errorf("-mode must be fanout, spread, pull, pushes, compare, longpoll, memory, nodes, memory-nodes, presence, votes, centrifugo or commits, not %q", cfg.Mode)
	}
	if cfg.PushOver != "ws" && cfg.PushOver != "rest" {
		return fmt.Errorf("-push-over must be ws or rest")
	}
	if (cfg.Mode == "compare" || cfg.Mode == "centrifugo") && cfg.PushOver != "ws" {
		return fmt.Errorf("%s pushes to Corkboard over ws, like the other server's writer", cfg.Mode)
	}
	for _, c := range []struct {
		name string
		v    int
		lo   int
		hi   int
	}{
		{"-boards", cfg.Boards, 1, 100_000},
		{"-conns", cfg.Conns, 0, 100_000},
		{"-writers", cfg.Writers, 1, 10_000},
		{"-max-in-flight", cfg.MaxInFlight, 1, 10_000},
		{"-concurrency", cfg.Concurrency, 1, 10_000},
		{"-push-boards", cfg.PushBoards, 1, 10_000},
		{"-dial-concurrency", cfg.DialConcurrency, 1, 10_000},
		{"-polls", cfg.Polls, 1, 100_000},
		{"-poll-wait", cfg.PollWait, 1, 30},
		{"-wrk-threads", cfg.WrkThreads, 1, 64},
	} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s must be %d to %d", c.name, c.lo, c.hi)
		}
	}
	if cfg.Rate <= 0 || cfg.Rate > 1_000_000 {
		return fmt.Errorf("-rate must be above 0 and at most 1000000")
	}
	if cfg.Duration <= 0 || cfg.Duration > 24*time.Hour {
		return fmt.Errorf("-duration must be above 0 and at most 24h")
	}
	if cfg.Mode == "spread" && cfg.Writers > cfg.Boards {
		return fmt.Errorf("-writers must be at most -boards (one writer per board at most)")
	}
	if cfg.CPUProfile != "" && cfg.SpawnCorkboard == "" {
		return fmt.Errorf("-cpuprofile needs -spawn-corkboard (or run corkboard with -pprof and use go tool pprof)")
	}
	if cfg.CPUProfileFor < time.Second || cfg.CPUProfileFor > 30*time.Minute {
		return fmt.Errorf("-cpuprofile-for must be from 1s to 30m")
	}
	if cfg.SpawnCorkboard == "" && cfg.Outbox == "" && cfg.SessionFile == "" {
		return fmt.Errorf("-outbox (the server's <data>/outbox) or -session-file is needed to log in, or use -spawn-corkboard")
	}
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) == 2 && os.Args[1] == workerArg {
		os.Exit(workerMain(ctx))
	}
	cfg := &Config{}
	fs := newFlagSet(cfg, os.Stderr)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "corkboard-load: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-load:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if n, err := raiseNoFile(); err != nil {
		log.Warn("could not raise the open-file limit", "err", err)
	} else {
		log.Info("open-file limit", "limit", n)
	}
	rep, err := run(ctx, cfg, log)
	if rep != nil {
		if cfg.JSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		} else {
			printTable(os.Stdout, rep)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-load:", err)
		os.Exit(1)
	}
}

// newPrefix names this run's boards and rooms, so runs never share one.
func newPrefix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "lt" + hex.EncodeToString(b)
}

// run performs cfg's mode and returns what it measured. A partial report
// may come with an error.
func run(ctx context.Context, cfg *Config, log *slog.Logger) (*Report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	rep := &Report{Mode: cfg.Mode, StartedAt: time.Now().UTC(), Machine: describeMachine()}
	defer func() { rep.Machine.LoadAvgEnd = loadAverage() }()
	if cfg.Mode == "nodes" {
		return rep, runNodes(ctx, cfg, rep, log)
	}
	if cfg.Mode == "memory-nodes" {
		return rep, runMemoryNodes(ctx, cfg, rep, log)
	}
	if cfg.Mode == "presence" {
		return rep, runPresence(ctx, cfg, rep, log)
	}
	if cfg.Mode == "centrifugo" {
		return rep, runCentrifugoMode(ctx, cfg, rep, log)
	}
	if cfg.Mode == "commits" {
		return rep, runCommits(ctx, cfg, rep, log)
	}

	base, outbox, pid := cfg.URL, cfg.Outbox, cfg.ServerPID
	var pprofBase string
	if cfg.SpawnCorkboard != "" {
		// The memory mode reads the server's goroutine count (and heap
		// profiles) from its profiler.
		var extra []string
		if cfg.Mode == "votes" {
			extra = spawnVoteArgs
		}
		srv, err := spawnCorkboard(ctx, cfg.SpawnCorkboard, cfg.CPUProfile != "" || cfg.Mode == "memory", cfg.TempDir, cfg.Keep, extra...)
		if err != nil {
			return nil, err
		}
		defer srv.stop()
		base, outbox, pid, pprofBase = srv.base, srv.outbox(), srv.PID(), srv.pprofBase
		log.Info("corkboard started", "url", base, "pid", pid, "folder", srv.dir, "pprof", pprofBase)
		if cfg.CPUProfile != "" {
			wait, err := startCPUProfile(ctx, srv.pprofBase, cfg.CPUProfile, cfg.CPUProfileFor)
			if err != nil {
				return nil, err
			}
			log.Info("profiling the server", "for", cfg.CPUProfileFor, "file", cfg.CPUProfile)
			// Deferred after srv.stop, so it runs first: the server stays up
			// until its profile is written.
			defer func() {
				if err := wait(); err != nil {
					log.Error("CPU profile", "err", err)
					return
				}
				log.Info("CPU profile written", "file", cfg.CPUProfile, "binary", cfg.SpawnCorkboard)
			}()
		}
	}
	conns := max(cfg.Concurrency, cfg.PushBoards, cfg.Writers*cfg.MaxInFlight, 64)
	a, err := newAPI(base, conns)
	if err != nil {
		return nil, err
	}
	if err := logIn(ctx, a, cfg, outbox, log); err != nil {
		return nil, err
	}
	prefix := newPrefix()
	log.Info("logged in", "email", cfg.Email, "run", prefix)

	switch cfg.Mode {
	case "fanout", "spread":
		r, err := runLive(ctx, cfg, &corkRelay{api: a, pid: pid, prefix: prefix, pushOver: cfg.PushOver, maxInFlight: cfg.MaxInFlight}, log)
		if r != nil {
			rep.Runs = append(rep.Runs, r)
		}
		return rep, err
	case "pull":
		boards := make([]string, cfg.Boards)
		for i := range boards {
			boards[i] = fmt.Sprintf("%s-%d", prefix, i)
		}
		if err := forEach(ctx, boards, 16, a.claim); err != nil {
			return rep, err
		}
		log.Info("pulling", "clients", cfg.Concurrency, "boards", cfg.Boards, "for", cfg.Duration)
		r, err := runPull(ctx, a, pid, boards, cfg.Concurrency, cfg.Duration)
		if err != nil {
			return rep, err
		}
		rep.Runs = append(rep.Runs, r)
		v, err := a.versionOf(ctx, boards[0])
		if err != nil {
			return rep, err
		}
		// The bare handler answers the same bytes, to the same clients, in
		// the same run: the ratio is what Corkboard costs over the platform.
		want := []byte(fmt.Sprintf(`{"serverVersion":%d}`+"\n", v))
		bare, err := startBare(want)
		if err != nil {
			return rep, err
		}
		defer bare.stop()
		log.Info("pulling from a bare net/http handler", "url", bare.base, "clients", cfg.Concurrency, "for", cfg.Duration)
		br := runPullBare(ctx, a, bare.base+"/", want[:len(want)-1], cfg.Concurrency, cfg.Duration)
		rep.Runs = append(rep.Runs, br)
		rep.Pull = &PullComparison{CorkboardRPS: r.RequestsPerS, BareRPS: br.RequestsPerS}
		if br.RequestsPerS > 0 {
			rep.Pull.Ratio = r.RequestsPerS / br.RequestsPerS
		}
		if cfg.Wrk != "" {
			log.Info("running wrk", "connections", cfg.Concurrency, "for", cfg.Duration)
			probe := newProber(pid)
			cpu0 := probe.cpu()
			wr, err := runWrk(ctx, cfg.Wrk, fmt.Sprintf("%s/api/boards/%s/sync?since=%d", a.base, boards[0], v),
				cfg.WrkThreads, cfg.Concurrency, cfg.Duration, map[string]string{"Cookie": "session=" + a.session})
			if err != nil {
				return rep, err
			}
			w := &RunResult{Name: "pull no-change (wrk)", Target: "corkboard", Boards: 1, Conns: cfg.Concurrency, DurationS: cfg.Duration.Seconds(),
				Requests: wr.Requests, RequestsPerS: wr.RequestsPerS, Errors: wr.Non2xx + wr.SocketErrors, Wrk: &wr,
				Latency: &Summary{Count: int(wr.Requests), P50Ms: wr.LatencyMs["50"], P90Ms: wr.LatencyMs["90"], P99Ms: wr.LatencyMs["99"]}}
			if cpu1 := probe.cpu(); cpu0 >= 0 && cpu1 >= 0 {
				w.Server = &ServerStats{PID: pid, CPUSeconds: (cpu1 - cpu0).Seconds()}
				if wr.Requests > 0 {
					w.Server.CPUPerMessageUs = float64(cpu1-cpu0) / float64(time.Microsecond) / float64(wr.Requests)
				}
			}
			rep.Runs = append(rep.Runs, w)
			bw, err := runWrk(ctx, cfg.Wrk, bare.base+"/", cfg.WrkThreads, cfg.Concurrency, cfg.Duration, nil)
			if err != nil {
				return rep, err
			}
			rep.Runs = append(rep.Runs, &RunResult{Name: "pull no-change (wrk)", Target: "bare net/http", Boards: 1, Conns: cfg.Concurrency, DurationS: cfg.Duration.Seconds(),
				Requests: bw.Requests, RequestsPerS: bw.RequestsPerS, Errors: bw.Non2xx + bw.SocketErrors, Wrk: &bw,
				Latency: &Summary{Count: int(bw.Requests), P50Ms: bw.LatencyMs["50"], P90Ms: bw.LatencyMs["90"], P99Ms: bw.LatencyMs["99"]}})
			if bw.RequestsPerS > 0 {
				rep.Pull.WrkRatio = wr.RequestsPerS / bw.RequestsPerS
			}
		}
		return rep, nil
	case "pushes":
		log.Info("pushing as fast as acknowledged", "boards", cfg.PushBoards, "for each of 3 phases", cfg.Duration)
		runs, err := pushPhases(ctx, a, pid, prefix, cfg.PushBoards, cfg.Duration)
		rep.Runs = append(rep.Runs, runs...)
		return rep, err
	case "longpoll":
		log.Info("long polls", "polls", cfg.Polls, "boards", cfg.Boards, "wait", cfg.PollWait, "rate", cfg.Rate, "for", cfg.Duration)
		l, err := runLongPoll(ctx, a, pid, prefix, cfg.Polls, cfg.Boards, cfg.PollWait, cfg.Rate, cfg.Duration, cfg.DialConcurrency, 3*time.Second, log)
		rep.LongPoll = l
		return rep, err
	case "memory":
		return rep, runMemory(ctx, cfg, rep, a, pid, pprofBase, prefix, log)
	case "votes":
		if outbox == "" {
			return rep, errVotesNoOutbox
		}
		return rep, runVotes(ctx, cfg, rep, a, base, outbox, pid, prefix, log)
	case "compare":
		return rep, runCompare(ctx, cfg, rep, &corkRelay{api: a, pid: pid, prefix: prefix, pushOver: "ws"}, prefix, log)
	}
	return rep, fmt.Errorf("unknown mode %q", cfg.Mode)
}

// logIn reuses the session in -session-file when it still works, and
// otherwise logs in through the outbox (keeping the new session there).
func logIn(ctx context.Context, a *api, cfg *Config, outbox string, log *slog.Logger) error {
	if cfg.SessionFile != "" && cfg.SpawnCorkboard == "" {
		if b, err := os.ReadFile(cfg.SessionFile); err == nil {
			a.session = strings.TrimSpace(string(b))
			if a.sessionValid(ctx) {
				log.Info("reusing the session", "file", cfg.SessionFile)
				return nil
			}
			a.session = ""
		}
	}
	if outbox == "" {
		return fmt.Errorf("no working session in %s and no -outbox to log in with", cfg.SessionFile)
	}
	if err := a.login(ctx, cfg.Email, outbox); err != nil {
		return err
	}
	if cfg.SessionFile != "" && cfg.SpawnCorkboard == "" {
		if err := os.WriteFile(cfg.SessionFile, []byte(a.session+"\n"), 0o600); err != nil {
			return fmt.Errorf("keep the session: %w", err)
		}
	}
	return nil
}

// workload is cfg's live workload shape.
func (cfg *Config) workload() Workload {
	return Workload{
		Boards: cfg.Boards, Conns: cfg.Conns, Writers: cfg.Writers, Rate: cfg.Rate, Duration: cfg.Duration,
		DialConcurrency: cfg.DialConcurrency, ConnectTimeout: cfg.ConnectTimeout, SettleMax: cfg.SettleMax, Drain: cfg.Drain,
	}
}

// runLive runs the live workload against one relay.
func runLive(ctx context.Context, cfg *Config, rel relay, log *slog.Logger) (*RunResult, error) {
	wl := cfg.workload()
	log.Info("live run", "server", rel.Name(), "boards", wl.Boards, "conns", wl.Conns, "writers", wl.Writers, "rate", wl.Rate, "for", wl.Duration)
	e := newEngine(rel, wl)
	if d, ok := rel.(interface{ diagnostics() diagSource }); ok {
		e.diag = d.diagnostics()
	}
	r, err := e.run(ctx, rel.PID())
	if r != nil {
		r.Name = cfg.Mode
		if rel.Name() == "corkboard" {
			r.PushOver = cfg.PushOver
		} else {
			r.PushOver = "ws"
		}
	}
	return r, err
}

// runCompare runs the fan-out against Corkboard, then the same against
// y-websocket, and compares.
func runCompare(ctx context.Context, cfg *Config, rep *Report, cork *corkRelay, prefix string, log *slog.Logger) error {
	ywsBase, ywsPID := cfg.YWSURL, cfg.YWSPID
	if ywsBase == "" {
		srv, err := spawnYWS(ctx, cfg.YWSDir, cfg.TempDir, cfg.Keep)
		if err != nil {
			return err
		}
		defer srv.stop()
		ywsBase, ywsPID = "ws"+strings.TrimPrefix(srv.base, "http"), srv.PID()
		log.Info("y-websocket started", "url", ywsBase, "pid", ywsPID)
	}
	path := cfg.YWSUpdates
	if path == "" {
		tmp, err := os.MkdirTemp(cfg.TempDir, "corkboard-load-updates-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		n := int(cfg.Rate*cfg.Duration.Seconds()) + 1
		if path, err = generateUpdates(ctx, cfg.YWSDir, tmp, n); err != nil {
			return err
		}
	}
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return err
	}
	updates, err := readUpdates(f, 10_000_000)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	yws, err := newYWSRelay(ywsBase, ywsPID, prefix, updates)
	if err != nil {
		return err
	}

	c, err := runLive(ctx, cfg, cork, log)
	if c != nil {
		c.Name = "compare fan-out"
		rep.Runs = append(rep.Runs, c)
	}
	if err != nil {
		return err
	}
	y, err := runLive(ctx, cfg, yws, log)
	if y != nil {
		y.Name = "compare fan-out"
		rep.Runs = append(rep.Runs, y)
	}
	if err != nil {
		return err
	}
	rep.Compare = compare(c, y)
	return nil
}

// compare computes y-websocket's figures over Corkboard's.
func compare(c, y *RunResult) *Comparison {
	cmp := &Comparison{}
	if c.Latency != nil && y.Latency != nil && c.Latency.P99Ms > 0 {
		cmp.P99Ratio = y.Latency.P99Ms / c.Latency.P99Ms
	}
	if c.Server != nil && y.Server != nil && c.Server.CPUPerMessageUs > 0 {
		cmp.CPUPerMsgRatio = y.Server.CPUPerMessageUs / c.Server.CPUPerMessageUs
	}
	cmp.CorkboardAhead = cmp.P99Ratio > 1 && cmp.CPUPerMsgRatio > 1 && c.Missing == 0
	return cmp
}
