// Package metrics holds Corkboard's Prometheus collectors: live
// connections, rooms and long polls (read from the hub when scraped),
// pushes and their commit latency, pulls and their latency, fan-out drops,
// AI requests, tokens and errors, and store errors. The domain packages do
// not import it: rooms report through rooms.Observer, which *Metrics
// implements, ai through its OnUsage callback, and cmd/corkboard wires
// both and serves Handler on its own listener (-metrics-addr).
//
// No label ever holds a board, a user or anything a client chooses: the
// labels are fixed words and the AI features of the ai package, so the
// number of series is bounded.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"corkboard/board"
)

// Gauges are read when /metrics is scraped, from whoever keeps the count
// (the hub), so that nothing is counted twice or drifts.
type Gauges struct {
	// LiveConnections is the number of live WebSockets admitted.
	LiveConnections func() int
	// Rooms is the number of boards whose room runs.
	Rooms func() int
	// LongPolls is the number of held long polls (GET /sync?wait=).
	LongPolls func() int
}

// Latency buckets, in seconds. A commit is a durable write (bbolt's fsync,
// a PostgreSQL commit): from half a millisecond to seconds when the disk
// stalls. A pull that reads the store takes from a tenth of a millisecond
// (a few rows) to seconds (the full state of a large board).
var (
	commitBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	pullBuckets   = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5}
	// batchBuckets are pushes per commit: group commit shows here.
	batchBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}
)

// Metrics is the set of collectors of one server. Build it with New; it is
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	pushes       prometheus.Counter
	commit       prometheus.Histogram
	commitBatch  prometheus.Histogram
	pullsMemory  prometheus.Counter
	pullsStore   prometheus.Counter
	pullStore    prometheus.Histogram
	drops        prometheus.Counter
	aiRequests   *prometheus.CounterVec
	aiErrors     *prometheus.CounterVec
	aiTokens     *prometheus.CounterVec
	storeErrPush prometheus.Counter
	storeErrPull prometheus.Counter
	mergeRows    prometheus.Counter
	mergeFall    prometheus.Counter
	mergeOverlap prometheus.Counter
	mergeRevived prometheus.Counter
}

// New registers every collector, the Go runtime's and the process's
// included, on a registry of its own (never the global one, so that two
// servers in one test process do not collide).
func New(g Gauges) *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{reg: reg}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gauge := func(name, help string, read func() int) {
		if read != nil {
			f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(read()) }))
		}
	}
	gauge("corkboard_live_connections", "Live WebSockets admitted.", g.LiveConnections)
	gauge("corkboard_rooms", "Boards whose room is running.", g.Rooms)
	gauge("corkboard_long_polls", "Long polls (GET /sync with wait) held.", g.LongPolls)

	m.pushes = prometheus.NewCounter(prometheus.CounterOpts{Name: "corkboard_pushes_total", Help: "Pushes committed to the store (REST and live, replays and no-ops included)."})
	m.commit = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "corkboard_push_commit_seconds", Help: "Time of one store commit of a batch of pushes (the durable write).", Buckets: commitBuckets})
	m.commitBatch = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "corkboard_push_commit_batch_size", Help: "Pushes per store commit.", Buckets: batchBuckets})
	pulls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_pulls_total", Help: "Pulls answered; read is memory (nothing new: the room's version, no store read) or store."}, []string{"read"})
	m.pullsMemory, m.pullsStore = pulls.WithLabelValues("memory"), pulls.WithLabelValues("store")
	m.pullStore = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "corkboard_pull_seconds", Help: "Time of one pull that read the store (pulls answered from memory are not timed).", Buckets: pullBuckets})
	m.drops = prometheus.NewCounter(prometheus.CounterOpts{Name: "corkboard_fanout_drops_total", Help: "Live subscribers dropped because their queue was full (close code 4008)."})
	m.aiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_ai_requests_total", Help: "Requests to the model, by AI feature."}, []string{"feature"})
	m.aiErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_ai_request_errors_total", Help: "Requests to the model that failed (unreachable, error answer, cut stream, timeout), by AI feature."}, []string{"feature"})
	m.aiTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_ai_tokens_total", Help: "Tokens the model reported, by AI feature and kind (prompt or completion)."}, []string{"feature", "kind"})
	storeErrs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_store_errors_total", Help: "Store calls of the rooms that failed with an internal error, by operation."}, []string{"op"})
	m.storeErrPush, m.storeErrPull = storeErrs.WithLabelValues("push"), storeErrs.WithLabelValues("pull")
	merges := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_merged_rows_total", Help: "Pushed rows with a baseVersion: merged into what was committed since their base (merged), or replaced whole because their base was no longer kept (fallback)."}, []string{"result"})
	m.mergeRows, m.mergeFall = merges.WithLabelValues("merged"), merges.WithLabelValues("fallback")
	events := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "corkboard_merge_events_total", Help: "What merges overwrote: overlap (both sides changed the same lines; the other side's text went to the changelog) or revived (an edit brought back a row deleted since its base)."}, []string{"kind"})
	m.mergeOverlap, m.mergeRevived = events.WithLabelValues("overlap"), events.WithLabelValues("revived")
	for _, c := range []prometheus.Collector{m.pushes, m.commit, m.commitBatch, pulls, m.pullStore, m.drops, m.aiRequests, m.aiErrors, m.aiTokens, storeErrs, merges, events} {
		f(c)
	}
	return m
}

// Handler serves the metrics in Prometheus's text format (or its
// protobuf, when the scraper asks).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Committed counts a commit of pushes and its latency (rooms.Observer).
func (m *Metrics) Committed(pushes int, took time.Duration, err error) {
	if err != nil {
		if storeFailure(err) {
			m.storeErrPush.Inc()
		}
		return
	}
	m.pushes.Add(float64(pushes))
	m.commit.Observe(took.Seconds())
	m.commitBatch.Observe(float64(pushes))
}

// Merged counts what merges did (rooms.Observer).
func (m *Metrics) Merged(rows, fallbacks, overlaps, revived int) {
	m.mergeRows.Add(float64(rows))
	m.mergeFall.Add(float64(fallbacks))
	m.mergeOverlap.Add(float64(overlaps))
	m.mergeRevived.Add(float64(revived))
}

// Pulled records a pull's latency (rooms.Observer).
func (m *Metrics) Pulled(took time.Duration, fromStore bool, err error) {
	if err != nil {
		if storeFailure(err) {
			m.storeErrPull.Inc()
		}
		return
	}
	if fromStore {
		m.pullsStore.Inc()
		m.pullStore.Observe(took.Seconds())
	} else {
		m.pullsMemory.Inc()
	}
}

// SubscriberDropped counts a fan-out drop (rooms.Observer).
func (m *Metrics) SubscriberDropped() { m.drops.Inc() }

// AIUsed counts what one AI call cost: its model requests, the failed
// ones, and the tokens reported. feature must come from the ai package's
// fixed list (ai.Usage.Feature), never from a client.
func (m *Metrics) AIUsed(feature string, requests, errs, promptTokens, completionTokens int) {
	m.aiRequests.WithLabelValues(feature).Add(float64(requests))
	if errs > 0 {
		m.aiErrors.WithLabelValues(feature).Add(float64(errs))
	}
	m.aiTokens.WithLabelValues(feature, "prompt").Add(float64(promptTokens))
	m.aiTokens.WithLabelValues(feature, "completion").Add(float64(completionTokens))
}

// storeFailure tells a store that failed from an answer a caller acts on
// (ENOTFOUND, EINVALID, …) and from a client that went away.
func storeFailure(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return board.ErrorCode(err) == board.EINTERNAL
}
