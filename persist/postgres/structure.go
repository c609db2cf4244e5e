package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/internal/rowmerge"
)

// structure is what a push writes of frames and connectors: the rows as
// merged, and the connectors it deletes (its own list, then those whose
// end goes: rowmerge.Cascade).
type structure struct {
	frames     []board.Frame
	connectors []board.Connector
	deleted    []string
	// What the push's batch answers: the counts, and the frames and
	// connectors it deleted.
	counts                      structCount
	counted                     bool // counts were queued
	deletedFrames, deletedConns []string
}

// queue adds the push's writes of frames and connectors to its batch,
// after those of its notes and items: the counts first (they read the
// rows as they were), the upserts, then the deletions.
func (st *structure) queue(batch *pgx.Batch, boardID string, p *board.Push, v int64, now time.Time) error {
	st.counted = queueStructCounts(batch, boardID, *st, p, &st.counts)
	if err := queueUpsert(batch, boardID, kindFrame, v, now, st.frames, func(f *board.Frame) string { return f.ID }); err != nil {
		return err
	}
	if err := queueUpsert(batch, boardID, kindConnector, v, now, st.connectors, func(c *board.Connector) string { return c.ID }); err != nil {
		return err
	}
	queueDelete(batch, boardID, kindFrame, v, now, p.Frames.Deleted, &st.deletedFrames)
	queueDelete(batch, boardID, kindConnector, v, now, st.deleted, &st.deletedConns)
	return nil
}

// change puts the frames and connectors the batch wrote into ch: rows
// upserted and then deleted leave the upserted lists, and empty lists are
// nil (left out of the JSON), as a pull gives them. b learns how many
// connectors the board has now.
func (st *structure) change(ch *board.Changes, b *lockedBoard) {
	if st.counted {
		b.connectors = st.counts.conns
	}
	if len(st.deletedFrames) > 0 && len(st.frames) > 0 {
		st.frames = rowmerge.DropDeleted(st.frames, st.deletedFrames, func(f *board.Frame) string { return f.ID })
	}
	if len(st.deletedConns) > 0 && len(st.connectors) > 0 {
		st.connectors = rowmerge.DropDeleted(st.connectors, st.deletedConns, func(c *board.Connector) string { return c.ID })
	}
	ch.Frames, ch.DeletedFrameIDs = rowmerge.NilIfEmpty(st.frames), rowmerge.NilIfEmpty(st.deletedFrames)
	ch.Connectors, ch.DeletedConnectorIDs = rowmerge.NilIfEmpty(st.connectors), rowmerge.NilIfEmpty(st.deletedConns)
}

// endsSQL answers, in one round trip, which of $2 (connector ends the
// push does not upsert) are live notes or frames ('e' rows), and the live
// connectors with an end in $3 (the notes and frames the push deletes;
// 'c' rows with their ends). Connectors are read through their JSON,
// which only a push deleting a note or frame does, over that board's
// connectors alone (the primary key's board_id, kind prefix).
const endsSQL = `SELECT 'e', id, '', '' FROM board_rows
		WHERE board_id = $1 AND kind IN ('n', 'f') AND id = ANY($2) AND deleted_ns IS NULL
	UNION ALL
	SELECT 'c', r.id, coalesce(x.j->>'from', ''), coalesce(x.j->>'to', '') FROM board_rows r
		CROSS JOIN LATERAL (SELECT convert_from(r.data, 'UTF8')::jsonb AS j) x
		WHERE cardinality($3::text[]) > 0 AND r.board_id = $1 AND r.kind = 'c' AND r.deleted_ns IS NULL
			AND (x.j->>'from' = ANY($3) OR x.j->>'to' = ANY($3))`

// settleStructure merges a push's frames and connectors into the stored
// states hist holds and decides the connectors' ends (rowmerge.CheckEnds,
// Cascade), reading what it needs in one round trip (endsSQL), taken
// only by a push that writes connectors, or deletes notes or frames on a
// board that has connectors (hasConnectors). A connector naming an end the
// board does not have is the push's EINVALID, which refuses it whole
// (refusedPush).
func settleStructure(ctx context.Context, tx pgx.Tx, boardID string, p *board.Push, stamp string, v int64,
	hist map[historyKey]history, tally *rowmerge.Tally, hasConnectors bool) (structure, error) {
	var st structure
	var err error
	st.frames, err = mergeRows(p.Frames.Upserted, kindFrame, persist.MergeTableFrame, stamp, hist, tally, board.MergeFrame,
		func(f *board.Frame) string { return f.ID }, func(f *board.Frame) { f.Version, f.DeletedAt, f.BaseVersion = v, nil, 0 })
	if err != nil {
		return st, err
	}
	mine := rowmerge.LastCopies(p.Connectors.Upserted, func(c *board.Connector) string { return c.ID })
	st.connectors, err = mergeRows(p.Connectors.Upserted, kindConnector, persist.MergeTableConnector, stamp, hist, tally, board.MergeConnector,
		func(c *board.Connector) string { return c.ID }, func(c *board.Connector) { c.Version, c.DeletedAt, c.BaseVersion = v, nil, 0 })
	if err != nil {
		return st, err
	}
	gone := rowmerge.Gone(p)
	if len(st.connectors) == 0 && (len(gone) == 0 || !hasConnectors) {
		st.deleted = p.Connectors.Deleted
		return st, nil
	}
	goneIDs := make([]string, 0, len(gone))
	for id := range gone {
		goneIDs = append(goneIDs, id)
	}
	rows, err := tx.Query(ctx, endsSQL, boardID, nonNil(rowmerge.EndIDs(p, st.connectors)), goneIDs)
	if err != nil {
		return st, fmt.Errorf("read connector ends: %w", err)
	}
	live := map[string]bool{}
	var stored []rowmerge.Ends
	var what string
	var e rowmerge.Ends
	if _, err := pgx.ForEachRow(rows, []any{&what, &e.ID, &e.From, &e.To}, func() error {
		if what == "e" {
			live[e.ID] = true
		} else {
			stored = append(stored, e)
		}
		return nil
	}); err != nil {
		return st, fmt.Errorf("read connector ends: %w", err)
	}
	dangling, err := rowmerge.CheckEnds(p, mine, st.connectors, func(id string) bool { return live[id] })
	if err != nil {
		return st, err
	}
	st.deleted = rowmerge.Cascade(p, dangling, st.connectors, stored)
	return st, nil
}

// mergeRows is mergeItems for any table without a changelog: the last
// copy of each ID, merged into hist's states, stamped by done.
func mergeRows[T any](upserted []T, kind, table, stamp string, hist map[historyKey]history, tally *rowmerge.Tally,
	merge func(base, theirs, mine T) (T, bool), id func(*T) string, done func(*T)) ([]T, error) {
	rows := rowmerge.LastCopies(upserted, id)
	for i := range rows {
		mine := rows[i]
		stampRow(&mine, stamp)
		h := hist[historyKey{kind, id(&mine)}]
		res, err := rowmerge.Resolve(mine, baseOf(&mine), h.cur, h.base, h.lastLive, merge)
		if err != nil {
			return nil, fmt.Errorf("merge %s %q: %w", table, id(&mine), err)
		}
		rowmerge.AddRow(tally, table, id(&mine), res)
		rows[i] = res.Row
		done(&rows[i])
	}
	return rows, nil
}

// stampRow gives a frame or connector without updatedAt the push's time.
func stampRow(row any, stamp string) {
	switch r := row.(type) {
	case *board.Frame:
		if r.UpdatedAt == "" {
			r.UpdatedAt = stamp
		}
	case *board.Connector:
		if r.UpdatedAt == "" {
			r.UpdatedAt = stamp
		}
	}
}

// baseOf is a frame's or connector's baseVersion.
func baseOf(row any) int64 {
	switch r := row.(type) {
	case *board.Frame:
		return r.BaseVersion
	case *board.Connector:
		return r.BaseVersion
	}
	return 0
}

// structCountsSQL is countsSQL for frames ($2 left live, $3 deleted) and
// connectors ($4, $5).
var structCountsSQL = liveCountsSQL("frame_count", "f", "connector_count", "c")

// structCount is what structCountsSQL answered for one push.
type structCount struct {
	framesBefore, connsBefore, frames, conns int64
}

// queueStructCounts queues structCountsSQL for a push that writes or
// deletes frames or connectors (st), before its writes, and reports
// whether it did.
func queueStructCounts(batch *pgx.Batch, boardID string, st structure, p *board.Push, c *structCount) bool {
	if len(st.frames) == 0 && len(st.connectors) == 0 && len(p.Frames.Deleted) == 0 && len(st.deleted) == 0 {
		return false
	}
	batch.Queue(structCountsSQL, boardID,
		leftLive(st.frames, func(f *board.Frame) string { return f.ID }, p.Frames.Deleted), nonNil(p.Frames.Deleted),
		leftLive(st.connectors, func(c *board.Connector) string { return c.ID }, st.deleted), nonNil(st.deleted),
	).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&c.framesBefore, &c.connsBefore, &c.frames, &c.conns); err != nil {
			return fmt.Errorf("count live frames and connectors: %w", err)
		}
		return nil
	})
	return true
}

// check is rowCount.check for frames and connectors.
func (c structCount) check(l board.Limits) error {
	l = l.WithDefaults()
	if c.frames > c.framesBefore && c.frames > int64(l.FramesPerBoard) {
		return board.RowsFull("frames", l.FramesPerBoard)
	}
	if c.conns > c.connsBefore && c.conns > int64(l.ConnectorsPerBoard) {
		return board.RowsFull("connectors", l.ConnectorsPerBoard)
	}
	return nil
}
