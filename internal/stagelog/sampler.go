package stagelog

import (
	"math"
	"runtime/metrics"
	"time"
)

// Second is one second of the Go runtime's figures: what changed since the
// sample before. Latencies are the upper bounds of the runtime's histogram
// buckets (it keeps buckets, not samples).
type Second struct {
	// At is the end of the second, Unix nanoseconds.
	At int64 `json:"at"`
	// SchedP99Ns and SchedMaxNs: how long goroutines waited, runnable,
	// for a thread (/sched/latencies:seconds); SchedCount how many waits.
	SchedCount uint64 `json:"schedCount"`
	SchedP99Ns int64  `json:"schedP99Ns"`
	SchedMaxNs int64  `json:"schedMaxNs"`
	// GCs is how many collections ended; GCPauses how many
	// stop-the-world pauses, GCPauseMaxNs the longest
	// (/sched/pauses/total/gc:seconds).
	GCs          uint64 `json:"gcs"`
	GCPauses     uint64 `json:"gcPauses"`
	GCPauseMaxNs int64  `json:"gcPauseMaxNs"`
	// GCAssistNs is CPU time goroutines spent helping the collector
	// instead of their own work; GCTotalNs all the collector's CPU time.
	GCAssistNs int64 `json:"gcAssistNs"`
	GCTotalNs  int64 `json:"gcTotalNs"`
	// HeapBytes is the live heap objects' size at the end of the second.
	HeapBytes  uint64 `json:"heapBytes"`
	Goroutines uint64 `json:"goroutines"`
}

// The runtime/metrics names a Sampler reads.
const (
	mSched      = "/sched/latencies:seconds"
	mPauses     = "/sched/pauses/total/gc:seconds"
	mGCs        = "/gc/cycles/total:gc-cycles"
	mAssist     = "/cpu/classes/gc/mark/assist:cpu-seconds"
	mGCTotal    = "/cpu/classes/gc/total:cpu-seconds"
	mHeap       = "/gc/heap/objects:bytes"
	mGoroutines = "/sched/goroutines:goroutines"
)

// Sampler reads the runtime and returns what changed since its last
// sample. Not safe for concurrent use.
type Sampler struct {
	s    []metrics.Sample
	prev map[string]metrics.Value
	// hist keeps the histograms' counts of the last sample: metrics.Read
	// reuses their memory.
	hist map[string][]uint64
}

// histograms are the names read as histograms.
var histograms = []string{mSched, mPauses}

// NewSampler returns a sampler whose first Sample covers the time since
// now.
func NewSampler() *Sampler {
	names := []string{mSched, mPauses, mGCs, mAssist, mGCTotal, mHeap, mGoroutines}
	p := &Sampler{s: make([]metrics.Sample, len(names)), hist: map[string][]uint64{}}
	for i, n := range names {
		p.s[i].Name = n
	}
	p.read()
	return p
}

// read reads the runtime and returns the readings by name; the
// histograms' counts of the reading before are in p.hist until keep.
func (p *Sampler) read() map[string]metrics.Value {
	metrics.Read(p.s)
	m := make(map[string]metrics.Value, len(p.s))
	for _, s := range p.s {
		m[s.Name] = s.Value
	}
	prev := p.prev
	p.prev = m
	return prev
}

// keep copies the current histograms' counts for the next sample.
func (p *Sampler) keep() {
	for _, n := range histograms {
		if v := p.prev[n]; v.Kind() == metrics.KindFloat64Histogram {
			p.hist[n] = append(p.hist[n][:0], v.Float64Histogram().Counts...)
		}
	}
}

// Sample reads the runtime and returns the second since the last sample.
func (p *Sampler) Sample() Second {
	if len(p.hist) == 0 {
		p.keep()
	}
	prev := p.read()
	cur := p.prev
	sec := Second{At: time.Now().UnixNano()}
	sec.SchedCount, sec.SchedP99Ns, sec.SchedMaxNs = histDelta(cur[mSched], p.hist[mSched])
	sec.GCPauses, _, sec.GCPauseMaxNs = histDelta(cur[mPauses], p.hist[mPauses])
	sec.GCs = uintDelta(cur[mGCs], prev[mGCs])
	sec.GCAssistNs = floatDeltaNs(cur[mAssist], prev[mAssist])
	sec.GCTotalNs = floatDeltaNs(cur[mGCTotal], prev[mGCTotal])
	if v := cur[mHeap]; v.Kind() == metrics.KindUint64 {
		sec.HeapBytes = v.Uint64()
	}
	if v := cur[mGoroutines]; v.Kind() == metrics.KindUint64 {
		sec.Goroutines = v.Uint64()
	}
	p.keep()
	return sec
}

// histDelta returns how many samples fell in h since the counts before,
// and the upper bounds of the buckets of the 99th percentile and the
// largest of them, in nanoseconds.
func histDelta(v metrics.Value, before []uint64) (n uint64, p99, maxNs int64) {
	if v.Kind() != metrics.KindFloat64Histogram {
		return 0, 0, 0
	}
	h := v.Float64Histogram()
	d := make([]uint64, len(h.Counts))
	for i, c := range h.Counts {
		d[i] = c
		if i < len(before) {
			d[i] -= before[i]
		}
		n += d[i]
	}
	if n == 0 {
		return 0, 0, 0
	}
	rank := uint64(math.Ceil(0.99 * float64(n)))
	var seen uint64
	for i, c := range d {
		if c == 0 {
			continue
		}
		seen += c
		hi := bucketTopNs(h.Buckets, i)
		if seen >= rank && p99 == 0 {
			p99 = hi
		}
		maxNs = hi
	}
	return n, p99, maxNs
}

// bucketTopNs is the upper bound of bucket i in nanoseconds (the lower
// bound for the last, unbounded bucket).
func bucketTopNs(b []float64, i int) int64 {
	hi := b[i+1]
	if math.IsInf(hi, 1) {
		hi = b[i]
	}
	return int64(hi * 1e9)
}

func uintDelta(cur, prev metrics.Value) uint64 {
	if cur.Kind() != metrics.KindUint64 || prev.Kind() != metrics.KindUint64 {
		return 0
	}
	return cur.Uint64() - prev.Uint64()
}

func floatDeltaNs(cur, prev metrics.Value) int64 {
	if cur.Kind() != metrics.KindFloat64 || prev.Kind() != metrics.KindFloat64 {
		return 0
	}
	return int64((cur.Float64() - prev.Float64()) * 1e9)
}
