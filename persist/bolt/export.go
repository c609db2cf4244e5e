package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	bbolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"corkboard/board"
	"corkboard/persist"
)

// OpenReadOnly opens the bbolt file at path for reading only, as `corkboard
// migrate` does: it creates and writes nothing, and holds a shared lock, so
// that a server cannot start on the file meanwhile. It fails with ErrLocked
// after timeout when a server (or anything else with a write lock) holds
// the file. Write methods of the returned DB fail.
func OpenReadOnly(path string, timeout time.Duration) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	badMeta, err := inspectFile(path)
	if err != nil {
		return nil, err
	}
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{bolt: bdb, path: path, Now: time.Now, badMeta: badMeta}
	if err := withFaultsAsPanics(path, func() error {
		return bdb.View(func(tx *bbolt.Tx) error {
			if meta := tx.Bucket(bucketMeta); meta != nil {
				db.secret = bytes.Clone(meta.Get(keySecret))
			}
			return nil
		})
	}); err != nil {
		bdb.Close()
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return db, nil
}

// ExportBoards calls fn with every board's record (header, owner,
// invitees, version, horizon) in ID order, in one read transaction: what a
// migration checks against its target before it copies anything.
func (db *DB) ExportBoards(ctx context.Context, fn func(persist.BoardRecord) error) error {
	return db.view(ctx, func(tx *bbolt.Tx) error {
		boards := tx.Bucket(bucketBoards)
		if boards == nil {
			return nil
		}
		return boards.ForEach(func(k, _ []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := boardRecord(tx, string(k))
			if err != nil {
				return err
			}
			return fn(rec)
		})
	})
}

func boardRecord(tx *bbolt.Tx, id string) (persist.BoardRecord, error) {
	b, err := getBoard(tx, id)
	if err != nil {
		return persist.BoardRecord{}, fmt.Errorf("board %s: %w", id, err)
	}
	var rb *bbolt.Bucket
	if top := tx.Bucket(bucketBoardRows); top != nil {
		rb = top.Bucket([]byte(id))
	}
	return persist.BoardRecord{Board: *b, Horizon: horizon(rb)}, nil
}

// Export streams every record of the store to sink, in the order
// persist.DumpSink documents, from one read transaction: the dump is one
// consistent state of the file. Every byte handed over is a copy, so the
// sink may keep what it is given; the export itself holds one record at a
// time, so its memory does not grow with the store.
func (db *DB) Export(ctx context.Context, sink persist.DumpSink) error {
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		if err := sink.Secret(ctx, bytes.Clone(db.secret)); err != nil {
			return err
		}
		if err := eachIn(ctx, tx, bucketUsers, func(k, v []byte) error {
			var u persist.User
			if err := json.Unmarshal(v, &u); err != nil {
				return fmt.Errorf("decode user %q: %w", k, err)
			}
			return sink.User(ctx, u)
		}); err != nil {
			return err
		}
		if err := eachIn(ctx, tx, bucketCustomers, func(k, v []byte) error {
			return sink.Customer(ctx, persist.CustomerRecord{CustomerID: string(k), Email: string(v)})
		}); err != nil {
			return err
		}
		if err := eachIn(ctx, tx, bucketEvents, func(k, v []byte) error {
			var stamp string
			if err := json.Unmarshal(v, &stamp); err != nil {
				return fmt.Errorf("decode billing event %q: %w", k, err)
			}
			at, err := time.Parse(time.RFC3339, stamp)
			if err != nil {
				return fmt.Errorf("billing event %q: %w", k, err)
			}
			return sink.BillingEvent(ctx, persist.BillingEventRecord{EventID: string(k), ProcessedAt: at})
		}); err != nil {
			return err
		}
		if err := eachIn(ctx, tx, bucketUsage, func(k, v []byte) error {
			email, month, ok := bytes.Cut(k, []byte{0})
			if !ok || len(v) != 8 {
				return fmt.Errorf("usage record %q is malformed", k)
			}
			return sink.Usage(ctx, persist.UsageRecord{Email: string(email), Month: string(month), Used: int(binary.BigEndian.Uint64(v))})
		}); err != nil {
			return err
		}
		if err := eachIn(ctx, tx, bucketSessions, func(k, v []byte) error {
			var s persist.Session
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("decode session: %w", err)
			}
			return sink.Session(ctx, persist.SessionRecord{ID: bytes.Clone(k), Session: s})
		}); err != nil {
			return err
		}
		if err := eachIn(ctx, tx, bucketOTP, func(k, v []byte) error {
			var o persist.OTP
			if err := json.Unmarshal(v, &o); err != nil {
				return fmt.Errorf("decode one-time code of %q: %w", k, err)
			}
			return sink.OTP(ctx, persist.OTPRecord{Email: string(k), OTP: o})
		}); err != nil {
			return err
		}
		return eachIn(ctx, tx, bucketBoards, func(k, _ []byte) error {
			return exportBoard(ctx, tx, string(k), sink)
		})
	})
	if err != nil && board.ErrorCode(err) == board.EINTERNAL && ctx.Err() == nil {
		return fmt.Errorf("export %s: %w", db.path, err)
	}
	return err
}

// eachIn calls fn for every key of the top-level bucket name (none when the
// bucket does not exist), stopping when ctx is done. k and v are valid
// inside fn only.
func eachIn(ctx context.Context, tx *bbolt.Tx, name []byte, fn func(k, v []byte) error) error {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// exportBoard streams one board: its record, rows, keys and changelog.
func exportBoard(ctx context.Context, tx *bbolt.Tx, id string, sink persist.DumpSink) error {
	rec, err := boardRecord(tx, id)
	if err != nil {
		return err
	}
	if err := sink.Board(ctx, rec); err != nil {
		return err
	}
	if top := tx.Bucket(bucketBoardRows); top != nil {
		if rb := top.Bucket([]byte(id)); rb != nil {
			if err := exportRows(ctx, rb, id, sink); err != nil {
				return err
			}
		}
	}
	if err := exportChangelog(ctx, tx, id, sink); err != nil {
		return err
	}
	links, err := boardLinks(tx, id)
	if err != nil {
		return err
	}
	for _, l := range links {
		if err := sink.Link(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// exportChangelog streams a board's changelog state, entries and snapshots.
func exportChangelog(ctx context.Context, tx *bbolt.Tx, id string, sink persist.DumpSink) error {
	top := tx.Bucket(bucketChangelog)
	if top == nil {
		return nil
	}
	cl := top.Bucket([]byte(id))
	if cl == nil {
		return nil
	}
	if meta := cl.Bucket(clMeta); meta != nil {
		st := persist.ChangelogStateRecord{
			BoardID:       id,
			Stamp:         string(meta.Get(clMetaStamp)),
			Current:       bytes.Clone(meta.Get(clMetaCurrent)),
			CurrentPhases: bytes.Clone(meta.Get(clMetaCurrentPhases)),
		}
		st.CurrentVersion, _ = clInt64(meta, clMetaCurrentVersion)
		st.SnapshotVersion, _ = clInt64(meta, clMetaSnapshotVersion)
		if err := sink.ChangelogState(ctx, st); err != nil {
			return err
		}
	}
	if entries := cl.Bucket(clEntries); entries != nil {
		c := entries.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			m, content, err := decodeEntry(v)
			if err != nil {
				return fmt.Errorf("board %s: entry %s: %w", id, k, err)
			}
			e := persist.LogEntry{Key: string(k), NoteID: m.NoteID, Action: m.Action, Timestamp: m.Timestamp, Content: bytes.Clone(content)}
			if err := sink.LogEntry(ctx, persist.LogEntryRecord{BoardID: id, Entry: e}); err != nil {
				return err
			}
		}
	}
	if snaps := cl.Bucket(clSnapshots); snaps != nil {
		c := snaps.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := sink.Snapshot(ctx, persist.SnapshotRecord{BoardID: id, Key: string(k), Markdown: bytes.Clone(v)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// exportRows streams a board's notes, then items (each in ID order), then
// its revisions (by kind, ID and version), then its idempotency keys.
func exportRows(ctx context.Context, rb *bbolt.Bucket, id string, sink persist.DumpSink) error {
	for _, t := range []struct {
		bucket []byte
		kind   string
	}{{subNotes, persist.RowNote}, {subItems, persist.RowItem}, {subFrames, persist.RowFrame}, {subConnectors, persist.RowConnector}} {
		b := rb.Bucket(t.bucket)
		if b == nil {
			continue
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(v) < 9 {
				return fmt.Errorf("board %s: row %q is %d bytes, too short", id, k, len(v))
			}
			r := persist.RowRecord{BoardID: id, Kind: t.kind, ID: string(k), Version: int64(binary.BigEndian.Uint64(v[1:9]))}
			switch v[0] {
			case rowLive:
				r.Data = bytes.Clone(v[9:])
			case rowTombstone:
				if len(v) < 17 {
					return fmt.Errorf("board %s: tombstone %q is %d bytes, too short", id, k, len(v))
				}
				r.DeletedAt = time.Unix(0, int64(binary.BigEndian.Uint64(v[9:17]))).UTC()
			default:
				return fmt.Errorf("board %s: row %q has an unknown kind %q", id, k, v[0])
			}
			if err := sink.Row(ctx, r); err != nil {
				return err
			}
		}
	}
	if err := exportRevisions(ctx, rb, id, sink); err != nil {
		return err
	}
	if err := exportVoteDots(ctx, rb, id, sink); err != nil {
		return err
	}
	keys := rb.Bucket(subKeys)
	if keys == nil {
		return nil
	}
	c := keys.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) != 16 {
			return fmt.Errorf("board %s: idempotency key %q is malformed", id, k)
		}
		rec := persist.IdempotencyKeyRecord{
			BoardID:    id,
			Key:        string(k),
			Version:    int64(binary.BigEndian.Uint64(v[:8])),
			RecordedAt: time.Unix(0, int64(binary.BigEndian.Uint64(v[8:]))).UTC(),
		}
		if err := sink.IdempotencyKey(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// exportRevisions streams a board's revisions, in key order. Whether a
// sweep parked one (took it off the time index) is not part of the dump:
// the target's next sweep looks at it again.
func exportRevisions(ctx context.Context, rb *bbolt.Bucket, id string, sink persist.DumpSink) error {
	revs := rb.Bucket(subRevisions)
	if revs == nil {
		return nil
	}
	c := revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(k) < 11 || len(k) != 3+int(binary.BigEndian.Uint16(k[1:3]))+8 || len(v) < 9 {
			return fmt.Errorf("board %s: revision %q is malformed", id, k)
		}
		r := persist.RevisionRecord{
			BoardID:      id,
			ID:           string(k[3 : len(k)-8]),
			Version:      int64(binary.BigEndian.Uint64(k[len(k)-8:])),
			SupersededAt: time.Unix(0, int64(binary.BigEndian.Uint64(v[:8]))).UTC(),
		}
		switch k[0] {
		case kindNote:
			r.Kind = persist.RowNote
		case kindItem:
			r.Kind = persist.RowItem
		case kindFrame:
			r.Kind = persist.RowFrame
		case kindConnector:
			r.Kind = persist.RowConnector
		default:
			return fmt.Errorf("board %s: revision %q has an unknown kind", id, k)
		}
		switch v[8] {
		case rowLive:
			r.Data = bytes.Clone(v[9:])
		case rowTombstone:
		default:
			return fmt.Errorf("board %s: revision %q has an unknown state %q", id, k, v[8])
		}
		if err := sink.Revision(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
