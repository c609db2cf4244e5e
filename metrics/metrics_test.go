package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/metrics"
	"corkboard/persist"
	"corkboard/persist/persisttest"
	"corkboard/rooms"
	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// waitFor bounds every wait on a channel; nothing asserts how long
// anything took.
const waitFor = 20 * time.Second

// samples scrapes m's handler: series (name and labels as written) to value.
func samples(tb testing.TB, m *metrics.Metrics) map[string]float64 {
	tb.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET /metrics = %d", rec.Code)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.Fatalf("line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func want(tb testing.TB, got map[string]float64, series string, v float64) {
	tb.Helper()
	if got[series] != v {
		tb.Errorf("%s = %g, want %g", series, got[series], v)
	}
}

func start(tb testing.TB, store persist.SyncStore, obs rooms.Observer) *rooms.Room {
	tb.Helper()
	r, err := rooms.Start(context.Background(), store, "b1", rooms.Options{Observer: obs})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		r.Close(ctx)
	})
	return r
}

func onePush(id string) *board.Push {
	return &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: id, Content: "x"}}}}
}

// A room observed by the metrics counts its pushes, its pulls by where they
// were answered from, and the subscriber it drops for a full queue.
func TestRoomReports(t *testing.T) {
	db, _, _ := persisttest.Open(t, t0, "b1")
	m := metrics.New(metrics.Gauges{})
	r := start(t, db, m)

	// A's queue holds nothing: B's arrival, told to A, drops A.
	a, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: "A", Email: "a@example.com", Sink: roomstest.NewQueue(0)})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: "B", Email: "b@example.com", Sink: roomstest.NewQueue(64)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Leave()
	select {
	case <-a.Done():
	case <-time.After(waitFor):
		t.Fatal("A was not dropped")
	}
	if code, _ := a.CloseStatus(); code != livewire.CloseResync {
		t.Fatalf("A closed with %d, want %d", code, livewire.CloseResync)
	}

	for i := range 3 {
		if _, _, err := r.Push(context.Background(), onePush(fmt.Sprint("n", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Pull(context.Background(), 0); err != nil { // reads the store
		t.Fatal(err)
	}
	if _, err := r.Pull(context.Background(), 3); err != nil { // nothing new: memory
		t.Fatal(err)
	}
	got := samples(t, m)
	want(t, got, "corkboard_fanout_drops_total", 1)
	want(t, got, "corkboard_pushes_total", 3)
	want(t, got, "corkboard_push_commit_batch_size_sum", 3)
	want(t, got, `corkboard_pulls_total{read="store"}`, 1)
	want(t, got, `corkboard_pulls_total{read="memory"}`, 1)
	want(t, got, "corkboard_pull_seconds_count", 1)
	want(t, got, `corkboard_store_errors_total{op="push"}`, 0)
}

// Merges are counted: rows merged and replaced whole for want of their
// base, and what the merges overwrote (overlaps, revivals).
func TestMergeReports(t *testing.T) {
	db, _, _ := persisttest.Open(t, t0, "b1")
	m := metrics.New(metrics.Gauges{})
	r := start(t, db, m)
	push := func(notes []board.Note, deleted ...string) {
		t.Helper()
		if _, _, err := r.Push(context.Background(), &board.Push{Notes: board.NoteChanges{Upserted: notes, Deleted: deleted}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	push([]board.Note{{ID: "n1", Content: "a\nb"}})                         // v1
	push([]board.Note{{ID: "n1", Content: "A\nb", BaseVersion: 1}})         // v2: nothing since its base, written as sent
	push([]board.Note{{ID: "n1", Content: "a\nB", BaseVersion: 1}})         // v3: merged, "A\nB"
	push([]board.Note{{ID: "n1", Content: "X\nb", BaseVersion: 1}})         // v4: merged, line 1 overlaps
	push(nil, "n1")                                                         // v5
	push([]board.Note{{ID: "n1", Content: "X\nB!", BaseVersion: 4}})        // v6: merged, revived
	push([]board.Note{{ID: "n2", Content: "new"}})                          // v7
	push([]board.Note{{ID: "n2", Content: "no base kept", BaseVersion: 2}}) // v8: n2 did not exist at 2
	got := samples(t, m)
	want(t, got, `corkboard_merged_rows_total{result="merged"}`, 3)
	want(t, got, `corkboard_merged_rows_total{result="fallback"}`, 1)
	want(t, got, `corkboard_merge_events_total{kind="overlap"}`, 1)
	want(t, got, `corkboard_merge_events_total{kind="revived"}`, 1)
}

// A store that fails counts as store errors; an answer a caller acts on
// (a negative since is EINVALID, never reaching the store) does not.
func TestStoreErrors(t *testing.T) {
	db, _, _ := persisttest.Open(t, t0, "b1")
	m := metrics.New(metrics.Gauges{})
	r := start(t, db, m)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Push(context.Background(), onePush("n"), ""); err == nil {
		t.Fatal("push on a closed store succeeded")
	}
	if _, err := r.Pull(context.Background(), 0); err == nil {
		t.Fatal("pull on a closed store succeeded")
	}
	m.Pulled(0, true, board.Errorf(board.ENOTFOUND, "no such board"))
	m.Pulled(0, true, context.Canceled)
	got := samples(t, m)
	want(t, got, `corkboard_store_errors_total{op="push"}`, 1)
	want(t, got, `corkboard_store_errors_total{op="pull"}`, 1)
	want(t, got, "corkboard_pushes_total", 0)
}

// The gauges read their counts when scraped; AI usage is counted by
// feature and kind of token.
func TestGaugesAndAI(t *testing.T) {
	conns := 0
	m := metrics.New(metrics.Gauges{
		LiveConnections: func() int { return conns },
		Rooms:           func() int { return 2 },
		LongPolls:       func() int { return 3 },
	})
	conns = 5
	m.AIUsed("chat", 2, 1, 100, 20)
	m.AIUsed("chat", 1, 0, 50, 10)
	m.AIUsed("note-ai", 1, 0, 7, 3)
	got := samples(t, m)
	want(t, got, "corkboard_live_connections", 5)
	want(t, got, "corkboard_rooms", 2)
	want(t, got, "corkboard_long_polls", 3)
	want(t, got, `corkboard_ai_requests_total{feature="chat"}`, 3)
	want(t, got, `corkboard_ai_request_errors_total{feature="chat"}`, 1)
	want(t, got, `corkboard_ai_tokens_total{feature="chat",kind="prompt"}`, 150)
	want(t, got, `corkboard_ai_tokens_total{feature="chat",kind="completion"}`, 30)
	want(t, got, `corkboard_ai_tokens_total{feature="note-ai",kind="prompt"}`, 7)
}

// memStore is a SyncStore in memory for one board, so that the benchmark
// measures the room and its observer rather than the disk.
type memStore struct {
	persist.SyncStore // the methods a room does not call
	mu                sync.Mutex
	version           int64
}

func (s *memStore) CurrentVersion(context.Context, string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, nil
}

func (s *memStore) ApplyPushes(_ context.Context, _ string, in []persist.PushInput) ([]persist.Applied, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]persist.Applied, len(in))
	for i, p := range in {
		s.version++
		out[i] = persist.Applied{Version: s.version, Changes: &board.Changes{ServerVersion: s.version, Notes: p.Push.Notes.Upserted, TrackerItems: []board.TrackerItem{}, DeletedNoteIDs: []string{}, DeletedTrackerItemIDs: []string{}}}
	}
	return out, nil
}

// BenchmarkRoomPush is one push after another through a room, with no
// observer and with the metrics wired, on a store in memory (the room's
// own cost, where the observer's share is largest) and on bbolt (what a
// push costs a user: the fsync dominates).
func BenchmarkRoomPush(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) persist.SyncStore
	}{
		{"memory", func(b *testing.B) persist.SyncStore { return &memStore{} }},
		{"bolt", func(b *testing.B) persist.SyncStore {
			db, _, _ := persisttest.Open(b, t0, "b1")
			return db
		}},
	}
	for _, st := range stores {
		for _, observed := range []bool{false, true} {
			name := st.name + "/observer=none"
			var obs rooms.Observer
			if observed {
				name = st.name + "/observer=metrics"
				obs = metrics.New(metrics.Gauges{})
			}
			b.Run(name, func(b *testing.B) {
				r := start(b, st.open(b), obs)
				p := onePush("n")
				for b.Loop() {
					if _, _, err := r.Push(context.Background(), p, ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRoomPullNoChange is the cheapest pull (answered from the room's
// version, no store read), where the observer's two clock reads show most.
func BenchmarkRoomPullNoChange(b *testing.B) {
	for _, observed := range []bool{false, true} {
		name := "observer=none"
		var obs rooms.Observer
		if observed {
			name, obs = "observer=metrics", metrics.New(metrics.Gauges{})
		}
		b.Run(name, func(b *testing.B) {
			st := &memStore{}
			r := start(b, st, obs)
			if _, _, err := r.Push(context.Background(), onePush("n"), ""); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.Pull(context.Background(), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHooks is what the observer adds to one push and one store
// pull, alone, away from the room's noise: the calls and the clock reads
// the room makes around the store call.
func BenchmarkHooks(b *testing.B) {
	m := metrics.New(metrics.Gauges{})
	b.Run("Committed", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			m.Committed(1, time.Since(start), nil)
		}
	})
	b.Run("Pulled", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			m.Pulled(time.Since(start), true, nil)
		}
	})
	b.Run("ClockReadsOnly", func(b *testing.B) {
		var d time.Duration
		for b.Loop() {
			start := time.Now()
			d += time.Since(start)
		}
		_ = d
	})
}
