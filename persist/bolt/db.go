// Package bolt is the bbolt implementation of persist.Store: everything the
// rest of the program keeps (users, sessions, one-time codes, boards and
// their rows, changelog, usage) in one file. Methods speak board's domain
// types and return *board.Error codes, never bbolt errors; the contract they
// keep is persist's, checked by persist/storetest.
package bolt

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"corkboard/board"
	"corkboard/persist"
)

// FileName is the bbolt file's name inside the data folder.
const FileName = "corkboard.db"

// Top-level buckets. Per-board rows live in nested buckets under bucketBoardRows.
var (
	bucketMeta      = []byte("meta")
	bucketUsers     = []byte("users")
	bucketSessions  = []byte("sessions")
	bucketOTP       = []byte("otp")
	bucketBoards    = []byte("boards")
	bucketMembers   = []byte("members") // email 0x00 boardID → role
	bucketBoardRows = []byte("board_rows")

	keySecret = []byte("secret")
)

var topBuckets = [][]byte{bucketMeta, bucketUsers, bucketSessions, bucketOTP, bucketBoards, bucketMembers, bucketBoardRows}

// commitDelay is how long a group commit waits for more writers.
const commitDelay = time.Millisecond

// ErrLocked is returned by Open when another process holds the data file.
var ErrLocked = errors.New("the data file is in use by another corkboard process")

var _ persist.Store = (*DB)(nil)

// DB is the bbolt-backed store. It is safe for concurrent use.
type DB struct {
	bolt   *bbolt.DB
	path   string
	secret []byte

	// batchers counts batch calls in flight (waiting or committing).
	batchers atomic.Int32

	// renderNote renders the note a merge overwrote for the changelog
	// (SetNoteRenderer).
	renderNote func(board.Note) []byte

	// limits are checked by every push (SetLimits).
	limits board.Limits

	// badMeta lists the damaged meta pages found on open (bbolt opened
	// the file from the other one); Check reports them.
	badMeta []string

	// Now is the clock; tests replace it before use.
	Now func() time.Time
}

// SetNoteRenderer gives the store the renderer of note snapshots
// (changelog.RenderNote; persist cannot import changelog, which imports
// it). A push whose merge overwrites part of a note logs the note with it,
// and fails with an internal error when none was set. Call it before the
// store is used, as for Now.
func (db *DB) SetNoteRenderer(render func(board.Note) []byte) {
	db.renderNote = render
}

// Open opens (creating when needed) the bbolt file in dir. It fails within
// about a second with ErrLocked when another process has the file open.
func Open(dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	// A damaged meta page alone is left to bbolt, which opens the file
	// from the other one; a file it cannot open safely is refused here.
	if _, err := inspectFile(path); err != nil {
		return nil, err
	}
	// bbolt's open loads the freelist, whose page may be damaged too.
	var bdb *bbolt.DB
	err := withFaultsAsPanics(path, func() (err error) {
		bdb, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
		return err
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
		}
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Batch waits this long for more writers before committing. bbolt's
	// default (10 ms) was most of a push's latency; an fsync here takes
	// about 2 ms, and writers that arrive during one still share the next.
	bdb.MaxBatchDelay = commitDelay
	db := &DB{bolt: bdb, path: path, Now: time.Now}
	if err := withFaultsAsPanics(path, func() error {
		return bdb.Update(func(tx *bbolt.Tx) error {
			for _, name := range topBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("create bucket %s: %w", name, err)
				}
			}
			meta := tx.Bucket(bucketMeta)
			if s := meta.Get(keySecret); s != nil {
				db.secret = append([]byte(nil), s...)
				return nil
			}
			db.secret = make([]byte, 32)
			if _, err := rand.Read(db.secret); err != nil {
				return fmt.Errorf("generate server secret: %w", err)
			}
			return meta.Put(keySecret, db.secret)
		})
	}); err != nil {
		bdb.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the file. Calling it twice is safe.
func (db *DB) Close() error {
	return db.bolt.Close()
}

// Path returns the bbolt file's path.
func (db *DB) Path() string { return db.path }

// Secret returns the server's 32-byte secret, created on first open and kept
// in the data file; it keys the hashes of one-time codes.
func (db *DB) Secret() []byte { return db.secret }

// now returns the current time in UTC.
func (db *DB) now() time.Time { return db.Now().UTC() }

// view and update run fn in a read or write transaction, returning early when
// ctx is already done. fn's error comes back as it is: a *board.Error keeps
// its code, and anything else (a bbolt or decoding failure) counts as
// EINTERNAL through board.ErrorCode, whose client message stays generic.
func (db *DB) view(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bolt.View(fn)
}

func (db *DB) update(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bolt.Update(fn)
}

// batch is update through bbolt's Batch, which coalesces concurrent writers
// into one transaction and one fsync (group commit). fn may run more than
// once, so it must have no effect outside the transaction.
//
// A writer that finds no other batch in flight commits at once instead:
// waiting commitDelay for company that is not coming would only add to its
// latency. Writers that arrive while it commits find it in flight, and
// group while they wait for its fsync.
func (db *DB) batch(ctx context.Context, fn func(tx *bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	alone := db.batchers.Add(1) == 1
	defer db.batchers.Add(-1)
	if alone {
		return db.bolt.Update(fn)
	}
	return db.bolt.Batch(fn)
}

// notFound is the ENOTFOUND error for a missing thing.
func notFound(what string) error {
	return board.Errorf(board.ENOTFOUND, "%s not found.", what)
}
