package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotifyChannel is the LISTEN/NOTIFY channel nodes share (per database).
const NotifyChannel = "corkboard_nodes"

// notifySQL sends a notification in a transaction of its own that commits
// without waiting for its WAL to reach disk (synchronous_commit off for
// that transaction only): a note is not data, and what the nodes rely on
// is the queue's order, which is set at commit either way (scale-out.md,
// "Pulls from memory"). A crash that loses it cuts every listener, and
// their resync reads the store. It spares a push's acknowledgement, and
// every probe, an fsync.
const notifySQL = "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)"

// maxNotifyPayload is PostgreSQL's NOTIFY payload limit (less than 8000
// bytes in the default configuration).
const maxNotifyPayload = 7999

// BusOptions tune a Bus. Zero fields take the defaults.
type BusOptions struct {
	// Channel is the LISTEN/NOTIFY channel; "" is NotifyChannel.
	Channel string
	// MinBackoff and MaxBackoff bound the wait between two attempts to
	// reconnect the listener (doubling from the first to the second).
	MinBackoff, MaxBackoff time.Duration
	// PingEvery is how long the listener waits for a notification before
	// it checks its connection with a ping: a connection lost without a
	// FIN is only found by writing to it.
	PingEvery time.Duration
	// Logger; nil is slog.Default().
	Logger *slog.Logger
	// ProbeEvery is how often the bus sends itself a probe while someone
	// asks whether the listener is current (Current); ProbeFor is how long
	// it goes on after the last question. An idle node sends none.
	ProbeEvery, ProbeFor time.Duration
}

// Defaults of the probes.
const (
	DefaultProbeEvery = 3 * time.Millisecond
	DefaultProbeFor   = time.Second
)

// Bus carries the nodes' notes (hub.Bus) over PostgreSQL LISTEN/NOTIFY.
// Publish sends a NOTIFY through the store's pool, outside any
// transaction: it is called after a commit, never inside one (a NOTIFY in
// a transaction takes a database-wide lock at commit). One dedicated
// connection, outside the pool, LISTENs; when it is lost the bus
// reconnects with backoff and calls the listener's resync, since notes
// sent meanwhile are gone. Build it with Store.NewBus; Close it before the
// store.
type Bus struct {
	s    *Store
	opts BusOptions
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	listenerPID atomic.Uint32 // the listening backend's PID, 0 while not connected
	connects    atomic.Int64  // how many times the listener has connected

	probes probes
}

// NewBus returns a bus on the store's database. Nothing listens until
// Listen is called.
func (s *Store) NewBus(opts BusOptions) *Bus {
	if opts.Channel == "" {
		opts.Channel = NotifyChannel
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(5*time.Second, opts.MinBackoff)
	}
	if opts.PingEvery <= 0 {
		opts.PingEvery = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ProbeEvery <= 0 {
		opts.ProbeEvery = DefaultProbeEvery
	}
	if opts.ProbeFor <= 0 {
		opts.ProbeFor = DefaultProbeFor
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Bus{s: s, opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel}
	b.probes.init(opts.Channel)
	return b
}

// Publish sends payload to every listening node (this one included) with
// pg_notify. A payload over PostgreSQL's limit is refused before it is
// sent.
func (b *Bus) Publish(ctx context.Context, payload []byte) error {
	if len(payload) > maxNotifyPayload {
		return fmt.Errorf("notify: payload of %d bytes is over PostgreSQL's %d", len(payload), maxNotifyPayload)
	}
	ctx, cancel := b.s.call(ctx)
	defer cancel()
	_, err := b.s.pool.Exec(ctx, notifySQL, b.opts.Channel, string(payload))
	return wrap(err, "notify")
}

// Listen starts the listener: every notification's payload goes to
// receive, and resync is called each time the listener has (re)connected
// and LISTENs, before any notification of that connection. Both are
// called from the listener's goroutine. Call it once.
func (b *Bus) Listen(receive func(payload []byte), resync func()) {
	b.wg.Go(func() { b.run(receive, resync) })
	b.wg.Go(b.sendProbes)
}

// run keeps a listening connection until Close.
func (b *Bus) run(receive func([]byte), resync func()) {
	backoff := b.opts.MinBackoff
	for {
		connected, err := b.listen(receive, resync)
		b.listenerPID.Store(0)
		b.probes.lost()
		if b.ctx.Err() != nil {
			return
		}
		if connected {
			backoff = b.opts.MinBackoff
		}
		b.log.Warn("node bus listener lost; reconnecting", slog.Duration("in", backoff), slog.Any("err", err))
		select {
		case <-time.After(backoff):
		case <-b.ctx.Done():
			return
		}
		backoff = min(2*backoff, b.opts.MaxBackoff)
	}
}

// listen connects, LISTENs, resyncs and hands notifications on until the
// connection fails; connected reports whether it got as far as LISTEN.
func (b *Bus) listen(receive func([]byte), resync func()) (connected bool, err error) {
	cfg := b.s.pool.Config().ConnConfig.Copy()
	ctx, cancel := context.WithTimeout(b.ctx, b.s.timeout)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	cancel()
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(ctx)
	}()
	ctx, cancel = context.WithTimeout(b.ctx, b.s.timeout)
	_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.opts.Channel}.Sanitize())
	if err == nil {
		_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.probes.channel}.Sanitize())
	}
	cancel()
	if err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	b.listenerPID.Store(conn.PgConn().PID())
	b.connects.Add(1)
	// Only probes sent from now on count: notes committed before this
	// LISTEN were lost with the last connection, and resync makes up for
	// them before any probe of this connection is read.
	b.probes.listening()
	resync()
	for {
		ctx, cancel := context.WithTimeout(b.ctx, b.opts.PingEvery)
		n, err := conn.WaitForNotification(ctx)
		cancel()
		switch {
		case err == nil && n.Channel == b.probes.channel:
			b.probes.returned(n.Payload)
		case err == nil:
			receive([]byte(n.Payload))
		case b.ctx.Err() != nil:
			return true, b.ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Quiet for PingEvery: make sure the connection still stands.
			ctx, cancel := context.WithTimeout(b.ctx, b.s.timeout)
			err := conn.Ping(ctx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("ping: %w", err)
			}
		default:
			return true, fmt.Errorf("wait for notification: %w", err)
		}
	}
}

// ListenerPID returns the process ID of the listening backend (0 while
// the listener is not connected), for tests and operators who end it.
func (b *Bus) ListenerPID() uint32 { return b.listenerPID.Load() }

// Connects returns how many times the listener has connected and LISTENed.
func (b *Bus) Connects() int64 { return b.connects.Load() }

// Close stops the listener and waits for it. Safe to call twice.
func (b *Bus) Close() error {
	b.once.Do(b.cancel)
	b.wg.Wait()
	return nil
}
