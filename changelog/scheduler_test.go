package changelog_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
)

type runResult struct {
	n   int
	err error
}

// startScheduler starts a scheduler whose runs happen when the test sends
// on the returned tick channel; each run's outcome arrives on the other.
func startScheduler(tb testing.TB, l *changelog.Log) (*changelog.Scheduler, chan<- time.Time, <-chan runResult) {
	tb.Helper()
	tick := make(chan time.Time)
	runs := make(chan runResult, 1)
	s := changelog.NewScheduler(l, changelog.SchedulerOptions{
		Interval: time.Hour,
		Tick:     tick,
		AfterRun: func(n int, err error) { runs <- runResult{n, err} },
	})
	s.Start(context.Background())
	tb.Cleanup(s.Stop)
	return s, tick, runs
}

// runOnce triggers one scheduled run and returns how many boards it snapshotted.
func runOnce(tb testing.TB, tick chan<- time.Time, runs <-chan runResult) int {
	tb.Helper()
	select {
	case tick <- time.Now():
	case <-time.After(10 * time.Second):
		tb.Fatal("scheduler did not take the tick")
	}
	select {
	case r := <-runs:
		if r.err != nil {
			tb.Fatalf("scheduled run: %v", r.err)
		}
		return r.n
	case <-time.After(10 * time.Second):
		tb.Fatal("scheduled run did not finish")
	}
	return 0
}

func snapshotKeys(tb testing.TB, l *changelog.Log, boardID string) []string {
	tb.Helper()
	list, err := l.Snapshots(context.Background(), boardID)
	if err != nil {
		tb.Fatal(err)
	}
	keys := make([]string, len(list))
	for i, s := range list {
		keys[i] = s.Key
	}
	return keys
}

func TestSchedulerSnapshotsChangedBoards(t *testing.T) {
	e := newLogEnv(t, 3, "busy", "quiet")
	_, tick, runs := startScheduler(t, e.log)
	note := func(content string) board.Push {
		return board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1", Content: content}}}}
	}

	// Nothing changed anywhere yet: nothing to snapshot.
	if n := runOnce(t, tick, runs); n != 0 {
		t.Fatalf("first run snapshotted %d boards, want 0", n)
	}
	e.push(t, "busy", note("v1"))
	if n := runOnce(t, tick, runs); n != 1 {
		t.Fatalf("run after a push snapshotted %d boards, want 1", n)
	}
	// No change since: no new snapshot.
	e.clock.Advance(24 * time.Hour)
	if n := runOnce(t, tick, runs); n != 0 {
		t.Fatalf("run without changes snapshotted %d boards, want 0", n)
	}
	if keys := snapshotKeys(t, e.log, "quiet"); len(keys) != 0 {
		t.Fatalf("quiet board has snapshots %v", keys)
	}

	// Five more days of changes: only the 3 newest snapshots stay.
	var want []string
	for day := 2; day <= 6; day++ {
		e.push(t, "busy", note("v"+string(rune('0'+day))))
		e.clock.Advance(24 * time.Hour)
		if n := runOnce(t, tick, runs); n != 1 {
			t.Fatalf("day %d: snapshotted %d boards, want 1", day, n)
		}
		want = append([]string{"snapshots/" + persist.Stamp(e.clock.Now()) + ".md"}, want...)
	}
	if got := snapshotKeys(t, e.log, "busy"); !slices.Equal(got, want[:3]) {
		t.Fatalf("snapshots %v, want the 3 newest, newest first: %v", got, want[:3])
	}
	st, err := e.log.RestoreBoard(context.Background(), "busy", want[0])
	if err != nil || st.Notes[0].Content != "v6" {
		t.Fatalf("newest snapshot holds %+v (%v), want v6", st, err)
	}
}

func TestSchedulerLifecycle(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	t.Run("OffWithoutInterval", func(t *testing.T) {
		s := changelog.NewScheduler(e.log, changelog.SchedulerOptions{})
		s.Start(context.Background())
		s.Stop()
		s.Stop()
	})
	t.Run("StopTwiceAndStartAfterStop", func(t *testing.T) {
		s, tick, runs := startScheduler(t, e.log)
		runOnce(t, tick, runs)
		s.Stop()
		s.Stop()
		s.Start(context.Background()) // ignored after Stop
		select {
		case tick <- time.Now():
			t.Fatal("a stopped scheduler took a tick")
		case <-time.After(50 * time.Millisecond):
		}
	})
	t.Run("StopsWithContext", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s := changelog.NewScheduler(e.log, changelog.SchedulerOptions{Interval: time.Hour})
		s.Start(ctx)
		cancel()
		s.Stop() // returns once the goroutine has ended
	})
	t.Run("RunNow", func(t *testing.T) {
		e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n"}}}})
		n, err := changelog.NewScheduler(e.log, changelog.SchedulerOptions{}).Run(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("Run=%d,%v; want 1 board", n, err)
		}
	})
}
