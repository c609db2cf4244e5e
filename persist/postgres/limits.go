package postgres

import (
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"corkboard/board"
	"corkboard/persist"
)

var _ persist.Limited = (*Store)(nil)

// SetLimits sets the limits pushes are checked against (zero fields: the
// defaults). Call it before the store is used, as for Now.
func (s *Store) SetLimits(l board.Limits) {
	s.limits = l.WithDefaults()
}

// countsSQL moves a board's live-row counts (0003_row_counts.sql) by what
// one push does, from the rows as they are before its writes (it is queued
// before them in the push's batch): $2 the note IDs the push leaves live
// (its upserts that it does not delete), $3 the note IDs it deletes, $4
// and $5 the same for items. Each count is an index probe per ID, never a
// count of the board. It answers the counts before and after.
var countsSQL = liveCountsSQL("note_count", "n", "item_count", "i")

// liveCountsSQL writes the statement that moves two of a board's live-row
// counts (columns colA and colB, of the rows of kinds kindA and kindB) as
// countsSQL says, and answers both before and after.
func liveCountsSQL(colA, kindA, colB, kindB string) string {
	return fmt.Sprintf(`WITH o AS (SELECT %[1]s, %[2]s FROM boards WHERE id = $1)
	UPDATE boards b SET %[3]s, %[4]s
	FROM o WHERE b.id = $1
	RETURNING o.%[1]s, o.%[2]s, b.%[1]s, b.%[2]s`, colA, colB, countDelta(colA, kindA, "$2", "$3"), countDelta(colB, kindB, "$4", "$5"))
}

// countDelta moves column col by the rows of kind that the IDs in live
// (a parameter) add and those in deleted remove.
func countDelta(col, kind, live, deleted string) string {
	return fmt.Sprintf(`%[1]s = b.%[1]s
			+ (SELECT count(*) FROM unnest(%[3]s::text[]) AS u(id) WHERE NOT EXISTS (SELECT 1 FROM board_rows r
				WHERE r.board_id = $1 AND r.kind = '%[2]s' AND r.id = u.id AND r.deleted_ns IS NULL))
			- (SELECT count(*) FROM board_rows r WHERE r.board_id = $1 AND r.kind = '%[2]s' AND r.id = ANY(%[4]s) AND r.deleted_ns IS NULL)`, col, kind, live, deleted)
}

// rowCount is what countsSQL answered for one push.
type rowCount struct {
	notesBefore, itemsBefore, notes, items int64
}

// leftLive is the IDs of rows (unique) that a push does not also delete.
func leftLive[T any](rows []T, id func(*T) string, deleted []string) []string {
	out := make([]string, 0, len(rows))
	for i := range rows {
		if k := id(&rows[i]); !slices.Contains(deleted, k) {
			out = append(out, k)
		}
	}
	return out
}

// queueCounts queues countsSQL for a push that upserts notes and items
// (their last copies) and deletes p's IDs; the answer lands in *c.
func queueCounts(batch *pgx.Batch, boardID string, notes []board.Note, items []board.TrackerItem, p *board.Push, c *rowCount) {
	if len(notes) == 0 && len(items) == 0 && len(p.Notes.Deleted) == 0 && len(p.TrackerItems.Deleted) == 0 {
		return
	}
	batch.Queue(countsSQL, boardID,
		leftLive(notes, func(n *board.Note) string { return n.ID }, p.Notes.Deleted), nonNil(p.Notes.Deleted),
		leftLive(items, func(it *board.TrackerItem) string { return it.ID }, p.TrackerItems.Deleted), nonNil(p.TrackerItems.Deleted),
	).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&c.notesBefore, &c.itemsBefore, &c.notes, &c.items); err != nil {
			return fmt.Errorf("count live rows: %w", err)
		}
		return nil
	})
}

// check returns the error naming the limit the push passed, if it did: a
// push that adds no row is never refused, so that a board over a lowered
// limit can still be edited and emptied.
func (c rowCount) check(l board.Limits) error {
	l = l.WithDefaults()
	if c.notes > c.notesBefore && c.notes > int64(l.NotesPerBoard) {
		return board.RowsFull("notes", l.NotesPerBoard)
	}
	if c.items > c.itemsBefore && c.items > int64(l.ItemsPerBoard) {
		return board.RowsFull("trackerItems", l.ItemsPerBoard)
	}
	return nil
}

// refusedPush ends a push transaction because push (an index into the
// call's pushes) would pass a limit: ApplyPushes runs the transaction
// again without it, so that nothing of it is written and the others apply.
type refusedPush struct {
	push int
	err  error
}

func (r *refusedPush) Error() string { return fmt.Sprintf("push %d refused: %v", r.push, r.err) }

// asRefused finds a refusedPush in err.
func asRefused(err error) (*refusedPush, bool) {
	var r *refusedPush
	ok := errors.As(err, &r)
	return r, ok
}

// recountSQL counts the live rows of boards from scratch (after an import,
// never on a push).
const recountSQL = `UPDATE boards b SET
	note_count = (SELECT count(*) FROM board_rows r WHERE r.board_id = b.id AND r.kind = 'n' AND r.deleted_ns IS NULL),
	item_count = (SELECT count(*) FROM board_rows r WHERE r.board_id = b.id AND r.kind = 'i' AND r.deleted_ns IS NULL),
	frame_count = (SELECT count(*) FROM board_rows r WHERE r.board_id = b.id AND r.kind = 'f' AND r.deleted_ns IS NULL),
	connector_count = (SELECT count(*) FROM board_rows r WHERE r.board_id = b.id AND r.kind = 'c' AND r.deleted_ns IS NULL)
	WHERE b.id = ANY($1)`

// pruneLogSQL deletes a board's oldest changelog entries while its content
// is over $2 bytes, looking at its $3 oldest entries only and keeping each
// note's newest entry and the newest of each action without a note (the
// newest is found by one probe of changelog_entries_note or _action), and
// takes what it deleted off log_bytes. It does nothing (one read of
// changelog_state) when the board is within the limit.
const pruneLogSQL = `WITH st AS (
		SELECT log_bytes - $2 AS excess FROM changelog_state WHERE board_id = $1 AND log_bytes > $2
	), oldest AS (
		SELECT e.key, e.note_id, e.action, length(e.content) AS n FROM changelog_entries e
		WHERE EXISTS (SELECT FROM st) AND e.board_id = $1 ORDER BY e.key LIMIT $3
	), cand AS (
		SELECT o.key, o.n, sum(o.n) OVER (ORDER BY o.key) - o.n AS before FROM oldest o
		WHERE o.key <> (CASE WHEN o.note_id <> ''
			THEN (SELECT max(x.key) FROM changelog_entries x WHERE x.board_id = $1 AND x.note_id = o.note_id AND x.note_id <> '')
			ELSE (SELECT max(x.key) FROM changelog_entries x WHERE x.board_id = $1 AND x.action = o.action AND x.note_id = '') END)
	), gone AS (
		DELETE FROM changelog_entries e USING cand, st
		WHERE e.board_id = $1 AND e.key = cand.key AND cand.before < st.excess
		RETURNING cand.n
	)
	UPDATE changelog_state SET log_bytes = log_bytes - (SELECT sum(n) FROM gone)
	WHERE board_id = $1 AND EXISTS (SELECT FROM gone)`

// recountLogSQL counts the changelog bytes of boards from scratch (after
// an import).
const recountLogSQL = `UPDATE changelog_state s SET
	log_bytes = coalesce((SELECT sum(length(e.content)) FROM changelog_entries e WHERE e.board_id = s.board_id), 0)
	WHERE s.board_id = ANY($1)`
