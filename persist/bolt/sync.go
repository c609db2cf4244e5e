package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/internal/rowmerge"
)

// Layout of a board's rows: bucketBoardRows / <boardID> / one of these.
var (
	subNotes             = []byte("n")  // note ID → row
	subNoteVersions      = []byte("nv") // be64(version) ‖ note ID → nil
	subItems             = []byte("i")  // item ID → row
	subItemVersions      = []byte("iv") // be64(version) ‖ item ID → nil
	subFrames            = []byte("f")  // frame ID → row
	subFrameVersions     = []byte("fv") // be64(version) ‖ frame ID → nil
	subConnectors        = []byte("c")  // connector ID → row
	subConnectorVersions = []byte("cv") // be64(version) ‖ connector ID → nil
	subConnectorEnds     = []byte("ce") // be16(len(end ID)) ‖ end ID ‖ connector ID → nil, for live connectors
	subTombstones        = []byte("t")  // be64(deletedAt ns) ‖ kind ‖ ID → nil
	subKeys              = []byte("k")  // idempotency key → be64(version) ‖ be64(recorded ns)
	subKeyTimes          = []byte("kt") // be64(recorded ns) ‖ key → nil
	subMeta              = []byte("m")  // metaHorizon → be64(version)
	// Revisions: the states pushes superseded, the bases of merges.
	subRevisions     = []byte("r")  // kind ‖ be16(len(ID)) ‖ ID ‖ be64(version) → be64(superseded ns) ‖ state
	subRevisionTimes = []byte("rt") // be64(superseded ns) ‖ revision key → nil (PruneRevisions' index)

	metaHorizon = []byte("horizon")
)

// Row values start with a kind byte and the big-endian version that last
// wrote them; a live row then holds the JSON of the note or item, a
// tombstone the big-endian UnixNano of the deletion. Keeping the version
// outside the JSON lets writes and the tombstone sweep skip decoding.
const (
	rowLive      = 'L'
	rowTombstone = 'T'

	kindNote      = 'n'
	kindItem      = 'i'
	kindFrame     = 'f'
	kindConnector = 'c'
)

func be64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func versionKey(version int64, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(version))
	return append(k, id...)
}

// revPrefix starts the keys of every revision of one row. The ID's length
// comes first, so that no other ID's revisions share the prefix.
func revPrefix(kind byte, id string) []byte {
	k := make([]byte, 3, 3+len(id)+8)
	k[0] = kind
	binary.BigEndian.PutUint16(k[1:3], uint16(len(id)))
	return append(k, id...)
}

// revKey is the key of the row's revision at version: revisions of a row
// sort by version.
func revKey(kind byte, id string, version int64) []byte {
	return binary.BigEndian.AppendUint64(revPrefix(kind, id), uint64(version))
}

// revRowPrefix is the row part of a revision key (its prefix).
func revRowPrefix(key []byte) []byte { return key[:len(key)-8] }

// revTimeKey is a revision's entry in the sweep index: the time it was
// superseded (the first 8 bytes of its value), then its key.
func revTimeKey(key, val []byte) []byte {
	tk := make([]byte, 0, 8+len(key))
	return append(append(tk, val[:8]...), key...)
}

func tombKey(ns int64, kind byte, id string) []byte {
	k := make([]byte, 9, 9+len(id))
	binary.BigEndian.PutUint64(k, uint64(ns))
	k[8] = kind
	return append(k, id...)
}

// table is one kind of row (notes or items) of one board, with its version
// index and revisions, inside a write or read transaction. revs and
// revTimes are nil in a read of a board no push has written to since
// revisions came in.
type table struct {
	rows, byVersion, tombs *bbolt.Bucket
	revs, revTimes         *bbolt.Bucket
	kind                   byte
}

// rowsBucket returns the board's rows bucket, creating it (and its
// sub-buckets) when create is set; nil when it does not exist and create is
// not set.
func rowsBucket(tx *bbolt.Tx, boardID string, create bool) (*bbolt.Bucket, error) {
	top := tx.Bucket(bucketBoardRows)
	if !create {
		return top.Bucket([]byte(boardID)), nil
	}
	b, err := top.CreateBucketIfNotExists([]byte(boardID))
	if err != nil {
		return nil, fmt.Errorf("create rows bucket of board %s: %w", boardID, err)
	}
	for _, name := range [][]byte{subNotes, subNoteVersions, subItems, subItemVersions, subFrames, subFrameVersions, subConnectors, subConnectorVersions, subConnectorEnds, subTombstones, subKeys, subKeyTimes, subMeta, subRevisions, subRevisionTimes} {
		if _, err := b.CreateBucketIfNotExists(name); err != nil {
			return nil, fmt.Errorf("create %s bucket of board %s: %w", name, boardID, err)
		}
	}
	return b, nil
}

// revisionBuckets returns the board's revisions and their time index,
// nil when the board has none yet. A row's revisions only ever append
// (versions go up), and the index always appends (times go up), so a page
// is split full rather than half full (bbolt's default): the index takes
// about half the pages (docs/benchmarks.md). Revisions of a 1 KB note sit
// two to a page either way (bbolt leaves at least two keys in the second
// half of a split).
func revisionBuckets(rb *bbolt.Bucket) (revs, times *bbolt.Bucket) {
	revs, times = rb.Bucket(subRevisions), rb.Bucket(subRevisionTimes)
	if revs != nil && rb.Tx().Writable() {
		revs.FillPercent, times.FillPercent = 1, 1
	}
	return revs, times
}

func notesTable(rb *bbolt.Bucket) table {
	revs, times := revisionBuckets(rb)
	return table{rows: rb.Bucket(subNotes), byVersion: rb.Bucket(subNoteVersions), tombs: rb.Bucket(subTombstones),
		revs: revs, revTimes: times, kind: kindNote}
}

func itemsTable(rb *bbolt.Bucket) table {
	revs, times := revisionBuckets(rb)
	return table{rows: rb.Bucket(subItems), byVersion: rb.Bucket(subItemVersions), tombs: rb.Bucket(subTombstones),
		revs: revs, revTimes: times, kind: kindItem}
}

// framesTable and connectorsTable are the board's frames and connectors;
// their rows bucket is nil in a read of a board no push has written to
// since they came in (every table method reads such a table as empty).
func framesTable(rb *bbolt.Bucket) table {
	revs, times := revisionBuckets(rb)
	return table{rows: rb.Bucket(subFrames), byVersion: rb.Bucket(subFrameVersions), tombs: rb.Bucket(subTombstones),
		revs: revs, revTimes: times, kind: kindFrame}
}

func connectorsTable(rb *bbolt.Bucket) table {
	revs, times := revisionBuckets(rb)
	return table{rows: rb.Bucket(subConnectors), byVersion: rb.Bucket(subConnectorVersions), tombs: rb.Bucket(subTombstones),
		revs: revs, revTimes: times, kind: kindConnector}
}

// tableOf is the table of rows of kind.
func tableOf(rb *bbolt.Bucket, kind byte) table {
	switch kind {
	case kindItem:
		return itemsTable(rb)
	case kindFrame:
		return framesTable(rb)
	case kindConnector:
		return connectorsTable(rb)
	}
	return notesTable(rb)
}

// forget removes the index entries of the row currently stored under id
// (its version entry and, for a tombstone, its sweep entry). It reports
// whether a live row was there.
func (t table) forget(id string, old []byte) (wasLive bool, err error) {
	if len(old) < 9 {
		return false, fmt.Errorf("row %q is %d bytes, too short", id, len(old))
	}
	version := int64(binary.BigEndian.Uint64(old[1:9]))
	if err := t.byVersion.Delete(versionKey(version, id)); err != nil {
		return false, err
	}
	if old[0] == rowTombstone {
		if len(old) < 17 {
			return false, fmt.Errorf("tombstone %q is %d bytes, too short", id, len(old))
		}
		ns := int64(binary.BigEndian.Uint64(old[9:17]))
		return false, t.tombs.Delete(tombKey(ns, t.kind, id))
	}
	return true, nil
}

// supersede keeps old, the state stored under id that a push at version
// replaces, as a revision superseded now. A state the same push wrote (at
// version itself: a row upserted, then deleted) was never committed and is
// not kept.
func (t table) supersede(id string, old []byte, version int64, now time.Time) error {
	oldVersion := int64(binary.BigEndian.Uint64(old[1:9]))
	if oldVersion >= version {
		return nil
	}
	key := revKey(t.kind, id, oldVersion)
	val := make([]byte, 9, 9+len(old)-9)
	binary.BigEndian.PutUint64(val[:8], uint64(now.UnixNano()))
	val[8] = old[0]
	if old[0] == rowLive {
		val = append(val, old[9:]...)
	}
	if err := t.revs.Put(key, val); err != nil {
		return err
	}
	if err := t.revTimes.Put(revTimeKey(key, val), nil); err != nil {
		return err
	}
	// A sweep takes a revision it keeps only for the count (among the
	// row's newest) off its index, so as not to read it again every hour.
	// With one more revision the row's oldest may now be past the count:
	// it goes back on the index, and the next sweep looks at the row.
	prefix := revRowPrefix(key)
	k, v := t.revs.Cursor().Seek(prefix)
	if k != nil && bytes.HasPrefix(k, prefix) && !bytes.Equal(k, key) {
		if tk := revTimeKey(k, v); t.revTimes.Get(tk) == nil {
			return t.revTimes.Put(tk, nil)
		}
	}
	return nil
}

// revisionBelow returns the newest revision of id below version, nil when
// there is none. Its Data is valid until the transaction ends.
func (t table) revisionBelow(id string, version int64) *rowmerge.State {
	if t.revs == nil {
		return nil
	}
	prefix := revPrefix(t.kind, id)
	c := t.revs.Cursor()
	// The newest key below prefix‖version: the one before the first key at
	// or above it, or the last key when there is none.
	var k, v []byte
	if k0, _ := c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(version))); k0 == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) || len(v) < 9 {
		return nil
	}
	st := &rowmerge.State{Version: int64(binary.BigEndian.Uint64(k[len(prefix):]))}
	if v[8] == rowLive {
		st.Data = v[9:]
	}
	return st
}

// revisionAt returns the newest revision of id at or below version, nil
// when there is none: first the one at version itself, where clients'
// bases are (the row's version as they pulled it), with one lookup, then
// the search below it. Its Data is valid until the transaction ends.
func (t table) revisionAt(id string, version int64) *rowmerge.State {
	if t.revs != nil {
		if v := t.revs.Get(revKey(t.kind, id, version)); len(v) >= 9 {
			st := &rowmerge.State{Version: version}
			if v[8] == rowLive {
				st.Data = v[9:]
			}
			return st
		}
	}
	return t.revisionBelow(id, version+1)
}

// history returns what rowmerge needs for an upsert of id with
// baseVersion: the stored row (nil when there is none), its base and, for
// a tombstone, its last live state. Data is valid until the transaction
// ends.
func (t table) history(id string, baseVersion int64) (cur, base, lastLive *rowmerge.State) {
	if baseVersion < 1 || t.rows == nil {
		return nil, nil, nil
	}
	old := t.rows.Get([]byte(id))
	if len(old) < 9 {
		return nil, nil, nil
	}
	cur = &rowmerge.State{Version: int64(binary.BigEndian.Uint64(old[1:9]))}
	if old[0] == rowLive {
		cur.Data = old[9:]
	}
	if rowmerge.NeedsBase(baseVersion, cur) {
		base = t.revisionAt(id, baseVersion)
	}
	if rowmerge.NeedsLastLive(baseVersion, cur) {
		lastLive = t.revisionBelow(id, cur.Version)
	}
	return cur, base, lastLive
}

// dropRevisions forgets every revision of id (its tombstone was pruned:
// with no stored row, no push merges against them, and a row created
// later under the same ID must not find them).
func (t table) dropRevisions(id string) error {
	if t.revs == nil {
		return nil
	}
	prefix := revPrefix(t.kind, id)
	var keys, times [][]byte
	c := t.revs.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		keys = append(keys, bytes.Clone(k))
		times = append(times, revTimeKey(k, v))
	}
	for i := range keys {
		if err := t.revs.Delete(keys[i]); err != nil {
			return err
		}
		if err := t.revTimes.Delete(times[i]); err != nil {
			return err
		}
	}
	return nil
}

// put stores a live row (its JSON) at version, keeping the state it
// replaces as a revision superseded now.
func (t table) put(id string, version int64, js []byte, now time.Time) error {
	if old := t.rows.Get([]byte(id)); old != nil {
		if err := t.supersede(id, old, version, now); err != nil {
			return err
		}
		if _, err := t.forget(id, old); err != nil {
			return err
		}
	}
	v := make([]byte, 9, 9+len(js))
	v[0] = rowLive
	binary.BigEndian.PutUint64(v[1:9], uint64(version))
	v = append(v, js...)
	if err := t.rows.Put([]byte(id), v); err != nil {
		return err
	}
	return t.byVersion.Put(versionKey(version, id), nil)
}

// remove turns the live row id into a tombstone at version. It reports false
// (and writes nothing) when there is no live row: deleting an unknown or
// already deleted ID is a no-op.
func (t table) remove(id string, version int64, now time.Time) (bool, error) {
	old := t.rows.Get([]byte(id))
	if old == nil || old[0] != rowLive {
		return false, nil
	}
	if err := t.supersede(id, old, version, now); err != nil {
		return false, err
	}
	if _, err := t.forget(id, old); err != nil {
		return false, err
	}
	ns := now.UnixNano()
	v := make([]byte, 17)
	v[0] = rowTombstone
	binary.BigEndian.PutUint64(v[1:9], uint64(version))
	binary.BigEndian.PutUint64(v[9:17], uint64(ns))
	if err := t.rows.Put([]byte(id), v); err != nil {
		return false, err
	}
	if err := t.byVersion.Put(versionKey(version, id), nil); err != nil {
		return false, err
	}
	return true, t.tombs.Put(tombKey(ns, t.kind, id), nil)
}

// anyLive reports whether any of ids is a live row.
func (t table) anyLive(ids []string) bool {
	if t.rows == nil {
		return false
	}
	for _, id := range ids {
		if v := t.rows.Get([]byte(id)); v != nil && v[0] == rowLive {
			return true
		}
	}
	return false
}

// changedSince calls live for every live row written after since and dead
// for every ID deleted after since, in version order; a nil func skips its
// rows (a tombstone is known by its first byte, without decoding).
func (t table) changedSince(since int64, live func(js []byte) error, dead func(id string) error) error {
	if t.byVersion == nil {
		return nil
	}
	c := t.byVersion.Cursor()
	for k, _ := c.Seek(be64(uint64(since) + 1)); k != nil; k, _ = c.Next() {
		id := k[8:]
		v := t.rows.Get(id)
		if v == nil {
			return fmt.Errorf("version index names missing row %q", id)
		}
		var err error
		switch {
		case v[0] == rowTombstone && dead != nil:
			err = dead(string(id))
		case v[0] != rowTombstone && live != nil:
			err = live(v[9:])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// eachLive calls fn with the JSON of every live row, in ID order.
func (t table) eachLive(fn func(js []byte) error) error {
	if t.rows == nil {
		return nil
	}
	return t.rows.ForEach(func(_, v []byte) error {
		if v[0] != rowLive {
			return nil
		}
		return fn(v[9:])
	})
}

// ApplyPush applies one push to a claimed board and returns the new board
// version; replayed is true when idemKey was already applied to this board,
// in which case the original version is returned and nothing is written.
// A push that changes nothing (empty, or deleting only unknown or already
// deleted IDs) writes no row and returns the current version. Errors:
// EINVALID (the push or the key), ENOTFOUND (unclaimed board), EINTERNAL.
func (db *DB) ApplyPush(ctx context.Context, boardID string, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	res, err := db.ApplyPushes(ctx, boardID, []persist.PushInput{{Push: p, IdempotencyKey: idemKey}})
	if err != nil {
		return 0, false, err
	}
	return res[0].Version, res[0].Replayed, res[0].Err
}

// ApplyPushes applies pushes to one board, in order, in one write
// transaction shared (through bbolt's Batch) with writers to other boards,
// so that concurrent pushes share one fsync. Each push that changes
// something and is not a replay bumps the board version by one and stamps
// every row it writes with that version. A push that changes nothing
// (empty, or deleting only IDs that are not live) writes nothing but its
// idempotency key and answers the current version without Changes. Within
// a push, upserts are applied before deletions: a note both upserted and
// deleted ends deleted; an upsert of a deleted note brings it back. A row
// with a baseVersion is merged into what was committed since (rowmerge);
// every state a push overwrites or deletes is kept as a revision, and what
// a merge overwrote in a note is logged, all in the same transaction. A
// push that fails validation gets its own EINVALID entry and writes
// nothing. See SyncStore for the errors.
func (db *DB) ApplyPushes(ctx context.Context, boardID string, pushes []persist.PushInput) ([]persist.Applied, error) {
	out, valid := persist.ValidatePushes(pushes)
	err := db.batch(ctx, func(tx *bbolt.Tx) error {
		// Batch may run this function more than once (when another writer in
		// the same batch fails), so it starts from a clean slate each time.
		for i := range out {
			if valid[i] {
				out[i] = persist.Applied{}
			}
		}
		w, err := db.startBoardWrite(tx, boardID)
		if err != nil {
			return err
		}
		for i, in := range pushes {
			if !valid[i] {
				continue
			}
			if out[i], err = db.applyInBatch(w, in); err != nil {
				return err
			}
		}
		return w.finish()
	})
	if err != nil {
		if board.ErrorCode(err) != board.EINTERNAL {
			return nil, err
		}
		return nil, fmt.Errorf("apply pushes to board %s: %w", boardID, err)
	}
	return out, nil
}

// boardWrite is one board inside the write transaction of ApplyPushes:
// its header and row counts as the pushes so far left them, stored once
// at the end if any push changed something.
type boardWrite struct {
	tx     *bbolt.Tx
	rb     *bbolt.Bucket
	b      *board.Board
	counts rowCounts
	now    time.Time
	dirty  bool
}

// startBoardWrite reads the board and its row counts for a batch of pushes.
func (db *DB) startBoardWrite(tx *bbolt.Tx, boardID string) (*boardWrite, error) {
	b, err := getBoard(tx, boardID)
	if err != nil {
		return nil, err
	}
	rb, err := rowsBucket(tx, boardID, true)
	if err != nil {
		return nil, err
	}
	now := db.now()
	counts, err := readCounts(rb)
	if err != nil {
		return nil, err
	}
	return &boardWrite{tx: tx, rb: rb, b: b, counts: counts, now: now}, nil
}

// finish stores the board and its row counts when a push changed them.
func (w *boardWrite) finish() error {
	if !w.dirty {
		return nil
	}
	if err := writeCounts(w.rb, w.counts); err != nil {
		return err
	}
	return putBoard(w.tx, w.b)
}

// applyInBatch applies one valid push of a batch: a replay answers the
// version its key recorded, a push that changes nothing keeps the version,
// one past the row limits is refused whole (its answer, not an error), and
// any other is written at the next version. An error aborts the batch.
func (db *DB) applyInBatch(w *boardWrite, in persist.PushInput) (persist.Applied, error) {
	if in.IdempotencyKey != "" {
		if v := w.rb.Bucket(subKeys).Get([]byte(in.IdempotencyKey)); v != nil {
			return persist.Applied{Version: int64(binary.BigEndian.Uint64(v[:8])), Replayed: true}, nil
		}
	}
	timer, err := persist.SettleTimer(w.b, in.Push, w.now)
	if err != nil {
		// Refused whole, like an invalid push: not even its key.
		return persist.Applied{Err: err}, nil
	}
	vote, err := persist.SettleVote(w.b, in.Push, w.now, boltVotes{w.rb})
	if err != nil {
		if board.ErrorCode(err) == board.EINTERNAL {
			return persist.Applied{}, fmt.Errorf("apply push to board %s: %w", w.b.ID, err)
		}
		return persist.Applied{Err: err}, nil // refused whole, as a timer action is
	}
	if !timer.Set && !vote.Set && changesNothing(w.rb, in.Push) {
		// Empty, or only deletions of IDs that are not live: the version
		// and updatedAt stay, nobody is told. The key is kept, so that a
		// retry answers the same version and stays a no-op even if one of
		// those IDs was created in between.
		if err := recordKey(w.rb, in.IdempotencyKey, w.b.Version, w.now); err != nil {
			return persist.Applied{}, err
		}
		return persist.Applied{Version: w.b.Version}, nil
	}
	tally := &rowmerge.Tally{}
	st, refused, err := settleStructure(w.rb, in.Push, w.now, tally)
	if err != nil {
		return persist.Applied{}, fmt.Errorf("apply push to board %s: %w", w.b.ID, err)
	}
	if refused == nil {
		w.counts, refused = db.checkRowLimits(w.rb, w.counts, in.Push, st)
	}
	if refused != nil {
		// Refused whole, like an invalid push: not even its key.
		return persist.Applied{Err: refused}, nil
	}
	if timer.Set {
		w.b.Timer = timer.Timer
	}
	if err := applyVote(w.tx, w.rb, w.b, vote, w.now); err != nil {
		return persist.Applied{}, fmt.Errorf("apply push to board %s: %w", w.b.ID, err)
	}
	ch, err := db.applyOne(w.tx, w.rb, w.b, in.Push, w.now, tally, &st)
	if err != nil {
		return persist.Applied{}, fmt.Errorf("apply push to board %s: %w", w.b.ID, err)
	}
	if err := recordKey(w.rb, in.IdempotencyKey, w.b.Version, w.now); err != nil {
		return persist.Applied{}, err
	}
	w.dirty = true
	return persist.Applied{Version: w.b.Version, Changes: ch, Merged: tally.Merged, Fallbacks: tally.Fallbacks, Events: tally.Events}, nil
}

// changesNothing reports whether applying p would change nothing: it
// neither names the board nor upserts, and every ID it deletes is unknown
// or already deleted. Deletions are checked against rb as the transaction
// sees it, earlier pushes of the same batch included.
func changesNothing(rb *bbolt.Bucket, p *board.Push) bool {
	if p.Board != nil || len(p.Notes.Upserted) > 0 || len(p.TrackerItems.Upserted) > 0 ||
		len(p.Frames.Upserted) > 0 || len(p.Connectors.Upserted) > 0 {
		return false
	}
	return !notesTable(rb).anyLive(p.Notes.Deleted) && !itemsTable(rb).anyLive(p.TrackerItems.Deleted) &&
		!framesTable(rb).anyLive(p.Frames.Deleted) && !connectorsTable(rb).anyLive(p.Connectors.Deleted)
}

// structure is what settleStructure decided for a push's connectors.
type structure struct {
	// connectors are the push's connectors (last copies) as they will be
	// written, merged, without their version.
	connectors []board.Connector
	// deleted are the connectors the push deletes: its own list, then
	// those whose end goes (rowmerge.Cascade).
	deleted []string
}

// settleStructure merges the push's connectors and decides their ends
// (rowmerge.CheckEnds, Cascade) before anything is written: refused is
// the push's answer when a connector names an end the board does not
// have.
func settleStructure(rb *bbolt.Bucket, p *board.Push, now time.Time, tally *rowmerge.Tally) (st structure, refused, err error) {
	conns := connectorsTable(rb)
	stamp := now.Format(time.RFC3339Nano)
	mine := rowmerge.LastCopies(p.Connectors.Upserted, func(c *board.Connector) string { return c.ID })
	st.connectors = make([]board.Connector, len(mine))
	for i, c := range mine {
		if c.UpdatedAt == "" {
			c.UpdatedAt = stamp
		}
		cur, base, lastLive := conns.history(c.ID, c.BaseVersion)
		res, err := rowmerge.Resolve(c, c.BaseVersion, cur, base, lastLive, board.MergeConnector)
		if err != nil {
			return st, nil, fmt.Errorf("merge connector %q: %w", c.ID, err)
		}
		rowmerge.AddRow(tally, persist.MergeTableConnector, c.ID, res)
		st.connectors[i] = res.Row
	}
	notes, frames := notesTable(rb), framesTable(rb)
	dangling, refused := rowmerge.CheckEnds(p, mine, st.connectors, func(id string) bool {
		return notes.anyLive([]string{id}) || frames.anyLive([]string{id})
	})
	if refused != nil {
		return st, refused, nil
	}
	var stored []rowmerge.Ends
	ends := rb.Bucket(subConnectorEnds)
	for id := range rowmerge.Gone(p) {
		prefix := endPrefix(id)
		c := ends.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			stored = append(stored, rowmerge.Ends{ID: string(k[len(prefix):]), From: id})
		}
	}
	st.deleted = rowmerge.Cascade(p, dangling, st.connectors, stored)
	return st, nil, nil
}

// recordKey remembers that the idempotency key key (none when "") produced
// version, for replays until the sweep forgets it.
func recordKey(rb *bbolt.Bucket, key string, version int64, now time.Time) error {
	if key == "" {
		return nil
	}
	val := make([]byte, 16)
	binary.BigEndian.PutUint64(val[:8], uint64(version))
	binary.BigEndian.PutUint64(val[8:], uint64(now.UnixNano()))
	if err := rb.Bucket(subKeys).Put([]byte(key), val); err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	tk := append(be64(uint64(now.UnixNano())), key...)
	if err := rb.Bucket(subKeyTimes).Put(tk, nil); err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

// applyOne writes one non-empty push at b.Version+1, moving b (not yet
// stored) to that version, and returns what it changed and what its merges
// did. Rows with a baseVersion are merged (rowmerge); what a merge
// overwrote in a note goes to the board's changelog in this transaction.
func (db *DB) applyOne(tx *bbolt.Tx, rb *bbolt.Bucket, b *board.Board, p *board.Push, now time.Time, tally *rowmerge.Tally, st *structure) (*board.Changes, error) {
	b.Version++
	v := b.Version
	stamp := now.Format(time.RFC3339Nano)
	if p.Board != nil {
		b.Name = p.Board.Name
	}
	if !p.HeaderOnly() { // the timer and the vote are not the board's content
		b.UpdatedAt = stamp
	}
	if p.Board != nil && p.Board.UpdatedAt != "" {
		b.UpdatedAt = p.Board.UpdatedAt
	}
	ch := &board.Changes{
		Board:         b.Header(),
		Notes:         rowmerge.LastCopies(p.Notes.Upserted, func(n *board.Note) string { return n.ID }),
		TrackerItems:  rowmerge.LastCopies(p.TrackerItems.Upserted, func(it *board.TrackerItem) string { return it.ID }),
		ServerVersion: v,
	}
	notes, items := notesTable(rb), itemsTable(rb)
	var err error
	if err = db.upsertNotes(notes, ch.Notes, v, stamp, now, tally); err != nil {
		return nil, err
	}
	if ch.DeletedNoteIDs, err = removeRows(notes, "note", p.Notes.Deleted, v, now); err != nil {
		return nil, err
	}
	if err = upsertItems(items, ch.TrackerItems, v, stamp, now, tally); err != nil {
		return nil, err
	}
	if ch.DeletedTrackerItemIDs, err = removeRows(items, "item", p.TrackerItems.Deleted, v, now); err != nil {
		return nil, err
	}
	if err := applyStructure(rb, ch, p, v, now, tally, st); err != nil {
		return nil, err
	}
	if len(tally.Entries) > 0 {
		logged, err := appendLogTx(tx, b.ID, now, tally.Entries)
		if err != nil {
			return nil, fmt.Errorf("log what a merge overwrote: %w", err)
		}
		if err := tally.Logged(logged); err != nil {
			return nil, err
		}
	}

	// Rows upserted and then deleted in the same push end deleted: they
	// leave the change's upserted lists.
	if len(ch.DeletedNoteIDs) > 0 && len(ch.Notes) > 0 {
		ch.Notes = rowmerge.DropDeleted(ch.Notes, ch.DeletedNoteIDs, func(n *board.Note) string { return n.ID })
	}
	if len(ch.DeletedTrackerItemIDs) > 0 && len(ch.TrackerItems) > 0 {
		ch.TrackerItems = rowmerge.DropDeleted(ch.TrackerItems, ch.DeletedTrackerItemIDs, func(it *board.TrackerItem) string { return it.ID })
	}
	return ch, nil
}

// applyStructure writes a push's frames and connectors at version v after
// its notes and items: frames (merged) first, then the connectors
// settleStructure merged, then the deletions of frames and of connectors
// (the push's own and those whose end went). ch gets what changed.
func applyStructure(rb *bbolt.Bucket, ch *board.Changes, p *board.Push, v int64, now time.Time, tally *rowmerge.Tally, st *structure) error {
	if !p.HasStructure() && len(st.deleted) == 0 {
		return nil
	}
	stamp := now.Format(time.RFC3339Nano)
	frames, conns := framesTable(rb), connectorsTable(rb)
	ch.Frames = rowmerge.LastCopies(p.Frames.Upserted, func(f *board.Frame) string { return f.ID })
	for i := range ch.Frames {
		mine := ch.Frames[i]
		if mine.UpdatedAt == "" {
			mine.UpdatedAt = stamp
		}
		cur, base, lastLive := frames.history(mine.ID, mine.BaseVersion)
		res, err := rowmerge.Resolve(mine, mine.BaseVersion, cur, base, lastLive, board.MergeFrame)
		if err != nil {
			return fmt.Errorf("merge frame %q: %w", mine.ID, err)
		}
		rowmerge.AddRow(tally, persist.MergeTableFrame, mine.ID, res)
		f := res.Row
		f.Version, f.DeletedAt, f.BaseVersion = v, nil, 0
		if err := putRow(frames, f.ID, v, &f, now); err != nil {
			return err
		}
		ch.Frames[i] = f
	}
	ch.Connectors = st.connectors
	ends := rb.Bucket(subConnectorEnds)
	for i := range ch.Connectors {
		c := &ch.Connectors[i]
		c.Version, c.DeletedAt, c.BaseVersion = v, nil, 0
		if err := unindexEnds(conns, ends, c.ID); err != nil {
			return err
		}
		if err := putRow(conns, c.ID, v, c, now); err != nil {
			return err
		}
		for _, end := range []string{c.From, c.To} {
			if err := ends.Put(append(endPrefix(end), c.ID...), nil); err != nil {
				return fmt.Errorf("index connector %q: %w", c.ID, err)
			}
		}
	}
	var err error
	if ch.DeletedFrameIDs, err = removeRows(frames, "frame", p.Frames.Deleted, v, now); err != nil {
		return err
	}
	for _, id := range st.deleted {
		if err := unindexEnds(conns, ends, id); err != nil {
			return err
		}
	}
	if ch.DeletedConnectorIDs, err = removeRows(conns, "connector", st.deleted, v, now); err != nil {
		return err
	}
	if len(ch.DeletedFrameIDs) > 0 && len(ch.Frames) > 0 {
		ch.Frames = rowmerge.DropDeleted(ch.Frames, ch.DeletedFrameIDs, func(f *board.Frame) string { return f.ID })
	}
	if len(ch.DeletedConnectorIDs) > 0 && len(ch.Connectors) > 0 {
		ch.Connectors = rowmerge.DropDeleted(ch.Connectors, ch.DeletedConnectorIDs, func(c *board.Connector) string { return c.ID })
	}
	ch.Frames, ch.DeletedFrameIDs = rowmerge.NilIfEmpty(ch.Frames), rowmerge.NilIfEmpty(ch.DeletedFrameIDs)
	ch.Connectors, ch.DeletedConnectorIDs = rowmerge.NilIfEmpty(ch.Connectors), rowmerge.NilIfEmpty(ch.DeletedConnectorIDs)
	return nil
}

// endPrefix starts the keys of subConnectorEnds of the connectors ending
// on id: its length first, so that no other ID's keys share the prefix.
func endPrefix(id string) []byte {
	k := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(id)+16), uint16(len(id)))
	return append(k, id...)
}

// unindexEnds takes the live connector id, if it is stored, off the
// index of connector ends (before it is rewritten or deleted).
func unindexEnds(conns table, ends *bbolt.Bucket, id string) error {
	old := conns.rows.Get([]byte(id))
	if len(old) < 9 || old[0] != rowLive {
		return nil
	}
	e, err := rowmerge.EndsOf(old[9:])
	if err != nil {
		return fmt.Errorf("connector %q: %w", id, err)
	}
	for _, end := range []string{e.From, e.To} {
		if err := ends.Delete(append(endPrefix(end), id...)); err != nil {
			return fmt.Errorf("unindex connector %q: %w", id, err)
		}
	}
	return nil
}

// putRow encodes row and writes it live at version v.
func putRow[T any](t table, id string, v int64, row *T, now time.Time) error {
	js, err := rowmerge.Encode(row)
	if err != nil {
		return fmt.Errorf("encode row %q: %w", id, err)
	}
	if err := t.put(id, v, js, now); err != nil {
		return fmt.Errorf("write row %q: %w", id, err)
	}
	return nil
}

// upsertNotes merges each pushed note (the last copy of each ID) into what
// is stored, writes the result at version v and puts it back in upserted
// as the change will carry it; the tally collects what the merges did.
func (db *DB) upsertNotes(notes table, upserted []board.Note, v int64, stamp string, now time.Time, tally *rowmerge.Tally) error {
	for i := range upserted {
		mine := upserted[i]
		if mine.UpdatedAt == "" {
			mine.UpdatedAt = stamp
		}
		cur, base, lastLive := notes.history(mine.ID, mine.BaseVersion)
		res, err := rowmerge.Resolve(mine, mine.BaseVersion, cur, base, lastLive, board.MergeNote)
		if err != nil {
			return fmt.Errorf("merge note %q: %w", mine.ID, err)
		}
		if err := tally.AddNote(res, db.renderNote); err != nil {
			return fmt.Errorf("merge note %q: %w", mine.ID, err)
		}
		n := res.Row
		n.Version, n.DeletedAt, n.BaseVersion = v, nil, 0
		js, err := rowmerge.Encode(&n)
		if err != nil {
			return fmt.Errorf("encode note %q: %w", n.ID, err)
		}
		if err := notes.put(n.ID, v, js, now); err != nil {
			return fmt.Errorf("write note %q: %w", n.ID, err)
		}
		upserted[i] = n
	}
	return nil
}

// upsertItems is upsertNotes for tracker items.
func upsertItems(items table, upserted []board.TrackerItem, v int64, stamp string, now time.Time, tally *rowmerge.Tally) error {
	for i := range upserted {
		mine := upserted[i]
		if mine.UpdatedAt == "" {
			mine.UpdatedAt = stamp
		}
		cur, base, lastLive := items.history(mine.ID, mine.BaseVersion)
		res, err := rowmerge.Resolve(mine, mine.BaseVersion, cur, base, lastLive, board.MergeItem)
		if err != nil {
			return fmt.Errorf("merge item %q: %w", mine.ID, err)
		}
		tally.AddItem(res)
		it := res.Row
		it.Version, it.DeletedAt, it.BaseVersion = v, nil, 0
		js, err := rowmerge.Encode(&it)
		if err != nil {
			return fmt.Errorf("encode item %q: %w", it.ID, err)
		}
		if err := items.put(it.ID, v, js, now); err != nil {
			return fmt.Errorf("write item %q: %w", it.ID, err)
		}
		upserted[i] = it
	}
	return nil
}

// removeRows deletes the rows of t with the given IDs at version v and
// returns those that were live (never nil: the change lists them as []).
// what names the kind of row for errors.
func removeRows(t table, what string, ids []string, v int64, now time.Time) ([]string, error) {
	removed := []string{}
	for _, id := range ids {
		ok, err := t.remove(id, v, now)
		if err != nil {
			return nil, fmt.Errorf("delete %s %q: %w", what, id, err)
		}
		if ok {
			removed = append(removed, id)
		}
	}
	return removed, nil
}

// horizon is the highest version whose tombstones may have been pruned: a
// pull from below it cannot be answered with deletions.
func horizon(rb *bbolt.Bucket) int64 {
	if rb == nil {
		return 0
	}
	m := rb.Bucket(subMeta)
	if m == nil {
		return 0
	}
	if v := m.Get(metaHorizon); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// ChangesSince answers a pull (see SyncStore). since equal to the board's
// version answers the header with empty lists; the caller decides to send
// {serverVersion} alone.
func (db *DB) ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error) {
	return persist.CollectChanges(ctx, db, boardID, since)
}

// ScanChangesSince streams a pull's answer from one read transaction (see
// SyncStore). The transaction stays open while fn runs, which may be as
// long as a client takes to read the answer: the server's WriteTimeout
// bounds it, and the large-read gate how many run at once
// (docs/sync.md, "Large reads").
func (db *DB) ScanChangesSince(ctx context.Context, boardID string, since int64, fn func(p *persist.ChangePart) error) error {
	if since < 0 {
		return board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	var fnErr error
	call := func(p *persist.ChangePart) error {
		if err := fn(p); err != nil {
			fnErr = err
			return err
		}
		return nil
	}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		part := persist.ChangePart{Kind: persist.PartHeader, Header: persist.ChangesHeader{Board: b.Header(), ServerVersion: b.Version, Phases: b.Phases}}
		rb, _ := rowsBucket(tx, boardID, false)
		// A client ahead of the board (its copy came from data that was
		// since lost or restored) or behind the pruned tombstones cannot be
		// patched: it gets everything and replaces its copy. That holds for
		// a board that has no rows yet too: its full state is empty.
		full := since == 0 || since > b.Version || since < horizon(rb)
		part.Header.Reset = full && since != 0 && since != b.Version
		if err := call(&part); err != nil || since == b.Version || rb == nil {
			return err
		}
		return scanRows(rb, since, full, call)
	})
	if err != nil {
		if fnErr != nil || board.ErrorCode(err) != board.EINTERNAL {
			return err
		}
		return fmt.Errorf("changes of board %s since %d: %w", boardID, since, err)
	}
	return nil
}

// scanRows gives fn the rows of a pull answer in the answer's order: the
// live ones (all of them when full, else those written after since), then
// the IDs deleted after since, for notes then items. Deleted IDs take a
// second pass over the version index, which reads keys and a kind byte
// only, rather than a list held meanwhile.
func scanRows(rb *bbolt.Bucket, since int64, full bool, fn func(p *persist.ChangePart) error) error {
	var part persist.ChangePart
	for _, t := range []struct {
		table              table
		liveKind, deadKind persist.PartKind
	}{
		{notesTable(rb), persist.PartNote, persist.PartDeletedNote},
		{itemsTable(rb), persist.PartItem, persist.PartDeletedItem},
		{framesTable(rb), persist.PartFrame, persist.PartDeletedFrame},
		{connectorsTable(rb), persist.PartConnector, persist.PartDeletedConnector},
	} {
		// A live row goes as the JSON stored (persist.ChangePart.Raw): the
		// reader decodes it only if it needs the value.
		live := func(js []byte) error {
			part = persist.ChangePart{Kind: t.liveKind, Raw: js}
			return fn(&part)
		}
		if full {
			if err := t.table.eachLive(live); err != nil {
				return err
			}
			continue
		}
		if err := t.table.changedSince(since, live, nil); err != nil {
			return err
		}
		if err := t.table.changedSince(since, nil, func(id string) error {
			part = persist.ChangePart{Kind: t.deadKind, ID: id}
			return fn(&part)
		}); err != nil {
			return err
		}
	}
	return nil
}

// CurrentVersion returns the board's version (see SyncStore).
func (db *DB) CurrentVersion(ctx context.Context, boardID string) (int64, error) {
	b, err := db.FindBoard(ctx, boardID)
	if err != nil {
		return 0, err
	}
	return b.Version, nil
}

// BoardState returns every live note and item of the board with its header
// and phases, at one version (see SyncStore).
func (db *DB) BoardState(ctx context.Context, boardID string) (*board.State, error) {
	var st *board.State
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		st = &board.State{Board: b.Header(), Phases: b.Phases, Notes: []board.Note{}, TrackerItems: []board.TrackerItem{}}
		rb, _ := rowsBucket(tx, boardID, false)
		if rb == nil {
			return nil
		}
		if err := notesTable(rb).eachLive(func(js []byte) error {
			var n board.Note
			if err := json.Unmarshal(js, &n); err != nil {
				return fmt.Errorf("decode note: %w", err)
			}
			st.Notes = append(st.Notes, n)
			return nil
		}); err != nil {
			return err
		}
		if err := itemsTable(rb).eachLive(func(js []byte) error {
			var it board.TrackerItem
			if err := json.Unmarshal(js, &it); err != nil {
				return fmt.Errorf("decode item: %w", err)
			}
			st.TrackerItems = append(st.TrackerItems, it)
			return nil
		}); err != nil {
			return err
		}
		if err := framesTable(rb).eachLive(func(js []byte) error { return appendRow(&st.Frames, js) }); err != nil {
			return err
		}
		return connectorsTable(rb).eachLive(func(js []byte) error { return appendRow(&st.Connectors, js) })
	})
	if err != nil {
		if board.ErrorCode(err) != board.EINTERNAL {
			return nil, err
		}
		return nil, fmt.Errorf("state of board %s: %w", boardID, err)
	}
	return st, nil
}

// appendRow decodes a stored row's JSON onto list.
func appendRow[T any](list *[]T, js []byte) error {
	var v T
	if err := json.Unmarshal(js, &v); err != nil {
		return fmt.Errorf("decode row: %w", err)
	}
	*list = append(*list, v)
	return nil
}

// boardsDue lists the boards whose sub-bucket index (keyed by a big-endian
// time first) holds an entry before end: the only ones a sweep must write.
func (db *DB) boardsDue(ctx context.Context, index, end []byte) ([]string, error) {
	var ids []string
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketBoardRows).ForEach(func(k, v []byte) error {
			if v != nil { // not a nested bucket
				return nil
			}
			b := tx.Bucket(bucketBoardRows).Bucket(k).Bucket(index)
			if b == nil {
				return nil
			}
			if first, _ := b.Cursor().First(); first != nil && bytes.Compare(first[:8], end) < 0 {
				ids = append(ids, string(k))
			}
			return nil
		})
	})
	return ids, err
}

// sweepBoards runs fn on the rows bucket of every board with something
// before end in index: first a read to find them (a sweep with nothing to
// do writes nothing), then one short write transaction per board so that a
// sweep never holds the writer for long.
func (db *DB) sweepBoards(ctx context.Context, index, end []byte, fn func(rb *bbolt.Bucket) (int, error)) (int, error) {
	ids, err := db.boardsDue(ctx, index, end)
	if err != nil {
		return 0, fmt.Errorf("find boards to sweep: %w", err)
	}
	total := 0
	for _, id := range ids {
		n := 0
		err := db.update(ctx, func(tx *bbolt.Tx) error {
			n = 0
			rb, err := rowsBucket(tx, id, false)
			if err != nil || rb == nil {
				return err
			}
			n, err = fn(rb)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sweep board %s: %w", id, err)
		}
		total += n
	}
	return total, nil
}

// PruneTombstones forgets the deletions recorded before cutoff. Each board's
// horizon rises to the highest version it forgot; a later pull from below
// the horizon gets the full state with reset set (see SyncStore). A row
// whose tombstone goes loses its revisions with it: with no stored row a
// push is written as sent, and a row created later under the same ID must
// not merge against another row's past.
func (db *DB) PruneTombstones(ctx context.Context, cutoff time.Time) (int, error) {
	end := be64(uint64(cutoff.UnixNano()))
	return db.sweepBoards(ctx, subTombstones, end, func(rb *bbolt.Bucket) (int, error) {
		hz := horizon(rb)
		pruned := 0
		var dead [][]byte
		c := rb.Bucket(subTombstones).Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
			dead = append(dead, append([]byte(nil), k...))
		}
		for _, k := range dead {
			t := tableOf(rb, k[8])
			id := string(k[9:])
			row := t.rows.Get([]byte(id))
			if len(row) < 17 || row[0] != rowTombstone {
				return pruned, fmt.Errorf("tombstone index names %q, which is not a tombstone", id)
			}
			if v := int64(binary.BigEndian.Uint64(row[1:9])); v > hz {
				hz = v
			}
			if _, err := t.forget(id, row); err != nil {
				return pruned, err
			}
			if err := t.rows.Delete([]byte(id)); err != nil {
				return pruned, err
			}
			if err := t.dropRevisions(id); err != nil {
				return pruned, err
			}
			pruned++
		}
		if pruned == 0 {
			return 0, nil
		}
		return pruned, rb.Bucket(subMeta).Put(metaHorizon, be64(uint64(hz)))
	})
}

// SweepIdempotencyKeys forgets the idempotency keys recorded before cutoff;
// a push that repeats a forgotten key is applied again.
func (db *DB) SweepIdempotencyKeys(ctx context.Context, cutoff time.Time) (int, error) {
	end := be64(uint64(cutoff.UnixNano()))
	return db.sweepBoards(ctx, subKeyTimes, end, func(rb *bbolt.Bucket) (int, error) {
		var old [][]byte
		c := rb.Bucket(subKeyTimes).Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
			old = append(old, append([]byte(nil), k...))
		}
		for _, k := range old {
			if err := rb.Bucket(subKeys).Delete(k[8:]); err != nil {
				return 0, err
			}
			if err := rb.Bucket(subKeyTimes).Delete(k); err != nil {
				return 0, err
			}
		}
		return len(old), nil
	})
}

// PruneRevisions forgets the revisions superseded before cutoff, except the
// newest keep of each row (see SyncStore). It reads the time index up to
// cutoff, and walks the revisions of each row found there newest first.
// A revision kept for the count leaves the index, so that the next sweeps
// do not read it again; it comes back on it when its row gets a newer
// revision (table.supersede), which is the only way it can pass the count.
func (db *DB) PruneRevisions(ctx context.Context, cutoff time.Time, keep int) (int, error) {
	keep = max(keep, 0)
	end := be64(uint64(cutoff.UnixNano()))
	return db.sweepBoards(ctx, subRevisionTimes, end, func(rb *bbolt.Bucket) (int, error) {
		revs, times := rb.Bucket(subRevisions), rb.Bucket(subRevisionTimes)
		var rows [][]byte
		seen := map[string]bool{}
		c := times.Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
			if row := revRowPrefix(k[8:]); !seen[string(row)] {
				seen[string(row)] = true
				rows = append(rows, bytes.Clone(row))
			}
		}
		pruned := 0
		for _, row := range rows {
			var forget, park [][]byte // revision keys, time keys
			rc := revs.Cursor()
			upper := append(bytes.Clone(row), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
			var k, v []byte
			if k0, _ := rc.Seek(upper); k0 == nil {
				k, v = rc.Last()
			} else {
				k, v = rc.Prev()
			}
			for rank := 1; k != nil && bytes.HasPrefix(k, row); k, v = rc.Prev() {
				if len(v) < 9 {
					return pruned, fmt.Errorf("revision %q is %d bytes, too short", k, len(v))
				}
				if bytes.Compare(v[:8], end) < 0 {
					if rank > keep {
						forget = append(forget, bytes.Clone(k))
					} else {
						park = append(park, revTimeKey(k, v))
					}
				}
				rank++
			}
			for _, k := range forget {
				tk := revTimeKey(k, revs.Get(k))
				if err := revs.Delete(k); err != nil {
					return pruned, err
				}
				if err := times.Delete(tk); err != nil {
					return pruned, err
				}
				pruned++
			}
			for _, tk := range park {
				if err := times.Delete(tk); err != nil {
					return pruned, err
				}
			}
		}
		return pruned, nil
	})
}
