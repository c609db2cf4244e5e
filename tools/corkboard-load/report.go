package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one invocation measured; -json prints it.
type Report struct {
	Mode       string          `json:"mode"`
	StartedAt  time.Time       `json:"startedAt"`
	Machine    Machine         `json:"machine"`
	Runs       []*RunResult    `json:"runs"`
	Compare    *Comparison     `json:"compare,omitempty"`
	Centrifugo []*CFComparison `json:"centrifugo,omitempty"`
	Memory     *MemoryReport   `json:"memory,omitempty"`
	// Pull is Corkboard's no-change pulls against a bare handler (pull).
	Pull *PullComparison `json:"pull,omitempty"`
	// LongPoll is the held long polls (longpoll).
	LongPoll *LongPollResult `json:"longPoll,omitempty"`
	// Nodes is several nodes on PostgreSQL against pgbench (nodes).
	Nodes *NodesResult `json:"nodes,omitempty"`
	// MemoryNodes is idle connections held by several nodes (memory-nodes).
	MemoryNodes *MemoryNodesReport `json:"memoryNodes,omitempty"`
	// Presence is joins, a restart's reconnects and leaves on one board
	// (presence).
	Presence *PresenceReport `json:"presence,omitempty"`
	// Votes is a dot vote of many participants (votes).
	Votes *VoteReport `json:"votes,omitempty"`
	// Commits is what a commit of the bbolt store costs on a disk
	// (commits).
	Commits *CommitsReport `json:"commits,omitempty"`
}

// Machine describes where the figures were taken.
type Machine struct {
	CPUs         int        `json:"cpus"`
	CPUModel     string     `json:"cpuModel"`
	MemTotal     string     `json:"memTotal"`
	LoadAvgStart [3]float64 `json:"loadAvgStart"`
	LoadAvgEnd   [3]float64 `json:"loadAvgEnd"`
	GoVersion    string     `json:"goVersion"`
}

// RunResult is one measured workload against one server.
type RunResult struct {
	Name     string  `json:"name"`
	Target   string  `json:"target"`
	Boards   int     `json:"boards"`
	Conns    int     `json:"conns,omitempty"`
	Writers  int     `json:"writers,omitempty"`
	PushOver string  `json:"pushOver,omitempty"`
	RatePerS float64 `json:"ratePerSecond,omitempty"`
	// DurationS is the requested duration; WindowS the measured window
	// (pushing plus draining).
	DurationS float64 `json:"durationSeconds"`
	WindowS   float64 `json:"windowSeconds,omitempty"`

	Connected int     `json:"connected,omitempty"`
	ConnectS  float64 `json:"connectSeconds,omitempty"`

	PushesSent  int64   `json:"pushesSent,omitempty"`
	PushesAcked int64   `json:"pushesAcked,omitempty"`
	PushesPerS  float64 `json:"pushesPerSecond,omitempty"`

	// Expected is what the subscribers should have received: each
	// acknowledged push once per subscriber of its board.
	Expected   int64 `json:"expected,omitempty"`
	Delivered  int64 `json:"delivered,omitempty"`
	Missing    int64 `json:"missing"`
	Duplicates int64 `json:"duplicates"`
	Drops      int64 `json:"drops4008"`
	// EndedEarly counts the connected subscribers whose connection ended
	// before the run did, by close code (or error when there was none);
	// NoDelivery the connected subscribers that received no push of their
	// board at all.
	EndedEarly map[string]int64 `json:"subscribersEndedEarly,omitempty"`
	NoDelivery int64            `json:"subscribersWithoutDelivery,omitempty"`
	// ConnectCutOff counts the subscribers not connected because the
	// connect phase's bound (-connect-timeout, ConnectTimeoutS) ran out:
	// a limit of the tool's, not a refusal by the server.
	ConnectCutOff   int64   `json:"connectCutOff,omitempty"`
	ConnectTimeoutS float64 `json:"connectTimeoutSeconds,omitempty"`

	Requests     int64   `json:"requests,omitempty"`
	RequestsPerS float64 `json:"requestsPerSecond,omitempty"`

	Errors       int64    `json:"errors"`
	ErrorSamples []string `json:"errorSamples,omitempty"`

	// Latency is push→receive (live runs) or request latency (pulls).
	Latency *Summary `json:"latency,omitempty"`
	// AckLatency is push→acknowledgement at the pusher.
	AckLatency *Summary `json:"ackLatency,omitempty"`

	Server *ServerStats `json:"server,omitempty"`
	// Timeline splits the push window by second and by push (timeline.go).
	Timeline           *TimelineReport `json:"timeline,omitempty"`
	LoadToolCPUSeconds float64         `json:"loadToolCpuSeconds,omitempty"`
	Wrk                *WrkResult      `json:"wrk,omitempty"`
}

// ServerStats is the server process as /proc saw it.
type ServerStats struct {
	PID int `json:"pid,omitempty"`
	// Idle is before the run's connections, Held with all of them open and
	// settled, After at the end of the measured window.
	Idle  *ProcSample `json:"idle,omitempty"`
	Held  *ProcSample `json:"held,omitempty"`
	After *ProcSample `json:"after,omitempty"`
	// CPUSeconds is the server's CPU during the measured window.
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	// CPUPerMessageUs is CPUSeconds per delivered message, in µs.
	CPUPerMessageUs float64 `json:"cpuPerMessageUs,omitempty"`
}

// Comparison is the side-by-side fan-out against y-websocket: each ratio is
// y-websocket's figure over Corkboard's, so above 1 means Corkboard ahead.
type Comparison struct {
	P99Ratio       float64 `json:"p99RatioYwsOverCorkboard"`
	CPUPerMsgRatio float64 `json:"cpuPerMessageRatioYwsOverCorkboard"`
	CorkboardAhead bool    `json:"corkboardAhead"`
}

// prober samples one server process; pid 0 samples nothing.
type prober struct{ pid int }

func newProber(pid int) *prober { return &prober{pid: pid} }

func (p *prober) stats() *ServerStats { return &ServerStats{PID: p.pid} }

// sample stores a sample in *dst (nothing without a pid, or on error).
func (p *prober) sample(dst **ProcSample) {
	if p.pid == 0 {
		return
	}
	if s, err := readProc(p.pid); err == nil {
		*dst = &s
	}
}

// cpu returns the process's CPU time, -1 when unknown.
func (p *prober) cpu() time.Duration {
	if p.pid == 0 {
		return -1
	}
	s, err := readProc(p.pid)
	if err != nil {
		return -1
	}
	return s.CPU
}

// cpuTimes are the server's CPU time (-1 when unknown) and the load tool's
// at one moment.
type cpuTimes struct{ server, tool time.Duration }

// cpuTimes samples both CPU times.
func (p *prober) cpuTimes() cpuTimes { return cpuTimes{server: p.cpu(), tool: selfCPU()} }

// setCPU fills res's CPU figures for the window from t0 to t1: the tool's,
// and the server's when known, per message too when messages > 0.
func (res *RunResult) setCPU(t0, t1 cpuTimes, messages int64) {
	res.LoadToolCPUSeconds = (t1.tool - t0.tool).Seconds()
	if t0.server >= 0 && t1.server >= 0 {
		res.Server.CPUSeconds = (t1.server - t0.server).Seconds()
		if messages > 0 {
			res.Server.CPUPerMessageUs = float64(t1.server-t0.server) / float64(time.Microsecond) / float64(messages)
		}
	}
}

func describeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAvgStart: loadAverage()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				m.MemTotal = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// printTable writes the report as one table row per run, then the
// comparison and any errors.
func printTable(w io.Writer, rep *Report) {
	m := rep.Machine
	fmt.Fprintf(w, "corkboard-load -mode %s  %s  %d CPUs (%s), %s, load average %.2f %.2f %.2f at start, %.2f %.2f %.2f at end\n\n",
		rep.Mode, rep.StartedAt.Format(time.RFC3339), m.CPUs, m.CPUModel, m.MemTotal,
		m.LoadAvgStart[0], m.LoadAvgStart[1], m.LoadAvgStart[2], m.LoadAvgEnd[0], m.LoadAvgEnd[1], m.LoadAvgEnd[2])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(rep.Runs) > 0 {
		fmt.Fprintln(tw, "run\tserver\tboards\tconns\twriters\tpushes/s\treq/s\tdelivered\tmissing\tdrops\terrors\tp50 ms\tp99 ms\tmax ms\tack p99 ms\tRSS held MiB\tRSS peak MiB\tCPU s\tCPU µs/msg\t")
		for _, r := range rep.Runs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
				r.Name, r.Target, r.Boards, intOrDash(r.Conns), intOrDash(r.Writers),
				floatOrDash(r.PushesPerS, 1), floatOrDash(r.RequestsPerS, 0),
				int64OrDash(r.Delivered), r.Missing, r.Drops, r.Errors,
				latOrDash(r.Latency, func(s *Summary) float64 { return s.P50Ms }),
				latOrDash(r.Latency, func(s *Summary) float64 { return s.P99Ms }),
				latOrDash(r.Latency, func(s *Summary) float64 { return s.MaxMs }),
				latOrDash(r.AckLatency, func(s *Summary) float64 { return s.P99Ms }),
				mib(r.Server, func(s *ServerStats) *ProcSample { return s.Held }, false),
				mib(r.Server, func(s *ServerStats) *ProcSample { return s.After }, true),
				serverFloat(r.Server, func(s *ServerStats) float64 { return s.CPUSeconds }, 2),
				serverFloat(r.Server, func(s *ServerStats) float64 { return s.CPUPerMessageUs }, 1),
			)
		}
	}
	tw.Flush()
	for _, r := range rep.Runs {
		if r.Wrk != nil {
			fmt.Fprintf(w, "\n%s: %s\n  %d requests, %.0f requests/s, latency p50 %.3f ms p90 %.3f ms p99 %.3f ms, non-2xx %d, socket errors %d\n",
				r.Name, r.Wrk.Command, r.Wrk.Requests, r.Wrk.RequestsPerS, r.Wrk.LatencyMs["50"], r.Wrk.LatencyMs["90"], r.Wrk.LatencyMs["99"], r.Wrk.Non2xx, r.Wrk.SocketErrors)
		}
		for _, s := range r.ErrorSamples {
			fmt.Fprintf(w, "%s: error: %s\n", r.Name, s)
		}
		if r.ConnectCutOff > 0 {
			fmt.Fprintf(w, "%s: %s: %d subscribers not connected: the connect phase ran out (-connect-timeout %gs); not counted as errors\n", r.Name, r.Target, r.ConnectCutOff, r.ConnectTimeoutS)
		}
		if r.NoDelivery > 0 {
			fmt.Fprintf(w, "%s: %s: %d connected subscribers received no push\n", r.Name, r.Target, r.NoDelivery)
		}
		for _, why := range slices.Sorted(maps.Keys(r.EndedEarly)) {
			fmt.Fprintf(w, "%s: %s: %d subscribers ended before the run: %s\n", r.Name, r.Target, r.EndedEarly[why], why)
		}
	}
	if p := rep.Pull; p != nil {
		fmt.Fprintf(w, "\npull no-change, Corkboard ÷ bare net/http handler (goal ≥ 0.6): %.0f ÷ %.0f requests/s = %.2f", p.CorkboardRPS, p.BareRPS, p.Ratio)
		if p.WrkRatio > 0 {
			fmt.Fprintf(w, "; with wrk %.2f", p.WrkRatio)
		}
		fmt.Fprintln(w)
	}
	if l := rep.LongPoll; l != nil {
		printLongPoll(w, l)
	}
	if n := rep.Nodes; n != nil {
		printNodes(w, n)
	}
	if c := rep.Compare; c != nil {
		verdict := "Corkboard ahead on both"
		if !c.CorkboardAhead {
			verdict = "Corkboard NOT ahead on both"
		}
		fmt.Fprintf(w, "\ncompare (y-websocket ÷ Corkboard; above 1 = Corkboard better): p99 latency %.2f×, server CPU per delivered message %.2f×: %s\n",
			c.P99Ratio, c.CPUPerMsgRatio, verdict)
	}
	if len(rep.Centrifugo) > 0 {
		printCentrifugo(w, rep.Centrifugo)
		printSlowSeconds(w, rep.Runs)
	}
	if rep.Memory != nil {
		printMemory(w, rep.Memory)
	}
	if rep.Presence != nil {
		printPresence(w, rep.Presence)
	}
	if rep.MemoryNodes != nil {
		printMemoryNodes(w, rep.MemoryNodes)
	}
	if rep.Votes != nil {
		printVotes(w, rep.Votes)
	}
	if rep.Commits != nil {
		printCommits(w, rep.Commits)
	}
}

func intOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func int64OrDash(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func floatOrDash(v float64, prec int) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func latOrDash(s *Summary, f func(*Summary) float64) string {
	if s == nil || s.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", f(s))
}

func mib(s *ServerStats, f func(*ServerStats) *ProcSample, peak bool) string {
	if s == nil || f(s) == nil {
		return "-"
	}
	p := f(s)
	v := p.RSSBytes
	if peak {
		v = p.HWMBytes
	}
	return fmt.Sprintf("%.0f", float64(v)/(1<<20))
}

func serverFloat(s *ServerStats, f func(*ServerStats) float64, prec int) string {
	if s == nil {
		return "-"
	}
	return floatOrDash(f(s), prec)
}
