package stagelog_test

import (
	"encoding/json"
	"net/http/httptest"
	"runtime"
	"testing"

	"corkboard/internal/stagelog"
	"corkboard/rooms"
)

// TestLogServesTheLastTimelines: the log answers the timelines recorded,
// oldest first, and keeps only the newest once it is full.
func TestLogServesTheLastTimelines(t *testing.T) {
	l := stagelog.New()
	const n = 6000 + 5 // past what the log keeps
	for v := int64(1); v <= n; v++ {
		l.RecordStages(rooms.MessageStages{Board: "b1", Version: v})
	}
	rec := httptest.NewRecorder()
	l.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/corkboard/stages", nil))
	var s stagelog.Snapshot
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.Messages), 6000; got != want {
		t.Fatalf("%d timelines, want %d", got, want)
	}
	if first, last := s.Messages[0].Version, s.Messages[len(s.Messages)-1].Version; first != 6 || last != n {
		t.Fatalf("versions %d..%d, want 6..%d", first, last, n)
	}
}

// TestSamplerCountsCollections: a sample counts the collections since the
// sample before, with their pauses, not since the process started.
func TestSamplerCountsCollections(t *testing.T) {
	p := stagelog.NewSampler()
	runtime.GC()
	if s := p.Sample(); s.GCs < 1 || s.GCPauses < 1 || s.GCPauseMaxNs <= 0 {
		t.Fatalf("after runtime.GC: %+v, want at least one collection with its pauses", s)
	}
	runtime.GC()
	s := p.Sample()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if s.GCs < 1 || uint32(s.GCs) >= m.NumGC {
		t.Fatalf("a second sample after one more collection counts %d of the process's %d", s.GCs, m.NumGC)
	}
}
