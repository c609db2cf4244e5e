// Package stagelog keeps what a slow second of the fan-out is made of: the
// stage timelines of the last fanned-out messages (rooms.MessageStages)
// and, per second, the Go runtime's scheduling latency and garbage
// collection figures. cmd/corkboard serves it on the -pprof listener
// (/debug/corkboard/stages) and the load tool reads it after a run
// (docs/benchmarks.md, "Where a slow second goes"); the load tool samples
// its own process with the same Sampler.
package stagelog

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"corkboard/rooms"
)

// keepMessages is how many timelines the log keeps: ten minutes of a room
// pushed at 10/s, about 200 KB.
const keepMessages = 6000

// keepSeconds is how many seconds of runtime figures the log keeps.
const keepSeconds = 600

// Log is the ring of the last timelines and runtime seconds. It is safe for
// concurrent use.
type Log struct {
	mu       sync.Mutex
	messages ring[rooms.MessageStages]
	seconds  ring[Second]
}

var _ rooms.StageRecorder = (*Log)(nil)

// New returns an empty log.
func New() *Log {
	return &Log{messages: newRing[rooms.MessageStages](keepMessages), seconds: newRing[Second](keepSeconds)}
}

// RecordStages implements rooms.StageRecorder.
func (l *Log) RecordStages(s rooms.MessageStages) {
	l.mu.Lock()
	l.messages.add(s)
	l.mu.Unlock()
}

// Run samples the runtime every second into the log until ctx ends.
func (l *Log) Run(ctx context.Context) {
	s := NewSampler()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sec := s.Sample()
			l.mu.Lock()
			l.seconds.add(sec)
			l.mu.Unlock()
		}
	}
}

// Snapshot is what the log holds, oldest first.
type Snapshot struct {
	Messages []rooms.MessageStages `json:"messages"`
	Seconds  []Second              `json:"seconds"`
}

// Snapshot copies what the log holds.
func (l *Log) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Snapshot{Messages: l.messages.all(), Seconds: l.seconds.all()}
}

// ServeHTTP answers the snapshot as JSON.
func (l *Log) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(l.Snapshot())
}

// ring keeps the last cap items added.
type ring[T any] struct {
	items []T
	next  int
	full  bool
}

func newRing[T any](n int) ring[T] { return ring[T]{items: make([]T, n)} }

func (r *ring[T]) add(v T) {
	r.items[r.next] = v
	r.next++
	if r.next == len(r.items) {
		r.next, r.full = 0, true
	}
}

// all returns the items oldest first.
func (r *ring[T]) all() []T {
	if !r.full {
		return append([]T(nil), r.items[:r.next]...)
	}
	return append(append([]T(nil), r.items[r.next:]...), r.items[:r.next]...)
}
