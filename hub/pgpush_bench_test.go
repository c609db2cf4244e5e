package hub_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkPGPushAck is one push at a time on node A of two on PostgreSQL,
// timed from the call to its acknowledgement: the commit, and on several
// nodes with the lease (docs/scale-out.md, "Pulls from memory") the
// NOTIFY of its note and the lease after it. It reports p50, p99 and the
// mean in milliseconds.
//
//	go test -run '^$' -bench PGPushAck -benchtime 500x -count 3 ./hub/
func BenchmarkPGPushAck(b *testing.B) {
	nodes := newPGNodes(b, 2)
	ctx := context.Background()
	var took []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if _, _, err := nodes[0].hub.Push(ctx, "b1", onePush(fmt.Sprintf("n%d", i)), ""); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
		i++
	}
	slices.Sort(took)
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
	b.ReportMetric(ms(took[min(len(took)-1, len(took)*99/100)]), "p99-ms")
	b.ReportMetric(ms(sum/time.Duration(len(took))), "mean-ms")
}
