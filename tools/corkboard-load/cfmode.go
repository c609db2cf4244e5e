package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
)

// centrifugoFlags are -mode centrifugo's own flags.
type centrifugoFlags struct {
	Bin    string
	URL    string
	PID    int
	APIKey string
	Pairs  int
	// Timeline: spawned servers run with a GC trace, Corkboard with its
	// stage log, and the report splits each run by second (timeline.go).
	Timeline bool
}

func (f *centrifugoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.Bin, "centrifugo-bin", "", "centrifugo: a Centrifugo binary to start for each run (memory engine, no history, no presence; see cfmode.go)")
	fs.StringVar(&f.URL, "centrifugo-url", "", "centrifugo: a running Centrifugo (http://127.0.0.1:8000) instead of -centrifugo-bin")
	fs.IntVar(&f.PID, "centrifugo-pid", 0, "centrifugo: the running Centrifugo's process ID")
	fs.StringVar(&f.APIKey, "centrifugo-api-key", "", "centrifugo: the running Centrifugo's HTTP API key")
	fs.BoolVar(&f.Timeline, "timeline", true, "centrifugo: spawned servers run with GODEBUG=gctrace=1, Corkboard with -pprof and its stage log; each run's report has a per-second and per-push timeline")
	fs.IntVar(&f.Pairs, "pairs", 1, "centrifugo: pairs of runs, Corkboard and Centrifugo; the order alternates (Corkboard first in the first)")
}

func (f *centrifugoFlags) check() error {
	switch {
	case f.Bin == "" && f.URL == "":
		return fmt.Errorf("-mode centrifugo needs -centrifugo-bin or -centrifugo-url")
	case f.Bin != "" && f.URL != "":
		return fmt.Errorf("-centrifugo-bin and -centrifugo-url are exclusive")
	case f.URL != "" && f.APIKey == "":
		return fmt.Errorf("-centrifugo-url needs -centrifugo-api-key")
	case f.Pairs < 1 || f.Pairs > 100:
		return fmt.Errorf("-pairs must be 1 to 100")
	}
	if f.URL != "" {
		if _, err := checkLoopbackURL(f.URL); err != nil {
			return err
		}
	}
	return nil
}

// CFComparison is one pair of runs against Centrifugo: each ratio is
// Centrifugo's figure over Corkboard's, so above 1 means Corkboard ahead.
type CFComparison struct {
	Round int `json:"round"`
	// First names the server that ran first in this pair.
	First          string  `json:"first"`
	P50Ratio       float64 `json:"p50RatioCentrifugoOverCorkboard"`
	P99Ratio       float64 `json:"p99RatioCentrifugoOverCorkboard"`
	CPUPerMsgRatio float64 `json:"cpuPerMessageRatioCentrifugoOverCorkboard"`
	// Idle memory per held connection: (RSS held − RSS before connecting)
	// ÷ connections, in KiB; 0 when unknown.
	CorkboardIdleKiB  float64 `json:"corkboardIdleKiBPerConn"`
	CentrifugoIdleKiB float64 `json:"centrifugoIdleKiBPerConn"`
	// LoadAvg is the machine's at the end of the pair.
	LoadAvg [3]float64 `json:"loadAvg"`
	// CorkboardAhead: p99 at most Centrifugo's, CPU per message and idle
	// memory per connection below it, nothing missing on Corkboard.
	CorkboardAhead bool `json:"corkboardAhead"`
}

// idleKiBPerConn is a run's held memory per connection.
func idleKiBPerConn(r *RunResult) float64 {
	if r == nil || r.Server == nil || r.Server.Idle == nil || r.Server.Held == nil || r.Connected == 0 {
		return 0
	}
	return float64(r.Server.Held.RSSBytes-r.Server.Idle.RSSBytes) / 1024 / float64(r.Connected)
}

// compareCF computes one pair's ratios.
func compareCF(round int, first string, c, f *RunResult) *CFComparison {
	cmp := &CFComparison{Round: round, First: first, LoadAvg: loadAverage(),
		CorkboardIdleKiB: idleKiBPerConn(c), CentrifugoIdleKiB: idleKiBPerConn(f)}
	if c.Latency != nil && f.Latency != nil {
		if c.Latency.P50Ms > 0 {
			cmp.P50Ratio = f.Latency.P50Ms / c.Latency.P50Ms
		}
		if c.Latency.P99Ms > 0 {
			cmp.P99Ratio = f.Latency.P99Ms / c.Latency.P99Ms
		}
	}
	if c.Server != nil && f.Server != nil && c.Server.CPUPerMessageUs > 0 {
		cmp.CPUPerMsgRatio = f.Server.CPUPerMessageUs / c.Server.CPUPerMessageUs
	}
	cmp.CorkboardAhead = cmp.P99Ratio >= 1 && cmp.CPUPerMsgRatio > 1 && c.Missing == 0 &&
		cmp.CorkboardIdleKiB > 0 && cmp.CorkboardIdleKiB < cmp.CentrifugoIdleKiB
	return cmp
}

// runCentrifugoMode runs the fan-out against Corkboard and Centrifugo in
// alternating pairs. Servers the tool starts are started afresh for each
// run, so every run's idle memory is a new process's and no run inherits
// another's heap.
func runCentrifugoMode(ctx context.Context, cfg *Config, rep *Report, log *slog.Logger) error {
	for round := range cfg.Centrifugo.Pairs {
		order := []string{"corkboard", "centrifugo"}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		runs := map[string]*RunResult{}
		for _, target := range order {
			var r *RunResult
			var err error
			if target == "corkboard" {
				r, err = runCorkboardOnce(ctx, cfg, log)
			} else {
				r, err = runCentrifugoOnce(ctx, cfg, log)
			}
			if r != nil {
				r.Name = fmt.Sprintf("round %d", round+1)
				rep.Runs = append(rep.Runs, r)
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, target, err)
			}
			runs[target] = r
		}
		c := compareCF(round+1, order[0], runs["corkboard"], runs["centrifugo"])
		rep.Centrifugo = append(rep.Centrifugo, c)
		log.Info("pair done", "round", round+1, "p99 ratio", c.P99Ratio, "cpu ratio", c.CPUPerMsgRatio, "load", c.LoadAvg[0])
	}
	return nil
}

// runCorkboardOnce runs the fan-out once against Corkboard: a server
// started for this run with -spawn-corkboard, else the one at -url.
func runCorkboardOnce(ctx context.Context, cfg *Config, log *slog.Logger) (*RunResult, error) {
	base, outbox, pid := cfg.URL, cfg.Outbox, cfg.ServerPID
	var diag diagSource
	if cfg.SpawnCorkboard != "" {
		// With the timeline, the server runs with its profiler's listener
		// (which serves its stage log) and a GC trace in its log.
		srv, err := spawnCorkboardEnv(ctx, cfg.SpawnCorkboard, cfg.Centrifugo.Timeline, cfg.TempDir, cfg.Keep, timelineEnv(cfg))
		if err != nil {
			return nil, err
		}
		defer srv.stop()
		base, outbox, pid = srv.base, srv.outbox(), srv.PID()
		log.Info("corkboard started", "url", base, "pid", pid)
		if cfg.Centrifugo.Timeline {
			diag = diagSource{stagesURL: srv.pprofBase + "/debug/corkboard/stages", logPath: srv.logPath, launched: srv.launched}
		}
	}
	a, err := newAPI(base, 64)
	if err != nil {
		return nil, err
	}
	if err := logIn(ctx, a, cfg, outbox, log); err != nil {
		return nil, err
	}
	return runLive(ctx, cfg, &corkRelay{api: a, pid: pid, prefix: newPrefix(), pushOver: "ws", diag: diag}, log)
}

// runCentrifugoOnce runs the fan-out once against Centrifugo.
func runCentrifugoOnce(ctx context.Context, cfg *Config, log *slog.Logger) (*RunResult, error) {
	f := cfg.Centrifugo
	base, pid, key := f.URL, f.PID, f.APIKey
	var diag diagSource
	if f.Bin != "" {
		srv, k, err := spawnCentrifugo(ctx, f.Bin, cfg.TempDir, cfg.Keep, timelineEnv(cfg))
		if err != nil {
			return nil, err
		}
		defer srv.stop()
		base, pid, key = srv.base, srv.PID(), k
		log.Info("centrifugo started", "url", base, "pid", pid)
		if f.Timeline {
			diag = diagSource{logPath: srv.logPath, launched: srv.launched}
		}
	}
	rel, err := newCFRelay(base, pid, key, newPrefix(), cfg.MaxInFlight)
	if err != nil {
		return nil, err
	}
	rel.diag = diag
	return runLive(ctx, cfg, rel, log)
}

// timelineEnv is the spawned servers' added environment: a GC trace when
// the timeline is on.
func timelineEnv(cfg *Config) []string {
	if !cfg.Centrifugo.Timeline {
		return nil
	}
	return []string{"GODEBUG=gctrace=1"}
}

// printCentrifugo writes the pairs' ratios.
func printCentrifugo(w io.Writer, pairs []*CFComparison) {
	fmt.Fprintf(w, "\nCentrifugo ÷ Corkboard (above 1 = Corkboard better; idle memory is KiB per held connection):\n")
	for _, c := range pairs {
		verdict := "Corkboard ahead"
		if !c.CorkboardAhead {
			verdict = "Corkboard NOT ahead"
		}
		fmt.Fprintf(w, "round %d (%s first, load %.2f): p50 %.2f×, p99 %.2f×, CPU per delivered message %.2f×, idle memory %.1f vs %.1f KiB: %s\n",
			c.Round, c.First, c.LoadAvg[0], c.P50Ratio, c.P99Ratio, c.CPUPerMsgRatio, c.CorkboardIdleKiB, c.CentrifugoIdleKiB, verdict)
	}
}
