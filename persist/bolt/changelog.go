package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
)

// The changelog of each board lives in nested buckets under bucketChangelog:
//
//	changelog / <boardID> / e   log key → entry record (see encodeEntry)
//	                      / n   be16(len(noteID)) ‖ noteID ‖ log key → action
//	                      / a   action ‖ 0x00 ‖ log key → nil
//	                      / s   snapshot key → Markdown
//	                      / m   current.md, its version and phases, the
//	                            version of the last snapshot, the last stamp
//
// Log keys are "log/<stamp>-<id>" and snapshot keys "snapshots/<stamp>.md",
// where a stamp is a fixed-width UTC timestamp with nanoseconds
// (StampLayout). Stamps are handed out per board, strictly increasing even
// within one nanosecond of the clock, so keys are unique and sort by time as
// plain bytes; every listing is a cursor walk.
var bucketChangelog = []byte("changelog")

func init() {
	topBuckets = append(topBuckets, bucketChangelog)
}

var (
	clEntries   = []byte("e")
	clByNote    = []byte("n")
	clByAction  = []byte("a")
	clSnapshots = []byte("s")
	clMeta      = []byte("m")

	clMetaCurrent         = []byte("current.md")
	clMetaCurrentVersion  = []byte("current.version")
	clMetaCurrentPhases   = []byte("current.phases")
	clMetaSnapshotVersion = []byte("snapshot.version")
	clMetaStamp           = []byte("stamp")
)

// logKeyStamp returns the stamp of a log key written by AppendLog.
func logKeyStamp(key []byte) string {
	return string(key[len(persist.LogKeyPrefix) : len(persist.LogKeyPrefix)+len(persist.StampLayout)])
}

// entryMeta is the part of an entry record listings read.
type entryMeta struct {
	NoteID    string `json:"noteId"`
	Action    string `json:"action"`
	Timestamp string `json:"timestamp"`
}

// entryFormat is the first byte of an entry record, for later changes.
const entryFormat = 1

// encodeEntry makes an entry record: the format byte, the length of the
// metadata as a uvarint, the metadata as JSON, then the Markdown as is.
// Listings decode only the metadata, so a 100 KB note snapshot is never
// copied to list its entry.
func encodeEntry(m entryMeta, content []byte) ([]byte, error) {
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	v := make([]byte, 0, 1+binary.MaxVarintLen64+len(js)+len(content))
	v = append(v, entryFormat)
	v = binary.AppendUvarint(v, uint64(len(js)))
	v = append(v, js...)
	return append(v, content...), nil
}

// decodeEntry splits an entry record; content aliases v.
func decodeEntry(v []byte) (entryMeta, []byte, error) {
	var m entryMeta
	if len(v) < 2 || v[0] != entryFormat {
		return m, nil, fmt.Errorf("entry record of %d bytes has an unknown format", len(v))
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return m, nil, fmt.Errorf("entry record has a bad metadata length")
	}
	start := 1 + w
	if err := json.Unmarshal(v[start:start+int(n)], &m); err != nil {
		return m, nil, fmt.Errorf("decode entry metadata: %w", err)
	}
	return m, v[start+int(n):], nil
}

func noteIndexPrefix(noteID string) []byte {
	k := make([]byte, 2, 2+len(noteID)+len(persist.LogKeyPrefix)+len(persist.StampLayout)+1+persist.MaxKeyIDLen)
	binary.BigEndian.PutUint16(k, uint16(len(noteID)))
	return append(k, noteID...)
}

func actionIndexPrefix(action string) []byte {
	return append([]byte(action), 0)
}

// clBoard is one board's changelog buckets inside a transaction.
type clBoard struct {
	entries, byNote, byAction, snapshots, meta *bbolt.Bucket
}

// changelogBucket returns the board's changelog buckets, creating them when
// create is set; ok is false when they do not exist and create is not set.
// It answers ENOTFOUND for an unclaimed board.
func changelogBucket(tx *bbolt.Tx, boardID string, create bool) (clBoard, bool, error) {
	if tx.Bucket(bucketBoards).Get([]byte(boardID)) == nil {
		return clBoard{}, false, notFound("Board")
	}
	top := tx.Bucket(bucketChangelog)
	var b *bbolt.Bucket
	if create {
		var err error
		if b, err = top.CreateBucketIfNotExists([]byte(boardID)); err != nil {
			return clBoard{}, false, fmt.Errorf("create changelog bucket of board %s: %w", boardID, err)
		}
		for _, name := range [][]byte{clEntries, clByNote, clByAction, clSnapshots, clMeta} {
			if _, err := b.CreateBucketIfNotExists(name); err != nil {
				return clBoard{}, false, fmt.Errorf("create changelog %s bucket of board %s: %w", name, boardID, err)
			}
		}
	} else if b = top.Bucket([]byte(boardID)); b == nil {
		return clBoard{}, false, nil
	}
	return clBoard{
		entries:   b.Bucket(clEntries),
		byNote:    b.Bucket(clByNote),
		byAction:  b.Bucket(clByAction),
		snapshots: b.Bucket(clSnapshots),
		meta:      b.Bucket(clMeta),
	}, true, nil
}

// nextStamp hands out the board's next stamp: now, or one nanosecond after
// the last stamp when the clock has not moved past it (same nanosecond, a
// coarse clock, or a clock set back).
func (cb clBoard) nextStamp(now time.Time) (string, error) {
	t := now.UTC()
	if last, ok := persist.ParseStamp(string(cb.meta.Get(clMetaStamp))); ok && !t.After(last) {
		t = last.Add(time.Nanosecond)
	}
	s := persist.Stamp(t)
	return s, cb.meta.Put(clMetaStamp, []byte(s))
}

func clInt64(b *bbolt.Bucket, key []byte) (int64, bool) {
	v := b.Get(key)
	if len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// putCurrent stores cur as current.md unless the stored one shows a newer
// version (a slower writer must not roll it back).
func (cb clBoard) putCurrent(cur *persist.RenderedBoard) error {
	if v, ok := clInt64(cb.meta, clMetaCurrentVersion); ok && v > cur.Version {
		return nil
	}
	phases, err := json.Marshal(cur.Phases)
	if err != nil {
		return fmt.Errorf("encode phases: %w", err)
	}
	if err := cb.meta.Put(clMetaCurrent, cur.Markdown); err != nil {
		return err
	}
	if err := cb.meta.Put(clMetaCurrentVersion, be64(uint64(cur.Version))); err != nil {
		return err
	}
	return cb.meta.Put(clMetaCurrentPhases, phases)
}

// currentFresh reports whether current.md shows b as it is.
func (cb clBoard) currentFresh(b *board.Board) (bool, error) {
	v, ok := clInt64(cb.meta, clMetaCurrentVersion)
	if !ok || v != b.Version {
		return false, nil
	}
	phases, err := json.Marshal(b.Phases)
	if err != nil {
		return false, fmt.Errorf("encode phases: %w", err)
	}
	return bytes.Equal(phases, cb.meta.Get(clMetaCurrentPhases)), nil
}

// clWrap wraps a storage failure for the logs; domain errors pass as they are.
func clWrap(err error, format string, args ...any) error {
	if err == nil || board.ErrorCode(err) != board.EINTERNAL {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// AppendLog stores entries and refreshes current.md (see ChangelogStore).
// Concurrent appends share one commit through bbolt's Batch.
func (db *DB) AppendLog(ctx context.Context, boardID string, entries []persist.NewLogEntry, current *persist.RenderedBoard) ([]persist.LogEntry, error) {
	var out []persist.LogEntry
	err := db.batch(ctx, func(tx *bbolt.Tx) error {
		// Batch may run this more than once: start from a clean slate.
		var err error
		if out, err = appendLogTx(tx, boardID, db.now(), entries); err != nil {
			return err
		}
		cb, _, err := changelogBucket(tx, boardID, true)
		if err != nil {
			return err
		}
		if _, err := cb.pruneLog(db.limits.WithDefaults().ChangelogBytesPerBoard); err != nil {
			return fmt.Errorf("prune changelog: %w", err)
		}
		if current == nil {
			return nil
		}
		return cb.putCurrent(current)
	})
	if err != nil {
		return nil, clWrap(err, "append %d changelog entries to board %s", len(entries), boardID)
	}
	return out, nil
}

// appendLogTx stores entries in the board's changelog inside tx, stamped
// from now: AppendLog's writing of entries (keys, stamps, the note and
// action indexes), which a push shares when it logs what a merge
// overwrote. It returns the stored entries without content; ENOTFOUND for
// an unclaimed board.
func appendLogTx(tx *bbolt.Tx, boardID string, now time.Time, entries []persist.NewLogEntry) ([]persist.LogEntry, error) {
	out := make([]persist.LogEntry, 0, len(entries))
	cb, _, err := changelogBucket(tx, boardID, true)
	if err != nil {
		return nil, err
	}
	// Counted before the entries are written: a board without a count
	// yet is counted from the entries it had.
	var n int64
	for _, e := range entries {
		n += int64(len(e.Content))
	}
	if err := cb.addLogBytes(n); err != nil {
		return nil, fmt.Errorf("count changelog bytes: %w", err)
	}
	for _, e := range entries {
		stamp, err := cb.nextStamp(now)
		if err != nil {
			return nil, err
		}
		key := persist.LogKeyPrefix + stamp + "-" + persist.LogKeyID(e.NoteID)
		rec, err := encodeEntry(entryMeta{NoteID: e.NoteID, Action: e.Action, Timestamp: stamp}, e.Content)
		if err != nil {
			return nil, fmt.Errorf("encode entry %s: %w", key, err)
		}
		if err := cb.entries.Put([]byte(key), rec); err != nil {
			return nil, err
		}
		if e.NoteID != "" {
			if err := cb.byNote.Put(append(noteIndexPrefix(e.NoteID), key...), []byte(e.Action)); err != nil {
				return nil, err
			}
		}
		if err := cb.byAction.Put(append(actionIndexPrefix(e.Action), key...), nil); err != nil {
			return nil, err
		}
		out = append(out, persist.LogEntry{Key: key, NoteID: e.NoteID, Action: e.Action, Timestamp: stamp})
	}
	return out, nil
}

// clScanBack walks c backwards over the keys that start with prefix and sort
// strictly before upper, calling fn until it returns false.
func clScanBack(c *bbolt.Cursor, prefix, upper []byte, fn func(k, v []byte) (bool, error)) error {
	var k, v []byte
	if k, _ = c.Seek(upper); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		more, err := fn(k, v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// logKeyBound is the key that log keys recorded strictly before before
// sort below: past every log key when before is nil.
func logKeyBound(before *time.Time) string {
	switch {
	case before == nil, before.UTC().Year() > 9999:
		// Keys after an index prefix all start with "log/"; "log0" sorts
		// right after every one of them ('0' follows '/').
		return "log0"
	case before.UTC().Year() < 0:
		// Stamps have four-digit years: nothing is older.
		return persist.LogKeyPrefix
	}
	return persist.LogKeyPrefix + persist.Stamp(*before)
}

// ListLog answers q (see ChangelogStore). Each filter walks its own index,
// so a page costs about Limit reads whatever the log's size.
func (db *DB) ListLog(ctx context.Context, boardID string, q persist.LogQuery) ([]persist.LogEntry, error) {
	if q.Limit <= 0 {
		return nil, board.FieldErrorf("limit", "limit must be a positive integer.")
	}
	bound := logKeyBound(q.Before)
	out := []persist.LogEntry{}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok {
			return err
		}
		add := func(key []byte) (bool, error) {
			m, _, err := decodeEntry(cb.entries.Get(key))
			if err != nil {
				return false, fmt.Errorf("entry %s: %w", key, err)
			}
			out = append(out, persist.LogEntry{Key: string(key), NoteID: m.NoteID, Action: m.Action, Timestamp: m.Timestamp})
			return len(out) < q.Limit, nil
		}
		switch {
		case q.NoteID != "":
			prefix := noteIndexPrefix(q.NoteID)
			return clScanBack(cb.byNote.Cursor(), prefix, append(prefix, bound...), func(k, v []byte) (bool, error) {
				if q.Action != "" && string(v) != q.Action {
					return true, nil
				}
				key := k[len(prefix):]
				out = append(out, persist.LogEntry{Key: string(key), NoteID: q.NoteID, Action: string(v), Timestamp: logKeyStamp(key)})
				return len(out) < q.Limit, nil
			})
		case q.Action != "":
			prefix := actionIndexPrefix(q.Action)
			return clScanBack(cb.byAction.Cursor(), prefix, append(prefix, bound...), func(k, _ []byte) (bool, error) {
				return add(k[len(prefix):])
			})
		default:
			return clScanBack(cb.entries.Cursor(), []byte(persist.LogKeyPrefix), []byte(bound), func(k, _ []byte) (bool, error) {
				return add(k)
			})
		}
	})
	if err != nil {
		return nil, clWrap(err, "list changelog of board %s", boardID)
	}
	return out, nil
}

// readEntry copies the entry under key out of the transaction.
func readEntry(cb clBoard, key []byte) (*persist.LogEntry, error) {
	v := cb.entries.Get(key)
	if v == nil {
		return nil, notFound("Changelog entry")
	}
	m, content, err := decodeEntry(v)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", key, err)
	}
	return &persist.LogEntry{Key: string(key), NoteID: m.NoteID, Action: m.Action, Timestamp: m.Timestamp, Content: bytes.Clone(content)}, nil
}

// FindLogEntry returns one entry with its content (see ChangelogStore).
func (db *DB) FindLogEntry(ctx context.Context, boardID, key string) (*persist.LogEntry, error) {
	var e *persist.LogEntry
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil {
			return err
		} else if !ok {
			return notFound("Changelog entry")
		}
		e, err = readEntry(cb, []byte(key))
		return err
	})
	if err != nil {
		return nil, clWrap(err, "read changelog entry of board %s", boardID)
	}
	return e, nil
}

// LatestNoteEntry returns the newest entry about noteID (see ChangelogStore).
func (db *DB) LatestNoteEntry(ctx context.Context, boardID, noteID string) (*persist.LogEntry, error) {
	var e *persist.LogEntry
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil {
			return err
		} else if !ok {
			return notFound("Changelog entry")
		}
		prefix := noteIndexPrefix(noteID)
		if err := clScanBack(cb.byNote.Cursor(), prefix, append(prefix, "log0"...), func(k, _ []byte) (bool, error) {
			var err error
			e, err = readEntry(cb, k[len(prefix):])
			return false, err
		}); err != nil {
			return err
		}
		if e == nil {
			return notFound("Changelog entry")
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "read latest changelog entry of note %q on board %s", noteID, boardID)
	}
	return e, nil
}

// CurrentSnapshot returns current.md and whether it is fresh (see ChangelogStore).
func (db *DB) CurrentSnapshot(ctx context.Context, boardID string) ([]byte, bool, error) {
	var md []byte
	fresh := false
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok {
			return err
		}
		if v := cb.meta.Get(clMetaCurrent); v != nil {
			md = bytes.Clone(v)
			fresh, err = cb.currentFresh(b)
		}
		return err
	})
	if err != nil {
		return nil, false, clWrap(err, "read current snapshot of board %s", boardID)
	}
	return md, fresh, nil
}

// CurrentSnapshotFresh reports whether current.md shows the board as it is
// (see ChangelogStore).
func (db *DB) CurrentSnapshotFresh(ctx context.Context, boardID string) (bool, error) {
	fresh := false
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok || cb.meta.Get(clMetaCurrent) == nil {
			return err
		}
		fresh, err = cb.currentFresh(b)
		return err
	})
	if err != nil {
		return false, clWrap(err, "read current snapshot of board %s", boardID)
	}
	return fresh, nil
}

// PutSnapshot stores a point-in-time snapshot and prunes old ones (see
// ChangelogStore).
func (db *DB) PutSnapshot(ctx context.Context, boardID string, snap persist.RenderedBoard, keep int) (persist.SnapshotInfo, int, error) {
	var info persist.SnapshotInfo
	pruned := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		cb, _, err := changelogBucket(tx, boardID, true)
		if err != nil {
			return err
		}
		if k, v := cb.snapshots.Cursor().Last(); k != nil && bytes.Equal(v, snap.Markdown) {
			// The same board as the newest snapshot: no second copy.
			info = persist.SnapshotInfo{Key: string(k), Timestamp: persist.SnapshotKeyStamp(string(k)), Existing: true}
			return nil
		}
		stamp, err := cb.nextStamp(db.now())
		if err != nil {
			return err
		}
		info = persist.SnapshotInfo{Key: persist.SnapshotKeyPrefix + stamp + persist.SnapshotKeySuffix, Timestamp: stamp}
		if err := cb.snapshots.Put([]byte(info.Key), snap.Markdown); err != nil {
			return err
		}
		if err := cb.meta.Put(clMetaSnapshotVersion, be64(uint64(snap.Version))); err != nil {
			return err
		}
		if err := cb.putCurrent(&snap); err != nil {
			return err
		}
		if keep <= 0 {
			return nil
		}
		// Counted with a cursor: Bucket.Stats does not see this
		// transaction's own writes. There are about keep+1 keys.
		var all [][]byte
		c := cb.snapshots.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			all = append(all, bytes.Clone(k))
		}
		if len(all) <= keep {
			return nil
		}
		old := all[:len(all)-keep]
		for _, k := range old {
			if err := cb.snapshots.Delete(k); err != nil {
				return err
			}
		}
		pruned = len(old)
		return nil
	})
	if err != nil {
		return persist.SnapshotInfo{}, 0, clWrap(err, "store snapshot of board %s", boardID)
	}
	return info, pruned, nil
}

// ListSnapshots lists point-in-time snapshots, newest first (see ChangelogStore).
func (db *DB) ListSnapshots(ctx context.Context, boardID string) ([]persist.SnapshotInfo, error) {
	out := []persist.SnapshotInfo{}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok {
			return err
		}
		c := cb.snapshots.Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			stamp := strings.TrimSuffix(strings.TrimPrefix(string(k), persist.SnapshotKeyPrefix), persist.SnapshotKeySuffix)
			out = append(out, persist.SnapshotInfo{Key: string(k), Timestamp: stamp})
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "list snapshots of board %s", boardID)
	}
	return out, nil
}

// FindSnapshot returns a point-in-time snapshot (see ChangelogStore).
func (db *DB) FindSnapshot(ctx context.Context, boardID, key string) ([]byte, error) {
	var md []byte
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil {
			return err
		}
		if ok {
			md = bytes.Clone(cb.snapshots.Get([]byte(key)))
		}
		if md == nil {
			return notFound("Snapshot")
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "read snapshot of board %s", boardID)
	}
	return md, nil
}

// BoardsToSnapshot lists boards changed since their last snapshot (see
// ChangelogStore).
func (db *DB) BoardsToSnapshot(ctx context.Context) ([]string, error) {
	var ids []string
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		top := tx.Bucket(bucketChangelog)
		return tx.Bucket(bucketBoards).ForEach(func(k, _ []byte) error {
			b, err := getBoard(tx, string(k))
			if err != nil {
				return err
			}
			var last int64
			if cl := top.Bucket(k); cl != nil {
				last, _ = clInt64(cl.Bucket(clMeta), clMetaSnapshotVersion)
			}
			if b.Version != last {
				ids = append(ids, b.ID)
			}
			return nil
		})
	})
	if err != nil {
		return nil, clWrap(err, "list boards to snapshot")
	}
	return ids, nil
}
