package persist

import (
	"context"
	"time"

	"corkboard/board"
)

// SyncStore is the storage behind sync: it applies pushes and owns the board
// version, answers "what changed since", and forgets old tombstones and
// idempotency keys. Rooms and the hub speak only this interface. Every
// method answers ENOTFOUND for an unclaimed board.
//
// Versions: a claimed board starts at 0; every push that changes something
// and is not a replay takes the next version, exactly one higher, in one
// transaction with every row it writes (each stamped with that version), so
// that concurrent pushes to one board get 1..N with no gap and no
// duplicate, and a reader never sees a version without its rows.
type SyncStore interface {
	// ApplyPushes validates (board.Push.Validate, the key's length) and
	// applies pushes to one board in order, in one transaction, and returns
	// one entry per input. A push that fails validation gets EINVALID in its
	// own entry and writes nothing, its idempotency key included; the others
	// still apply. A push whose key the board already recorded is a replay:
	// it writes nothing and answers the version the key first produced. A
	// push that changes nothing (empty, or deleting only IDs that are not
	// live) keeps the version and the board's updatedAt and answers the
	// current version without Changes, but records its key. Within a push,
	// upserts apply before deletions. The call's own error is ENOTFOUND for
	// an unclaimed board (nothing written) or an internal one.
	ApplyPushes(ctx context.Context, boardID string, pushes []PushInput) ([]Applied, error)
	// ChangesSince answers a pull: the rows changed after since and the IDs
	// deleted after it. since 0 is the full live state; since older than the
	// tombstone horizon or newer than the board is the full live state with
	// Reset; since equal to the version is the header with empty lists.
	// Lists are never nil. EINVALID (field "since") for a negative since.
	ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error)
	// CurrentVersion returns the board's version.
	CurrentVersion(ctx context.Context, boardID string) (int64, error)
	// BoardState returns the whole live board, header and rows, at one
	// version.
	BoardState(ctx context.Context, boardID string) (*board.State, error)
	// PruneTombstones forgets deletions recorded (by the store's clock)
	// strictly before cutoff, moving each board's horizon up to the highest
	// version it forgot; it returns how many it forgot.
	PruneTombstones(ctx context.Context, cutoff time.Time) (int, error)
	// SweepIdempotencyKeys forgets keys recorded strictly before cutoff,
	// after which a push repeating one applies again; it returns how many.
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
