package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"corkboard/internal/stagelog"
	"corkboard/rooms"
)

// The timeline of a live run (docs/benchmarks.md, "Where a slow second
// goes"): per second of the push window, what the deliveries' tail was and
// what the processes were doing, and per push the stages of its way, so
// that a slow second can be split into the parts that made it.
//
//   - Every process on the machine that takes part (the server and this
//     tool) is sampled each second from /proc: CPU, and how long its
//     threads waited runnable for a CPU (schedstat's run delay), the
//     kernel's view of scheduling, the same for any server.
//   - Go's own view for the tool (runtime/metrics: goroutine scheduling
//     latency, GC pauses and assists) and for Corkboard (its stage log on
//     the -pprof listener, internal/stagelog); for any Go server spawned
//     with GODEBUG=gctrace=1, its collections from its log.
//   - Corkboard's stage log gives each push's timeline on the server:
//     received, commit started and done (bbolt's fsync), handed to the
//     fan-out's shards, the shards' start and end; joined to the push by
//     the version its ack carried.

// TimelineReport is a run's timeline.
type TimelineReport struct {
	// Seconds are the push window's seconds, from its start.
	Seconds []TimelineSecond `json:"seconds"`
	// Pushes is each push's way, in send order.
	Pushes []PushTimeline `json:"pushes"`
	// Note says what was not available (no stage log, no GC trace).
	Note string `json:"note,omitempty"`
}

// TimelineSecond is one second of the push window.
type TimelineSecond struct {
	Second int `json:"second"`
	// Pushes sent in this second, and their deliveries' p99 and max
	// (from the send).
	Pushes int     `json:"pushes"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
	// Worst is the push of this second with the highest p99.
	Worst  *PushTimeline `json:"worst,omitempty"`
	Server ProcSecond    `json:"server"`
	Tool   ProcSecond    `json:"tool"`
	// ServerGo is the server's runtime (Corkboard's stage log), ToolGo
	// this tool's.
	ServerGo *stagelog.Second `json:"serverGo,omitempty"`
	ToolGo   *stagelog.Second `json:"toolGo,omitempty"`
	// ServerGC is the server's collections that began in this second,
	// from its GC trace.
	ServerGC *GCSecond `json:"serverGc,omitempty"`
}

// ProcSecond is a process's second from /proc.
type ProcSecond struct {
	CPUMs float64 `json:"cpuMs"`
	// RunDelayMs is the time its threads together waited runnable for a
	// CPU (the sum over threads, so it can pass 1,000).
	RunDelayMs float64 `json:"runDelayMs"`
}

// GCSecond is the collections a GC trace showed starting in one second.
type GCSecond struct {
	GCs int `json:"gcs"`
	// STWMs is the stop-the-world pauses' wall time; MarkMs the
	// concurrent mark's wall time; AssistMs the CPU time goroutines
	// spent assisting.
	STWMs    float64 `json:"stwMs"`
	MarkMs   float64 `json:"markMs"`
	AssistMs float64 `json:"assistMs"`
}

// PushTimeline is one push's way, in milliseconds from its send.
type PushTimeline struct {
	Seq     int64   `json:"seq"`
	Version int64   `json:"version,omitempty"`
	SentMs  float64 `json:"sentMs"` // from the window's start
	// Server stages (Corkboard with its stage log): when the room got the
	// push, when its commit started and ended, when the loop took it,
	// when every shard had it, when the last shard started and when the
	// last ended; the longest shard and the slowest single send.
	ReceivedMs    float64 `json:"receivedMs,omitempty"`
	CommitStartMs float64 `json:"commitStartMs,omitempty"`
	CommittedMs   float64 `json:"committedMs,omitempty"`
	TakenMs       float64 `json:"takenMs,omitempty"`
	HandedOverMs  float64 `json:"handedOverMs,omitempty"`
	LastStartMs   float64 `json:"lastStartMs,omitempty"`
	DoneMs        float64 `json:"doneMs,omitempty"`
	SlowestShard  float64 `json:"slowestShardMs,omitempty"`
	SlowestSend   float64 `json:"slowestSendMs,omitempty"`
	Pushes        int     `json:"pushesInCommit,omitempty"`
	// Deliveries to the subscribers: p50, p99 and last.
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
	N     int     `json:"n"`
}

// diagSource is where a run's server tells more than /proc: its stage
// log (Corkboard with -pprof) and its log file (a GC trace when spawned
// with GODEBUG=gctrace=1).
type diagSource struct {
	stagesURL string
	logPath   string
	launched  time.Time
}

// timeline samples the processes each second during the push window.
type timeline struct {
	pid     int
	start   time.Time
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	seconds []TimelineSecond
}

// startTimeline starts sampling pid and this process every second from
// now.
func startTimeline(pid int) *timeline {
	t := &timeline{pid: pid, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go t.run()
	return t
}

func (t *timeline) run() {
	defer close(t.done)
	self := os.Getpid()
	rt := stagelog.NewSampler()
	prevSrv, prevTool := readSched(t.pid), readSched(self)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for k := 0; ; k++ {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		srv, tool := readSched(t.pid), readSched(self)
		g := rt.Sample()
		sec := TimelineSecond{Second: k, Server: srv.since(prevSrv), Tool: tool.since(prevTool), ToolGo: &g}
		prevSrv, prevTool = srv, tool
		t.mu.Lock()
		t.seconds = append(t.seconds, sec)
		t.mu.Unlock()
	}
}

// end stops the sampling and returns the seconds.
func (t *timeline) end() []TimelineSecond {
	close(t.stop)
	<-t.done
	return t.seconds
}

// schedSample is a process's CPU and run delay, summed over its threads.
type schedSample struct{ cpu, delay time.Duration }

func (s schedSample) since(b schedSample) ProcSecond {
	return ProcSecond{CPUMs: ms(s.cpu - b.cpu), RunDelayMs: ms(s.delay - b.delay)}
}

// readSched sums /proc/<pid>/task/*/schedstat (run time and run delay in
// ns). Threads that ended take their figures with them; Go keeps its
// threads, so a second's difference is sound.
func readSched(pid int) schedSample {
	var s schedSample
	if pid == 0 {
		return s
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			continue
		}
		run, _ := strconv.ParseInt(string(f[0]), 10, 64)
		delay, _ := strconv.ParseInt(string(f[1]), 10, 64)
		s.cpu += time.Duration(run)
		s.delay += time.Duration(delay)
	}
	return s
}

// fetchStages reads a Corkboard's stage log.
func fetchStages(ctx context.Context, url string) (*stagelog.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, res.Status)
	}
	var s stagelog.Snapshot
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<20)).Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	return &s, nil
}

// gcEvent is one collection of a GC trace line.
type gcEvent struct {
	at                   time.Time
	stw, mark, assistCPU time.Duration
}

// parseGCTrace reads the runtime's gctrace lines ("gc 12 @3.456s 2%:
// 0.015+1.2+0.003 ms clock, 0.03+0.5/1.1/0+0.006 ms cpu, ...") of a process
// launched at launched.
func parseGCTrace(r io.Reader, launched time.Time) []gcEvent {
	var evs []gcEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var n int
		var at, pct string
		var c1, c2, c3 float64
		var cpu string
		line := sc.Text()
		if !strings.HasPrefix(line, "gc ") {
			continue
		}
		if _, err := fmt.Sscanf(line, "gc %d %s %s %f+%f+%f ms clock, %s", &n, &at, &pct, &c1, &c2, &c3, &cpu); err != nil {
			continue
		}
		secs, err := strconv.ParseFloat(strings.Trim(at, "@s"), 64)
		if err != nil || !(secs >= 0 && secs < 1e9) { // the runtime writes seconds since start
			continue
		}
		ev := gcEvent{at: launched.Add(time.Duration(secs * float64(time.Second))),
			stw: msDur(c1 + c3), mark: msDur(c2)}
		// cpu is "a+assist/background/idle+b".
		var a, assist float64
		if _, err := fmt.Sscanf(cpu, "%f+%f/", &a, &assist); err == nil {
			ev.assistCPU = msDur(assist)
		}
		evs = append(evs, ev)
	}
	return evs
}

func msDur(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// deliveries is what the engine kept of each push: its send time and
// version, and every subscriber's receipt.
type deliveries struct {
	start   time.Time // the push window's start
	sentNs  func(seq int64) (int64, bool)
	version func(seq int64) int64
	bySeq   [][]time.Duration // receipt latencies from the send, by seq
}

// buildTimeline joins the seconds, the pushes' deliveries, the server's
// stage log and its GC trace.
func buildTimeline(ctx context.Context, d deliveries, secs []TimelineSecond, src diagSource, runStart time.Time) *TimelineReport {
	tr := &TimelineReport{Seconds: secs}
	var stages map[int64]rooms.MessageStages
	var serverGo []stagelog.Second
	if src.stagesURL != "" {
		snap, err := fetchStages(ctx, src.stagesURL)
		if err != nil {
			tr.Note = "stage log: " + err.Error()
		} else {
			stages = map[int64]rooms.MessageStages{}
			for _, m := range snap.Messages {
				stages[m.Version] = m
			}
			serverGo = snap.Seconds
		}
	}
	winStart := d.start.UnixNano()
	for seq := range d.bySeq {
		sent, ok := d.sentNs(int64(seq))
		if !ok {
			continue
		}
		sentWall := runStart.UnixNano() + sent
		lat := d.bySeq[seq]
		slices.Sort(lat)
		p := PushTimeline{Seq: int64(seq), Version: d.version(int64(seq)), SentMs: ms(time.Duration(sentWall - winStart)), N: len(lat)}
		if len(lat) > 0 {
			p.P50Ms, p.P99Ms, p.MaxMs = ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(lat[len(lat)-1])
		}
		if s, ok := stages[p.Version]; ok && p.Version > 0 {
			at := func(ns int64) float64 { return ms(time.Duration(ns - sentWall)) }
			p.ReceivedMs, p.CommitStartMs, p.CommittedMs = at(s.Received), at(s.CommitStart), at(s.Committed)
			p.TakenMs, p.HandedOverMs, p.LastStartMs, p.DoneMs = at(s.Taken), at(s.HandedOver), at(s.LastStart), at(s.Done)
			p.SlowestShard, p.SlowestSend = ms(time.Duration(s.SlowestShardNs)), ms(time.Duration(s.SlowestSendNs))
			p.Pushes = s.Pushes
		}
		tr.Pushes = append(tr.Pushes, p)
		k := int(time.Duration(sentWall-winStart) / time.Second)
		if k >= 0 && k < len(tr.Seconds) {
			sec := &tr.Seconds[k]
			sec.Pushes++
			if sec.Worst == nil || p.P99Ms > sec.Worst.P99Ms {
				pp := p
				sec.Worst = &pp
			}
		}
	}
	secondTails(tr, d, runStart)
	for i := range tr.Seconds {
		end := winStart + int64(i+1)*int64(time.Second)
		for j := range serverGo {
			// The server's sample that ended nearest this second's end.
			if g := serverGo[j]; g.At > end-int64(time.Second)/2 && g.At <= end+int64(time.Second)/2 {
				tr.Seconds[i].ServerGo = &g
				break
			}
		}
	}
	addGCTrace(tr, src, winStart)
	return tr
}

// secondTails sets each second's p99 and max over the deliveries of the
// pushes sent in it.
func secondTails(tr *TimelineReport, d deliveries, runStart time.Time) {
	winStart := d.start.UnixNano()
	lats := make([][]time.Duration, len(tr.Seconds))
	for seq, lat := range d.bySeq {
		sent, ok := d.sentNs(int64(seq))
		if !ok {
			continue
		}
		k := int(time.Duration(runStart.UnixNano()+sent-winStart) / time.Second)
		if k >= 0 && k < len(lats) {
			lats[k] = append(lats[k], lat...)
		}
	}
	for k, l := range lats {
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		tr.Seconds[k].P99Ms, tr.Seconds[k].MaxMs = ms(percentile(l, 99)), ms(l[len(l)-1])
	}
}

// addGCTrace adds the server's collections, from its log, to the seconds
// they began in.
func addGCTrace(tr *TimelineReport, src diagSource, winStart int64) {
	if src.logPath == "" || src.launched.IsZero() {
		return
	}
	f, err := os.Open(src.logPath)
	if err != nil {
		return
	}
	defer f.Close()
	for _, ev := range parseGCTrace(f, src.launched) {
		k := int(time.Duration(ev.at.UnixNano()-winStart) / time.Second)
		if k < 0 || k >= len(tr.Seconds) {
			continue
		}
		g := tr.Seconds[k].ServerGC
		if g == nil {
			g = &GCSecond{}
			tr.Seconds[k].ServerGC = g
		}
		g.GCs++
		g.STWMs += ms(ev.stw)
		g.MarkMs += ms(ev.mark)
		g.AssistMs += ms(ev.assistCPU)
	}
}

// printSlowSeconds writes, for each run with a timeline, its three slowest
// seconds (by the p99 of the pushes sent in them) and what the slowest
// push of each went through.
func printSlowSeconds(w io.Writer, runs []*RunResult) {
	fmt.Fprintf(w, "\nSlowest seconds (ms; the worst push of each: from its send, when the server had it, its commit began and ended, the last shard began and ended, its last delivery):\n")
	for _, r := range runs {
		if r.Timeline == nil {
			continue
		}
		secs := slices.Clone(r.Timeline.Seconds)
		slices.SortFunc(secs, func(a, b TimelineSecond) int { return cmpFloat(b.P99Ms, a.P99Ms) })
		fmt.Fprintf(w, "%s %s:\n", r.Target, r.Name)
		for _, s := range secs[:min(3, len(secs))] {
			fmt.Fprintf(w, "  second %d: p99 %.1f, max %.1f; server CPU %.0f, run delay %.0f; tool CPU %.0f, run delay %.0f", s.Second, s.P99Ms, s.MaxMs, s.Server.CPUMs, s.Server.RunDelayMs, s.Tool.CPUMs, s.Tool.RunDelayMs)
			if g := s.ServerGC; g != nil {
				fmt.Fprintf(w, "; server GC %d, STW %.1f, assist %.1f", g.GCs, g.STWMs, g.AssistMs)
			}
			fmt.Fprintln(w)
			if p := s.Worst; p != nil && p.DoneMs > 0 {
				fmt.Fprintf(w, "    push %d: received %.1f, commit %.1f-%.1f, handed over %.1f, last shard %.1f-%.1f (slowest shard %.1f, send %.1f), delivered p50 %.1f, last %.1f\n",
					p.Seq, p.ReceivedMs, p.CommitStartMs, p.CommittedMs, p.HandedOverMs, p.LastStartMs, p.DoneMs, p.SlowestShard, p.SlowestSend, p.P50Ms, p.MaxMs)
			} else if p != nil {
				fmt.Fprintf(w, "    push %d: delivered p50 %.1f, last %.1f\n", p.Seq, p.P50Ms, p.MaxMs)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
