package ratelimit_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/ratelimit"
)

// TestConcurrentCallsNeverOvershoot: however calls for one key interleave,
// exactly the limit's count is let through at one instant.
func TestConcurrentCallsNeverOvershoot(t *testing.T) {
	const callers, perCaller = 8, 50
	w := ratelimit.NewWindow(ratelimit.Rate{Count: 30, Window: time.Minute}, 10)
	bu := ratelimit.NewBudget(ratelimit.Rate{Count: 30, Window: time.Minute}, 10)
	bs := ratelimit.NewBuckets(time.Minute, 10)
	one := ratelimit.NewBucket(1, 30)
	tests := []struct {
		name  string
		allow func() bool
	}{
		{"Window", func() bool { _, ok := w.Allow("k", t0); return ok }},
		{"Budget", func() bool { _, ok := bu.Take("k", t0); return ok }},
		{"Buckets", func() bool { _, ok := bs.Allow("k", 30, t0); return ok }},
		{"Bucket", func() bool { _, ok := one.Allow(t0); return ok }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var allowed atomic.Int64
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for range perCaller {
						if tt.allow() {
							allowed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if got := allowed.Load(); got != 30 {
				t.Fatalf("%d calls let through, want 30", got)
			}
		})
	}
}
