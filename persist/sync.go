package persist

import (
	"context"
	"time"

	"corkboard/board"
)

// SyncStore is the storage behind sync: it applies pushes and owns the board
// version, answers "what changed since", and forgets old tombstones and
// idempotency keys. Rooms and the hub speak only this interface, so that a
// second backend (PostgreSQL, with the version bumped by an UPDATE …
// RETURNING in the same transaction as the rows) can replace bbolt without
// touching them.
type SyncStore interface {
	// ApplyPushes applies pushes to one board in arrival order, in one
	// transaction, each that changes something bumping the version by one
	// (deleting unknown or already deleted IDs is no change). The result
	// has one entry per input. The error is ENOTFOUND for an unclaimed board or EINTERNAL;
	// a push that fails validation gets EINVALID in its own entry and the
	// others still apply.
	ApplyPushes(ctx context.Context, boardID string, pushes []PushInput) ([]Applied, error)
	// ChangesSince answers a pull: rows changed after since and IDs deleted
	// after it, or the full state (with Reset when since > 0) when since is
	// older than the tombstone horizon or newer than the board. ENOTFOUND for
	// an unclaimed board.
	ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error)
	// CurrentVersion returns the board's version. ENOTFOUND for an unclaimed board.
	CurrentVersion(ctx context.Context, boardID string) (int64, error)
	// BoardState returns the whole live board. ENOTFOUND for an unclaimed board.
	BoardState(ctx context.Context, boardID string) (*board.State, error)
	// PruneTombstones forgets deletions recorded before cutoff, moving each
	// board's horizon up; it returns how many it forgot.
	PruneTombstones(ctx context.Context, cutoff time.Time) (int, error)
	// SweepIdempotencyKeys forgets keys recorded before cutoff; it returns how many.
	SweepIdempotencyKeys(ctx context.Context, cutoff time.Time) (int, error)
}

// MaxIdempotencyKeyLen is the longest Idempotency-Key accepted, in bytes.
const MaxIdempotencyKeyLen = 128

// PushInput is one validated-or-not push waiting to be applied, with the
// client's idempotency key ("" for none).
type PushInput struct {
	Push           *board.Push
	IdempotencyKey string
}

// Applied is the outcome of one push.
type Applied struct {
	// Version is the board version the push produced; for a replayed key it
	// is the version the key first produced, and for a push that changes
	// nothing the board's current version.
	Version int64
	// Replayed is true when the idempotency key had already been applied:
	// nothing was written.
	Replayed bool
	// Changes holds exactly what the push changed, every row at Version, in
	// the shape of a pull answer since Version-1. It is nil when no row was
	// written (replay, a push that changes nothing, error).
	Changes *board.Changes
	// Err is the push's own failure (EINVALID); the other pushes of the same
	// call are unaffected.
	Err error
}
