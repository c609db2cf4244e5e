// Package postgres is Corkboard's PostgreSQL store: the same contract as the
// bbolt store in persist (same methods, record types and board error codes),
// on tables a pool of stateless nodes can share. The board version comes
// from the database (the push transaction bumps it with UPDATE … RETURNING),
// so two nodes can never hand out the same version. See docs/postgres.md.
package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"corkboard/board"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Session settings every pooled connection gets (docs/postgres.md says why).
// synchronous_commit is left on: an acknowledged push must survive a crash
// of the database.
var runtimeParams = map[string]string{
	// A statement waiting this long for a row lock gives up (55P03) instead
	// of queueing behind a stuck transaction.
	"lock_timeout": "5s",
	// No statement of ours is meant to run for long; the largest push
	// (500 notes of 120 KB) writes in well under a second.
	"statement_timeout": "30s",
	// A node that dies (or is stopped) inside a transaction must not hold
	// a board's row lock for longer than this. Our transactions never wait
	// on anything but the database between statements, so only a stopped
	// or starved node reaches it.
	"idle_in_transaction_session_timeout": "15s",
}

// DefaultTimeout bounds a call whose context has no deadline of its own.
const DefaultTimeout = 30 * time.Second

// migrationLockID is the advisory lock key Open holds while migrating, so
// that nodes starting together apply each migration once.
const migrationLockID int64 = 0x636f726b626f6172 // "corkboar"

// maxAttempts is how many times a write transaction that failed with a
// transient error (see retryable) runs in all.
const maxAttempts = 4

// Store is the PostgreSQL-backed store. It is safe for concurrent use, and
// several Stores (on several nodes) may share one database.
type Store struct {
	pool    *pgxpool.Pool
	secret  []byte
	timeout time.Duration

	// renderNote renders the note a merge overwrote for the changelog
	// (SetNoteRenderer).
	renderNote func(board.Note) []byte

	// limits are checked by every push (SetLimits).
	limits board.Limits

	// Now is the clock; tests replace it before use.
	Now func() time.Time
}

// Open connects to the database dsn names (a postgres:// URL or a key=value
// string; pgxpool's pool_max_conns and friends apply), applies the
// migrations it has not seen yet under an advisory lock, and loads the
// server secret (creating it on first open).
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse PostgreSQL address: %w", err)
	}
	for k, v := range runtimeParams {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	ctx, cancel := withDeadline(ctx, DefaultTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	s := &Store{pool: pool, timeout: DefaultTimeout, Now: time.Now}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.loadSecret(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pool, waiting for connections in use to be returned.
// Calling it twice is safe.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Pool returns the connection pool, for callers (the fan-out listener,
// tests) that need the database beyond the store's methods.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Secret returns the server's 32-byte secret, created on first open and kept
// in the database, so that every node keys one-time codes alike.
func (s *Store) Secret() []byte { return s.secret }

func (s *Store) now() time.Time { return s.Now().UTC() }

// SetNoteRenderer gives the store the renderer of note snapshots
// (changelog.RenderNote; persist cannot import changelog, which imports
// it). A push whose merge overwrites part of a note logs the note with it,
// and fails with an internal error when none was set. Call it before the
// store is used, as for Now.
func (s *Store) SetNoteRenderer(render func(board.Note) []byte) {
	s.renderNote = render
}

// migration is one embedded SQL file: NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, path := range names {
		name := strings.TrimPrefix(path, "migrations/")
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and _", name)
		}
		body, err := migrationFiles.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share a version", out[i-1].name, out[i].name)
		}
	}
	return out, nil
}

// migrate applies the migrations not yet recorded in schema_migrations, each
// in its own transaction with its record, while holding a session advisory
// lock: a second node starting at the same time waits, then finds them
// applied.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer func() {
		// The lock is the session's: release it before the connection goes
		// back to the pool. If this fails the connection is unusable, so
		// drop it; closing the session frees the lock too.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", migrationLockID); err != nil {
			conn.Conn().Close(uctx)
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	for _, v := range vs {
		applied[int(v)] = true
	}
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.name, err)
		}
	}
	return nil
}

func (s *Store) loadSecret(ctx context.Context) error {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("generate server secret: %w", err)
	}
	// The first node to get here stores its secret; every node reads the
	// stored one.
	if _, err := s.pool.Exec(ctx, "INSERT INTO meta (key, value) VALUES ('secret', $1) ON CONFLICT (key) DO NOTHING", secret); err != nil {
		return fmt.Errorf("store server secret: %w", err)
	}
	if err := s.pool.QueryRow(ctx, "SELECT value FROM meta WHERE key = 'secret'").Scan(&s.secret); err != nil {
		return fmt.Errorf("read server secret: %w", err)
	}
	return nil
}

// withDeadline gives ctx a deadline d from now unless it has one already.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// call bounds one method call by the store's timeout.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return withDeadline(ctx, s.timeout)
}

var (
	readWrite = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	// pushWrite is readWrite with generic plans for the push's prepared
	// statements. Their parameters are arrays (unnest), whose length a
	// custom plan knows and a generic one does not, so PostgreSQL kept
	// planning them anew on every execution, which cost more than running
	// them (0.15 to 0.25 ms each against 0.03 ms, measured with EXPLAIN
	// ANALYZE); every statement of a push looks rows up by key, where the
	// generic plan is the same. SET LOCAL ends with the transaction, and
	// goes with BEGIN in one round trip.
	pushWrite = pgx.TxOptions{IsoLevel: pgx.ReadCommitted,
		BeginQuery: "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL plan_cache_mode = force_generic_plan"}
	// snapshotRead is one consistent view across the statements of a read.
	snapshotRead = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// inTx runs fn in one transaction with opts. When retry is set, fn must
// have no effect outside the transaction: a transaction that failed with a
// transient error (see retryable) runs again, up to maxAttempts in all.
// fn's *board.Error comes back as it is.
func (s *Store) inTx(ctx context.Context, opts pgx.TxOptions, retry bool, fn func(tx pgx.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	for attempt := 1; ; attempt++ {
		var committing bool
		err = s.tryTx(ctx, opts, fn, &committing)
		if err == nil || !retry || attempt == maxAttempts || !retryable(ctx, err, committing) {
			return err
		}
	}
}

func (s *Store) tryTx(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error, committing *bool) error {
	tx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	*committing = true
	return tx.Commit(ctx)
}

// retryable reports whether a failed transaction certainly did not commit
// and may run again: PostgreSQL rolled it back (serialization failure,
// deadlock), or the connection failed before COMMIT was sent (the server
// rolls back a transaction whose session ends). A failure during COMMIT
// is ambiguous (it may have committed) and is not retried: the caller's
// retry with the same idempotency key settles it. Nothing is retried once
// ctx is done.
func retryable(ctx context.Context, err error, committing bool) bool {
	if ctx.Err() != nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001" || pe.Code == "40P01":
			return true
		case pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || strings.HasPrefix(pe.Code, "08"):
			// The server ended the session (pg_terminate_backend, a
			// restart) or the connection failed: before COMMIT the
			// transaction is gone with it.
			return !committing
		}
		return false
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	if committing {
		return false
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.Is(err, pgx.ErrTxClosed) || isConnLoss(err)
}

// isConnLoss reports whether err looks like a connection that broke (as
// opposed to an error the server answered with).
func isConnLoss(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) || strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "unexpected EOF")
}

// wrap adds context to a storage failure; board errors (not found,
// conflict, invalid) pass as they are so callers can read their code.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var be *board.Error
	if errors.As(err, &be) {
		return err
	}
	// The caller's own cancellation or deadline comes back as it is.
	for _, c := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) {
			return c
		}
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

func notFound(what string) error {
	return board.Errorf(board.ENOTFOUND, "%s not found.", what)
}

// nanos and fromNanos keep times as Unix nanoseconds (see the migration).
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// SweepBatch is how many records one step of a sweep reads, and so the most
// one of its statements deletes (as in the bbolt store).
const SweepBatch = 1000

// MigrationCount is how many migrations this build embeds.
func MigrationCount() int {
	ms, err := loadMigrations()
	if err != nil {
		return -1
	}
	return len(ms)
}
