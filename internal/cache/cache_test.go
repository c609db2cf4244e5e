package cache_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"corkboard/internal/cache"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newCache(size int, clk *clock) *cache.Cache[string, int] {
	return cache.New[string, int](cache.Options[string]{Size: size, TTL: 5 * time.Second, Hash: cache.StringHash, Now: clk.now})
}

func TestSizeEdge(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	c := newCache(3, clk)
	for i, k := range []string{"a", "b", "c"} {
		if !c.Add(k, i, c.Gen(k)) {
			t.Fatalf("Add(%s) refused", k)
		}
	}
	if got, want := c.Len(), 3; got != want {
		t.Fatalf("Len=%d at the bound, want %d", got, want)
	}
	// "a" is used, so "b" is now the least recently used and goes first.
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a missing before the bound was passed")
	}
	c.Add("d", 3, c.Gen("d"))
	if got, want := c.Len(), 3; got != want {
		t.Fatalf("Len=%d past the bound, want %d", got, want)
	}
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if _, ok := c.Get(k); ok != want {
			t.Errorf("Get(%s) held=%v, want %v", k, ok, want)
		}
	}
	// Replacing a held key does not evict.
	c.Add("c", 30, c.Gen("c"))
	if v, _ := c.Get("c"); v != 30 || c.Len() != 3 {
		t.Fatalf("after replacing c: value %d, Len %d; want 30, 3", v, c.Len())
	}
}

func TestSizeBoundSharded(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	const size = 4096
	c := newCache(size, clk)
	for i := range 10 * size {
		k := strconv.Itoa(i)
		c.Add(k, i, c.Gen(k))
	}
	// 16 shards of 256: the bound is exact when Size divides evenly.
	if got := c.Len(); got > size {
		t.Fatalf("Len=%d after %d adds, want at most %d", got, 10*size, size)
	}
	if got := c.Len(); got < size*9/10 {
		t.Fatalf("Len=%d: the shards hold far less than the bound %d", got, size)
	}
}

func TestTTL(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	c := newCache(10, clk)
	c.Add("a", 1, c.Gen("a"))
	clk.add(5*time.Second - time.Nanosecond)
	if _, ok := c.Get("a"); !ok {
		t.Fatal("entry gone before its TTL")
	}
	clk.add(time.Nanosecond)
	if _, ok := c.Get("a"); ok {
		t.Fatal("entry still held at its TTL")
	}
	if got := c.Len(); got != 0 {
		t.Fatalf("Len=%d after the expired entry was asked for, want 0", got)
	}
}

func TestDeleteRefusesOlderFill(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	c := newCache(10, clk)
	c.Add("a", 1, c.Gen("a"))
	// A fill reads storage (gen taken), the record changes and is
	// invalidated, then the fill tries to add what it read.
	gen := c.Gen("a")
	c.Delete("a")
	if c.Add("a", 1, gen) {
		t.Fatal("Add with a generation older than a Delete was accepted")
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("a deleted entry is still held")
	}
	if !c.Add("a", 2, c.Gen("a")) {
		t.Fatal("Add after the Delete with a fresh generation refused")
	}
	c.Clear()
	if _, ok := c.Get("a"); ok || c.Len() != 0 {
		t.Fatal("Clear left entries")
	}
}

func TestConcurrent(t *testing.T) {
	c := cache.New[string, int](cache.Options[string]{Size: 2048, TTL: time.Minute, Hash: cache.StringHash})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint((i * (w + 1)) % 3000)
				if _, ok := c.Get(k); !ok {
					c.Add(k, i, c.Gen(k))
				}
				if i%97 == 0 {
					c.Delete(k)
				}
			}
		})
	}
	wg.Wait()
	if got := c.Len(); got > 2048 {
		t.Fatalf("Len=%d, want at most 2048", got)
	}
}

func BenchmarkGet(b *testing.B) {
	c := cache.New[string, int](cache.Options[string]{Size: 4096, TTL: time.Minute, Hash: cache.StringHash})
	c.Add("board-1", 1, c.Gen("board-1"))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get("board-1"); !ok {
			b.Fatal("miss")
		}
	}
}
