package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"corkboard/board"
)

// benchClients is how many pushes are in flight at once in the parallel
// benchmarks, as pgbench -c 8 in persist/postgres/bench/run.sh.
const benchClients = 8

// benchmarkPushes runs ApplyPush with one 200-byte note and a fresh
// idempotency key, benchClients at a time, spread over boards boards.
func benchmarkPushes(b *testing.B, boards int) {
	ids := make([]string, boards)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
	}
	db, _, _ := openSyncDB(b, ids...)
	p := &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("a", strings.Repeat("x", 200))}}}
	var next atomic.Int64
	b.SetParallelism(max(1, benchClients/max(1, runtimeProcs())))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			id := ids[int(n)%len(ids)]
			if _, _, err := db.ApplyPush(context.Background(), id, p, fmt.Sprintf("k%d", n)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pushes/s")
}

// BenchmarkPushesHotBoard: every push goes to one board, so they queue on
// its row lock, as pgbench's hot-board script does.
func BenchmarkPushesHotBoard(b *testing.B) { benchmarkPushes(b, 1) }

// BenchmarkPushes1000Boards: pushes spread over 1,000 boards.
func BenchmarkPushes1000Boards(b *testing.B) { benchmarkPushes(b, 1000) }

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
