package changelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultSnapshotInterval is how often scheduled snapshots run by default.
const DefaultSnapshotInterval = 24 * time.Hour

// SchedulerOptions tune a Scheduler.
type SchedulerOptions struct {
	// Interval between scheduled runs; 0 (or negative) turns scheduled
	// snapshots off unless Tick is set.
	Interval time.Duration
	// Tick, when set, triggers the runs instead of a ticker of Interval, so
	// tests decide when a run happens.
	Tick <-chan time.Time
	// AfterRun, when set, is called after every scheduled run with how many
	// boards it snapshotted and its error.
	AfterRun func(snapshotted int, err error)
	// Logger; nil is slog.Default().
	Logger *slog.Logger
}

// Scheduler takes scheduled snapshots: every Interval it snapshots each
// board whose version moved since its last snapshot, pruning the oldest
// beyond the Log's Keep. Build it with NewScheduler; Start and Stop it.
type Scheduler struct {
	log  *Log
	opts SchedulerOptions
	lg   *slog.Logger

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool
}

// NewScheduler builds a scheduler on l.
func NewScheduler(l *Log, opts SchedulerOptions) *Scheduler {
	lg := opts.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return &Scheduler{log: l, opts: opts, lg: lg}
}

// Start runs the schedule in a goroutine until ctx ends or Stop is called.
// It does nothing when scheduled snapshots are off, when already started,
// or after Stop.
func (s *Scheduler) Start(ctx context.Context) {
	tick := s.opts.Tick
	var ticker *time.Ticker
	if tick == nil {
		if s.opts.Interval <= 0 {
			return
		}
		ticker = time.NewTicker(s.opts.Interval)
		tick = ticker.C
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil || s.stopped {
		if ticker != nil {
			ticker.Stop()
		}
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if ticker != nil {
			defer ticker.Stop()
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick:
				n, err := s.Run(ctx)
				if err != nil && ctx.Err() == nil {
					s.lg.WarnContext(ctx, "scheduled snapshots failed", slog.Int("snapshotted", n), slog.Any("err", err))
				}
				if s.opts.AfterRun != nil {
					s.opts.AfterRun(n, err)
				}
			}
		}
	}()
}

// Stop ends the schedule and waits for a run in progress to finish (its
// context is cancelled). Calling it twice, or without Start, is safe.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	s.stopped = true
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Run snapshots, once and now, every board whose version moved since its
// last snapshot, and returns how many it snapshotted. A board that fails
// does not stop the others; the errors are joined.
func (s *Scheduler) Run(ctx context.Context) (int, error) {
	ids, err := s.log.store.BoardsToSnapshot(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		if _, err := s.log.snapshotWaiting(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("snapshot board %s: %w", id, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
