package rooms_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"corkboard/rooms"
)

// stageLog is a StageRecorder that hands each timeline to the test.
type stageLog chan rooms.MessageStages

func (l stageLog) RecordStages(s rooms.MessageStages) { l <- s }

// TestStagesRecordEachFannedOutPush: with a recorder, every push fanned out
// to a room big enough for several shards gives one timeline, after every
// shard sent it, whose stages are in the order a message goes through
// them: received, committed, taken by the loop, handed over, sent.
func TestStagesRecordEachFannedOutPush(t *testing.T) {
	const pushes = 3
	const n = rooms.FanOutPart + 10 // two shards
	rec := make(stageLog, pushes)
	r := startRoom(t, &memStore{}, rooms.Options{Stages: rec})
	sinks := make([]*versionSink, n)
	var pusher *rooms.Subscriber
	for i := range n {
		sinks[i] = newVersionSink(pushes)
		s, _, err := r.Subscribe(context.Background(), rooms.Member{ConnID: fmt.Sprintf("c%d", i), Email: fmt.Sprintf("u%d@example.com", i), Sink: sinks[i]})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			pusher = s
		}
	}
	for i := range pushes {
		if _, _, err := pusher.Push(context.Background(), fmt.Sprintf("m%d", i), onePush(fmt.Sprintf("n%d", i), "x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range sinks {
		awaitDone(t, s.done, fmt.Sprintf("subscriber %d's versions", i))
	}
	for v := int64(1); v <= pushes; v++ {
		// The last shard records after its last Send, which the
		// subscriber may see first: wait for it.
		var s rooms.MessageStages
		select {
		case s = <-rec:
		case <-time.After(waitFor):
			t.Fatalf("no timeline for version %d within %v", v, waitFor)
		}
		if got, want := s.Version, v; got != want {
			t.Fatalf("Version=%d, want %d", got, want)
		}
		if got, want := s.Shards, 2; got != want {
			t.Fatalf("Shards=%d, want %d", got, want)
		}
		order := []struct {
			name string
			at   int64
		}{{"received", s.Received}, {"commitStart", s.CommitStart}, {"committed", s.Committed}, {"encoded", s.Encoded}, {"taken", s.Taken}, {"firstStart", s.FirstStart}, {"done", s.Done}}
		for i := 1; i < len(order); i++ {
			if order[i-1].at == 0 || order[i].at < order[i-1].at {
				t.Fatalf("version %d: %s at %d, then %s at %d: want each stage set and in order", v, order[i-1].name, order[i-1].at, order[i].name, order[i].at)
			}
		}
		if s.HandedOver < s.Taken || s.LastStart < s.FirstStart || s.SlowestShardNs > s.Done-s.FirstStart {
			t.Fatalf("version %d: hand-over, starts or slowest shard out of place: %+v", v, s)
		}
	}
	select {
	case s := <-rec:
		t.Fatalf("a timeline for a message nobody pushed: %+v", s)
	default:
	}
}
