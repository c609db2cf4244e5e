package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
)

var _ persist.Limited = (*DB)(nil)

// Live-row counts of a board, kept in its meta bucket by every push that
// changes them, so that the limit check reads two keys instead of the
// board. A board written before the counts existed gets them counted once,
// by its first push.
var (
	metaNoteCount      = []byte("notes")
	metaItemCount      = []byte("items")
	metaFrameCount     = []byte("frames")
	metaConnectorCount = []byte("connectors")
)

// SetLimits sets the limits pushes are checked against (zero fields: the
// defaults). Call it before the store is used, as for Now.
func (db *DB) SetLimits(l board.Limits) {
	db.limits = l.WithDefaults()
}

// rowCounts is a board's live notes, items, frames and connectors.
type rowCounts struct{ notes, items, frames, connectors int64 }

// liveCount reads a count from meta, counting the table's live rows when it
// was never stored.
func liveCount(meta *bbolt.Bucket, key []byte, t table) (int64, error) {
	if v := meta.Get(key); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v)), nil
	}
	var n int64
	err := t.eachLive(func([]byte) error { n++; return nil })
	if err != nil {
		return 0, fmt.Errorf("count live rows: %w", err)
	}
	return n, nil
}

// readCounts returns the board's live-row counts.
func readCounts(rb *bbolt.Bucket) (rowCounts, error) {
	meta := rb.Bucket(subMeta)
	notes, err := liveCount(meta, metaNoteCount, notesTable(rb))
	if err != nil {
		return rowCounts{}, err
	}
	items, err := liveCount(meta, metaItemCount, itemsTable(rb))
	if err != nil {
		return rowCounts{}, err
	}
	frames, err := liveCount(meta, metaFrameCount, framesTable(rb))
	if err != nil {
		return rowCounts{}, err
	}
	conns, err := liveCount(meta, metaConnectorCount, connectorsTable(rb))
	if err != nil {
		return rowCounts{}, err
	}
	return rowCounts{notes, items, frames, conns}, nil
}

// writeCounts stores the board's live-row counts.
func writeCounts(rb *bbolt.Bucket, c rowCounts) error {
	meta := rb.Bucket(subMeta)
	if err := meta.Put(metaNoteCount, be64(uint64(c.notes))); err != nil {
		return fmt.Errorf("store note count: %w", err)
	}
	if err := meta.Put(metaItemCount, be64(uint64(c.items))); err != nil {
		return fmt.Errorf("store item count: %w", err)
	}
	if err := meta.Put(metaFrameCount, be64(uint64(c.frames))); err != nil {
		return fmt.Errorf("store frame count: %w", err)
	}
	if err := meta.Put(metaConnectorCount, be64(uint64(c.connectors))); err != nil {
		return fmt.Errorf("store connector count: %w", err)
	}
	return nil
}

// liveDelta is how many live rows of t a push's upserts and deletions of
// one table add (negative: remove), as the push will apply them: upserts
// first, so an ID both upserted and deleted ends deleted, and an upsert
// of a deleted ID brings it back.
func liveDelta(t table, upserted, deleted []string) int64 {
	gone := make(map[string]bool, len(deleted))
	for _, id := range deleted {
		gone[id] = true
	}
	var d int64
	seen := make(map[string]bool, len(upserted))
	for _, id := range upserted {
		if seen[id] || gone[id] {
			continue
		}
		seen[id] = true
		if !t.anyLive([]string{id}) {
			d++
		}
	}
	for id := range gone {
		if t.anyLive([]string{id}) {
			d--
		}
	}
	return d
}

// checkRowLimits returns the counts the board will have once p applies
// (st: its connectors as settled, those deleted with their ends
// included), or the error naming the limit p would pass (a push that adds
// no row is never refused, so that a board over a lowered limit can still
// be edited and emptied).
func (db *DB) checkRowLimits(rb *bbolt.Bucket, cur rowCounts, p *board.Push, st structure) (rowCounts, error) {
	l := db.limits.WithDefaults()
	dn := liveDelta(notesTable(rb), ids(p.Notes.Upserted, func(n *board.Note) string { return n.ID }), p.Notes.Deleted)
	di := liveDelta(itemsTable(rb), ids(p.TrackerItems.Upserted, func(it *board.TrackerItem) string { return it.ID }), p.TrackerItems.Deleted)
	df := liveDelta(framesTable(rb), ids(p.Frames.Upserted, func(f *board.Frame) string { return f.ID }), p.Frames.Deleted)
	dc := liveDelta(connectorsTable(rb), ids(st.connectors, func(c *board.Connector) string { return c.ID }), st.deleted)
	next := rowCounts{cur.notes + dn, cur.items + di, cur.frames + df, cur.connectors + dc}
	for _, c := range []struct {
		d, n  int64
		limit int
		field string
	}{
		{dn, next.notes, l.NotesPerBoard, "notes"},
		{di, next.items, l.ItemsPerBoard, "trackerItems"},
		{df, next.frames, l.FramesPerBoard, "frames"},
		{dc, next.connectors, l.ConnectorsPerBoard, "connectors"},
	} {
		if c.d > 0 && c.n > int64(c.limit) {
			return cur, board.RowsFull(c.field, c.limit)
		}
	}
	return next, nil
}

func ids[T any](rows []T, id func(*T) string) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = id(&rows[i])
	}
	return out
}

// ownedBoards counts the boards email owns: a walk of its memberships.
func ownedBoards(tx *bbolt.Tx, email string) int {
	prefix := memberKey(email, "")
	n := 0
	c := tx.Bucket(bucketMembers).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if string(v) == roleOwner {
			n++
		}
	}
	return n
}

// clMetaLogBytes is the content bytes of a board's changelog entries.
var clMetaLogBytes = []byte("log.bytes")

// logBytes reads the changelog's content bytes, counting them once when a
// board written before the count has none.
func (cb clBoard) logBytes() (int64, error) {
	if n, ok := clInt64(cb.meta, clMetaLogBytes); ok {
		return n, nil
	}
	var n int64
	err := cb.entries.ForEach(func(_, v []byte) error {
		_, content, err := decodeEntry(v)
		n += int64(len(content))
		return err
	})
	return n, err
}

// addLogBytes moves the changelog's content bytes by d.
func (cb clBoard) addLogBytes(d int64) error {
	n, err := cb.logBytes()
	if err != nil {
		return err
	}
	return cb.meta.Put(clMetaLogBytes, be64(uint64(n+d)))
}

// newestIn reports whether key is the last key under prefix in b (an
// index of the note's, or the action's, entries).
func newestIn(b *bbolt.Bucket, prefix, key []byte) bool {
	c := b.Cursor()
	k, _ := c.Seek(append(bytes.Clone(prefix), 0xff))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	return k != nil && bytes.HasPrefix(k, prefix) && bytes.Equal(k[len(prefix):], key)
}

// pruneLog deletes the oldest entries until the changelog's content is
// within limit, keeping each note's newest entry and the newest of each
// action without a note; it looks at MaxPruneScan entries at most. It
// returns how many it deleted.
func (cb clBoard) pruneLog(limit int64) (int, error) {
	total, err := cb.logBytes()
	if err != nil || total <= limit {
		return 0, err
	}
	type victim struct {
		key    []byte
		noteID string
		action string
	}
	var victims []victim
	c := cb.entries.Cursor()
	scanned := 0
	for k, v := c.First(); k != nil && total > limit && scanned < persist.MaxPruneScan; k, v = c.Next() {
		scanned++
		m, content, err := decodeEntry(v)
		if err != nil {
			return 0, err
		}
		if m.NoteID != "" && newestIn(cb.byNote, noteIndexPrefix(m.NoteID), k) ||
			m.NoteID == "" && newestIn(cb.byAction, actionIndexPrefix(m.Action), k) {
			continue
		}
		victims = append(victims, victim{bytes.Clone(k), m.NoteID, m.Action})
		total -= int64(len(content))
	}
	for _, vi := range victims {
		if err := cb.entries.Delete(vi.key); err != nil {
			return 0, err
		}
		if vi.noteID != "" {
			if err := cb.byNote.Delete(append(noteIndexPrefix(vi.noteID), vi.key...)); err != nil {
				return 0, err
			}
		}
		if err := cb.byAction.Delete(append(actionIndexPrefix(vi.action), vi.key...)); err != nil {
			return 0, err
		}
	}
	return len(victims), cb.meta.Put(clMetaLogBytes, be64(uint64(total)))
}
