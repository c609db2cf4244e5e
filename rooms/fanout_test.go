package rooms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"corkboard/rooms"
)

// versionSink records the versions a subscriber is sent, from changes
// messages and from the acks of its own pushes, and never refuses one.
// When gate is set, the first changes message blocks Send until gate is
// closed (entered is closed when it does): a descheduled thread or a
// stuck shard, without a sleep.
type versionSink struct {
	mu       sync.Mutex
	versions []int64
	bad      string // why the sequence is wrong, if it is
	want     int64  // done is closed once the last version is this
	done     chan struct{}
	got      chan int64 // every version, as it arrives (buffered; see newVersionSink)

	gate    chan struct{}
	entered chan struct{}
	once    sync.Once
}

func newVersionSink(want int64) *versionSink {
	return &versionSink{want: want, done: make(chan struct{}), got: make(chan int64, want)}
}

var ackType = []byte(`"type":"ack"`)

func (v *versionSink) Send(m *rooms.Message) bool {
	version := m.Version
	if version == 0 && bytes.Contains(m.Data, ackType) {
		var ack struct {
			ServerVersion int64 `json:"serverVersion"`
		}
		if err := json.Unmarshal(m.Data, &ack); err != nil {
			panic(err)
		}
		version = ack.ServerVersion
	}
	if version == 0 {
		return true // presence: not what is checked here
	}
	if v.gate != nil {
		v.once.Do(func() {
			close(v.entered)
			<-v.gate
		})
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if last := int64(len(v.versions)); version != last+1 && v.bad == "" {
		v.bad = fmt.Sprintf("got version %d after %d", version, last)
	}
	v.versions = append(v.versions, version)
	if version == v.want {
		close(v.done)
	}
	v.got <- version
	return true
}

// check reports a sink that did not get exactly 1..want in order.
func (v *versionSink) check(tb testing.TB, who string) {
	tb.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.bad != "" || int64(len(v.versions)) != v.want {
		tb.Fatalf("%s: %s; got %d versions, want 1..%d in order", who, v.bad, len(v.versions), v.want)
	}
}

func awaitDone(tb testing.TB, c <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-c:
	case <-time.After(waitFor):
		tb.Fatalf("%s within %v", what, waitFor)
	}
}

// TestFanOutOrderPerConnection: with pushes from several connections at
// once, every subscriber of a room big enough for several fan-out shards
// gets every version once, in order (its own as acks), and nothing else.
func TestFanOutOrderPerConnection(t *testing.T) {
	const pushers, each = 4, 15
	const n = 2*rooms.FanOutPart + 50 // three shards
	r := startRoom(t, &memStore{}, rooms.Options{})
	sinks := make([]*versionSink, n)
	subs := make([]*rooms.Subscriber, n)
	for i := range n {
		sinks[i] = newVersionSink(pushers * each)
		s, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: fmt.Sprintf("c%d", i), Email: fmt.Sprintf("u%d@example.com", i), Sink: sinks[i]})
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	shards := map[int]bool{}
	for _, s := range subs {
		shards[rooms.ShardOf(r, s)] = true
	}
	if len(shards) < 3 || shards[0] {
		t.Fatalf("subscribers on shards %v, want three or more, every subscriber on one", shards)
	}
	var wg sync.WaitGroup
	for p := range pushers {
		pusher := subs[p*n/pushers] // spread over the shards
		wg.Go(func() {
			for i := range each {
				if _, _, err := pusher.Push(context.Background(), fmt.Sprintf("m%d", i), onePush(fmt.Sprintf("p%d-%d", p, i), "x"), ""); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, v := range sinks {
		awaitDone(t, v.done, fmt.Sprintf("subscriber %d got not every version", i))
		v.check(t, fmt.Sprintf("subscriber %d", i))
	}
}

// TestFanOutBlockedShardDelaysNoOtherShard: while one subscriber's sink
// is stuck (its shard's goroutine with it), the subscribers of the other
// shards get the next messages; once it is released, everyone, the stuck
// one included, has every version in order.
func TestFanOutBlockedShardDelaysNoOtherShard(t *testing.T) {
	const pushes = 3
	const n = 2*rooms.FanOutPart + 50
	r := startRoom(t, &memStore{}, rooms.Options{})
	sinks := make([]*versionSink, n)
	subs := make([]*rooms.Subscriber, n)
	for i := range n {
		sinks[i] = newVersionSink(pushes)
		s, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: fmt.Sprintf("c%d", i), Email: fmt.Sprintf("u%d@example.com", i), Sink: sinks[i]})
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	stuck := n / 2
	sinks[stuck].gate, sinks[stuck].entered = make(chan struct{}), make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(sinks[stuck].gate)
		}
	}
	defer release() // the room's Close waits for its shards
	shard := make([]int, n)
	for i, s := range subs {
		shard[i] = rooms.ShardOf(r, s)
	}
	for i := 1; i <= pushes; i++ {
		if _, _, err := r.Push(context.Background(), onePush(fmt.Sprintf("n%d", i), "x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	awaitDone(t, sinks[stuck].entered, "the stuck sink was not sent the first change")
	others := 0
	for i, v := range sinks {
		if shard[i] != shard[stuck] {
			others++
			awaitDone(t, v.done, fmt.Sprintf("subscriber %d (shard %d) did not get every version while shard %d was stuck", i, shard[i], shard[stuck]))
		}
	}
	if others == 0 {
		t.Fatal("every subscriber is on the stuck one's shard")
	}
	// The stuck shard really is stuck: none of its subscribers is past the
	// first version.
	for i, v := range sinks {
		if shard[i] == shard[stuck] {
			v.mu.Lock()
			got := len(v.versions)
			v.mu.Unlock()
			if got > 1 {
				t.Fatalf("subscriber %d on the stuck shard got %d versions", i, got)
			}
		}
	}
	release()
	for i, v := range sinks {
		awaitDone(t, v.done, fmt.Sprintf("subscriber %d got not every version after the release", i))
		v.check(t, fmt.Sprintf("subscriber %d", i))
	}
}

// TestFanOutSmallRoomOneShard: a room below FanOutPart subscribers sends
// from one goroutine (one wake-up per message), and the first subscriber
// past it opens a second shard.
func TestFanOutSmallRoomOneShard(t *testing.T) {
	r := startRoom(t, &memStore{}, rooms.Options{})
	var subs []*rooms.Subscriber
	for i := range rooms.FanOutPart + 1 {
		s, _ := subscribeQueue(t, r, fmt.Sprintf("c%d", i), fmt.Sprintf("u%d@example.com", i), 2*rooms.FanOutPart)
		subs = append(subs, s)
	}
	for i, s := range subs {
		want := 1
		if i == rooms.FanOutPart {
			want = 2
		}
		if got := rooms.ShardOf(r, s); got != want {
			t.Fatalf("subscriber %d on shard %d, want %d", i, got, want)
		}
	}
}
