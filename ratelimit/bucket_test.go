package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"corkboard/ratelimit"
)

// TestBucket: Burst at once, then one every interval; the wait answered is
// exactly when the next token is back.
func TestBucket(t *testing.T) {
	b := ratelimit.NewBucket(10, 20) // a live connection's default
	for i := range 20 {
		if _, ok := b.Allow(t0); !ok {
			t.Fatalf("push %d of the burst refused", i+1)
		}
	}
	wait, ok := b.Allow(t0)
	if ok || wait != 100*time.Millisecond {
		t.Fatalf("21st=(%s, %v), want refused for 100ms", wait, ok)
	}
	if _, ok := b.Allow(t0.Add(wait - time.Nanosecond)); ok {
		t.Fatal("let through before the wait it answered")
	}
	if _, ok := b.Allow(t0.Add(wait)); !ok {
		t.Fatal("refused at the wait it answered")
	}
	if b.Full(t0.Add(2 * time.Second)) {
		t.Fatal("full before every token is back")
	}
	if !b.Full(t0.Add(2*time.Second + 100*time.Millisecond)) {
		t.Fatal("not full when every token is back")
	}
}

// TestBucketUndo: a token given back is there again.
func TestBucketUndo(t *testing.T) {
	b := ratelimit.NewBucket(1, 1)
	if _, ok := b.Allow(t0); !ok {
		t.Fatal("first refused")
	}
	b.Undo()
	if !b.Full(t0) {
		t.Fatal("not full after the token came back")
	}
	if _, ok := b.Allow(t0); !ok {
		t.Fatal("refused after undo")
	}
}

// TestBucketsPerMinute: a plan's requests per minute: rpm at once, then one
// every minute/rpm, per key.
func TestBucketsPerMinute(t *testing.T) {
	b := ratelimit.NewBuckets(time.Minute, 10)
	for i := range 3 {
		if _, ok := b.Allow("ada", 3, t0); !ok {
			t.Fatalf("call %d refused", i+1)
		}
	}
	if wait, ok := b.Allow("ada", 3, t0); ok || wait != 20*time.Second {
		t.Fatalf("4th=(%s, %v), want refused for 20s", wait, ok)
	}
	if _, ok := b.Allow("bob", 3, t0); !ok {
		t.Fatal("another key shares the bucket")
	}
	if wait, ok := b.Allow("ada", 3, t0.Add(19*time.Second)); ok || wait != time.Second {
		t.Fatalf("after 19s=(%s, %v), want refused for 1s", wait, ok)
	}
	if _, ok := b.Allow("ada", 3, t0.Add(20*time.Second)); !ok {
		t.Fatal("refused after 20s")
	}
}

// TestBucketsForgetIdle: a bucket untouched for a window is forgotten on
// the next call, and a forgotten key starts full, as it would have anyway.
func TestBucketsForgetIdle(t *testing.T) {
	b := ratelimit.NewBuckets(time.Minute, 10)
	for _, k := range []string{"a", "b"} {
		if _, ok := b.Allow(k, 2, t0); !ok {
			t.Fatalf("%s: first call refused", k)
		}
	}
	// a keeps calling; b goes quiet.
	if _, ok := b.Allow("a", 2, t0.Add(50*time.Second)); !ok {
		t.Fatal("a: refill refused")
	}
	if got := b.Len(); got != 2 {
		t.Fatalf("keys=%d, want 2", got)
	}
	b.Allow("a", 2, t0.Add(60*time.Second))
	if got := b.Len(); got != 1 {
		t.Fatalf("keys after b's idle minute=%d, want 1", got)
	}
	for i := range 2 {
		if _, ok := b.Allow("b", 2, t0.Add(61*time.Second)); !ok {
			t.Fatalf("b: call %d after eviction refused", i+1)
		}
	}
	if _, ok := b.Allow("b", 2, t0.Add(61*time.Second)); ok {
		t.Fatal("b: third call in the same instant allowed with 2 per minute")
	}
}

// TestBucketsFollowCountChange: a plan change keeps the tokens in hand and
// changes the pace.
func TestBucketsFollowCountChange(t *testing.T) {
	b := ratelimit.NewBuckets(time.Minute, 10)
	if _, ok := b.Allow("a", 1, t0); !ok {
		t.Fatal("first call refused")
	}
	if wait, ok := b.Allow("a", 1, t0); ok || wait != time.Minute {
		t.Fatalf("second call at 1 per minute=(%s, %v), want refused for 1m", wait, ok)
	}
	// An upgrade to 60 a minute: the empty bucket now refills a token a
	// second, so the wait is under a second, not the rest of a minute.
	if wait, ok := b.Allow("a", 60, t0.Add(time.Second)); ok || wait > time.Second {
		t.Fatalf("just after upgrade=(%s, %v), want refused for at most 1s", wait, ok)
	}
	if wait, ok := b.Allow("a", 60, t0.Add(2*time.Second)); !ok {
		t.Fatalf("a second later: refused for %s", wait)
	}
	// A downgrade back to 1 with about one token in hand keeps one.
	if _, ok := b.Allow("a", 1, t0.Add(3*time.Second)); !ok {
		t.Fatal("downgrade: the token in hand refused")
	}
	if _, ok := b.Allow("a", 1, t0.Add(3*time.Second)); ok {
		t.Fatal("downgrade kept more tokens than the new count")
	}
}

// TestBucketsBounded: a flood of made-up keys keeps at most maxKeys, even
// when none is idle.
func TestBucketsBounded(t *testing.T) {
	b := ratelimit.NewBuckets(time.Minute, 100)
	for i := range 10_000 {
		b.Allow(fmt.Sprint("user", i), 5, t0.Add(time.Duration(i)*time.Millisecond))
		if got := b.Len(); got > 100 {
			t.Fatalf("after %d keys the buckets hold %d, cap 100", i+1, got)
		}
	}
	b.Allow("late", 5, t0.Add(time.Hour))
	if got := b.Len(); got != 1 {
		t.Fatalf("an hour later %d keys remain, want 1", got)
	}
}

// BenchmarkBucketsAllow is the cost of one AI call's rate check for a
// user already remembered.
func BenchmarkBucketsAllow(b *testing.B) {
	bs := ratelimit.NewBuckets(time.Minute, ratelimit.DefaultMaxKeys)
	now := t0
	for b.Loop() {
		now = now.Add(time.Second)
		bs.Allow("ada@example.com", 60, now)
	}
}
