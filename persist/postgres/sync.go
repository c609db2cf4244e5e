package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"corkboard/board"
	"corkboard/persist"
)

var _ persist.SyncStore = (*Store)(nil)

// Row kinds in board_rows.
const (
	kindNote = "n"
	kindItem = "i"
)

// ApplyPush applies one push to a claimed board and returns the new board
// version; replayed is true when idemKey was already applied to this board.
// See persist.DB.ApplyPush for the contract.
func (s *Store) ApplyPush(ctx context.Context, boardID string, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	res, err := s.ApplyPushes(ctx, boardID, []persist.PushInput{{Push: p, IdempotencyKey: idemKey}})
	if err != nil {
		return 0, false, err
	}
	return res[0].Version, res[0].Replayed, res[0].Err
}

// ApplyPushes applies pushes to one board, in order, in one transaction
// (see persist.SyncStore). The transaction first locks the board's row, so
// pushes to one board from any node apply one after the other; each push
// that changes something bumps the version with one UPDATE … RETURNING.
// A transient failure (serialization, deadlock, a connection lost before
// COMMIT) runs the whole transaction again.
func (s *Store) ApplyPushes(ctx context.Context, boardID string, pushes []persist.PushInput) ([]persist.Applied, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := make([]persist.Applied, len(pushes))
	valid := make([]bool, len(pushes))
	for i, in := range pushes {
		switch {
		case in.Push == nil:
			out[i].Err = board.Errorf(board.EINVALID, "Request body must be a JSON object.")
		case len(in.IdempotencyKey) > persist.MaxIdempotencyKeyLen:
			out[i].Err = board.FieldErrorf("Idempotency-Key", "Idempotency-Key must be at most %d bytes.", persist.MaxIdempotencyKeyLen)
		default:
			out[i].Err = in.Push.Validate()
		}
		valid[i] = out[i].Err == nil
	}
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		// A retry starts from a clean slate.
		for i := range out {
			if valid[i] {
				out[i] = persist.Applied{}
			}
		}
		b, err := scanBoard(tx.QueryRow(ctx, "SELECT "+boardColumns+" FROM boards WHERE id = $1 FOR UPDATE", boardID), false)
		if err != nil {
			return err
		}
		now := s.now()
		for i, in := range pushes {
			if !valid[i] {
				continue
			}
			if in.IdempotencyKey != "" {
				var v int64
				err := tx.QueryRow(ctx, "SELECT version FROM idempotency_keys WHERE board_id = $1 AND key = $2", boardID, in.IdempotencyKey).Scan(&v)
				if err == nil {
					out[i] = persist.Applied{Version: v, Replayed: true}
					continue
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("read idempotency key: %w", err)
				}
			}
			nothing, err := changesNothing(ctx, tx, boardID, in.Push)
			if err != nil {
				return err
			}
			if nothing {
				// The version and updatedAt stay; the key is kept so that
				// a retry answers the same version and stays a no-op.
				if err := recordKey(ctx, tx, boardID, in.IdempotencyKey, b.Version, now); err != nil {
					return err
				}
				out[i] = persist.Applied{Version: b.Version}
				continue
			}
			ch, err := applyOne(ctx, tx, b, in.Push, now)
			if err != nil {
				return err
			}
			if err := recordKey(ctx, tx, boardID, in.IdempotencyKey, b.Version, now); err != nil {
				return err
			}
			out[i] = persist.Applied{Version: b.Version, Changes: ch}
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "apply pushes to board %s", boardID)
	}
	return out, nil
}

// changesNothing reports whether p would change nothing: no board patch, no
// upsert, and every ID it deletes is unknown or already deleted (as this
// transaction sees it, earlier pushes of the batch included).
func changesNothing(ctx context.Context, tx pgx.Tx, boardID string, p *board.Push) (bool, error) {
	if p.Board != nil || len(p.Notes.Upserted) > 0 || len(p.TrackerItems.Upserted) > 0 {
		return false, nil
	}
	if len(p.Notes.Deleted) == 0 && len(p.TrackerItems.Deleted) == 0 {
		return true, nil
	}
	var live bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM board_rows WHERE board_id = $1 AND deleted_ns IS NULL
		AND ((kind = 'n' AND id = ANY($2)) OR (kind = 'i' AND id = ANY($3))))`,
		boardID, nonNil(p.Notes.Deleted), nonNil(p.TrackerItems.Deleted)).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("check deletions: %w", err)
	}
	return !live, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// recordKey remembers that key (none when "") produced version.
func recordKey(ctx context.Context, tx pgx.Tx, boardID, key string, version int64, now time.Time) error {
	if key == "" {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (board_id, key, version, recorded_ns) VALUES ($1, $2, $3, $4)
		ON CONFLICT (board_id, key) DO UPDATE SET version = excluded.version, recorded_ns = excluded.recorded_ns`,
		boardID, key, version, nanos(now))
	if err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

// applyOne writes one push that changes something: it bumps the board's
// version in the database (UPDATE … RETURNING), writes the rows at that
// version, moves b along, and returns what it changed.
func applyOne(ctx context.Context, tx pgx.Tx, b *board.Board, p *board.Push, now time.Time) (*board.Changes, error) {
	stamp := now.Format(time.RFC3339Nano)
	updatedAt := stamp
	var name *string
	if p.Board != nil {
		name = &p.Board.Name
		if p.Board.UpdatedAt != "" {
			updatedAt = p.Board.UpdatedAt
		}
	}
	if err := tx.QueryRow(ctx, `UPDATE boards SET version = version + 1, updated_at = $2, name = COALESCE($3, name)
		WHERE id = $1 RETURNING version, name, updated_at`, b.ID, updatedAt, name).Scan(&b.Version, &b.Name, &b.UpdatedAt); err != nil {
		return nil, fmt.Errorf("bump version: %w", err)
	}
	v := b.Version
	ch := &board.Changes{
		Board:                 b.Header(),
		Notes:                 make([]board.Note, 0, len(p.Notes.Upserted)),
		DeletedNoteIDs:        []string{},
		TrackerItems:          make([]board.TrackerItem, 0, len(p.TrackerItems.Upserted)),
		DeletedTrackerItemIDs: []string{},
		ServerVersion:         v,
	}

	// The last copy of an ID in the push wins, at the place of its first.
	noteAt := make(map[string]int, len(p.Notes.Upserted))
	for _, n := range p.Notes.Upserted {
		n.Version, n.DeletedAt = v, nil
		if n.UpdatedAt == "" {
			n.UpdatedAt = stamp
		}
		if i, ok := noteAt[n.ID]; ok {
			ch.Notes[i] = n
		} else {
			noteAt[n.ID] = len(ch.Notes)
			ch.Notes = append(ch.Notes, n)
		}
	}
	itemAt := make(map[string]int, len(p.TrackerItems.Upserted))
	for _, it := range p.TrackerItems.Upserted {
		it.Version, it.DeletedAt = v, nil
		if it.UpdatedAt == "" {
			it.UpdatedAt = stamp
		}
		if i, ok := itemAt[it.ID]; ok {
			ch.TrackerItems[i] = it
		} else {
			itemAt[it.ID] = len(ch.TrackerItems)
			ch.TrackerItems = append(ch.TrackerItems, it)
		}
	}
	if err := upsertRows(ctx, tx, b.ID, kindNote, v, ch.Notes, func(n *board.Note) string { return n.ID }); err != nil {
		return nil, err
	}
	if err := upsertRows(ctx, tx, b.ID, kindItem, v, ch.TrackerItems, func(it *board.TrackerItem) string { return it.ID }); err != nil {
		return nil, err
	}
	var err error
	if ch.DeletedNoteIDs, err = deleteRows(ctx, tx, b.ID, kindNote, v, now, p.Notes.Deleted); err != nil {
		return nil, err
	}
	if ch.DeletedTrackerItemIDs, err = deleteRows(ctx, tx, b.ID, kindItem, v, now, p.TrackerItems.Deleted); err != nil {
		return nil, err
	}
	// Rows upserted and then deleted in the same push end deleted: they
	// leave the change's upserted lists.
	if len(ch.DeletedNoteIDs) > 0 && len(noteAt) > 0 {
		ch.Notes = dropDeleted(ch.Notes, ch.DeletedNoteIDs, func(n *board.Note) string { return n.ID })
	}
	if len(ch.DeletedTrackerItemIDs) > 0 && len(itemAt) > 0 {
		ch.TrackerItems = dropDeleted(ch.TrackerItems, ch.DeletedTrackerItemIDs, func(it *board.TrackerItem) string { return it.ID })
	}
	return ch, nil
}

// upsertRows writes rows (unique IDs) live at version in one statement.
func upsertRows[T any](ctx context.Context, tx pgx.Tx, boardID, kind string, version int64, rows []T, id func(*T) string) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	data := make([][]byte, len(rows))
	for i := range rows {
		ids[i] = id(&rows[i])
		js, err := json.Marshal(&rows[i])
		if err != nil {
			return fmt.Errorf("encode row %q: %w", ids[i], err)
		}
		data[i] = js
	}
	_, err := tx.Exec(ctx, `INSERT INTO board_rows (board_id, kind, id, version, data, deleted_ns)
		SELECT $1, $2, u.id, $3, u.data, NULL FROM unnest($4::text[], $5::bytea[]) AS u(id, data)
		ON CONFLICT (board_id, kind, id) DO UPDATE SET version = excluded.version, data = excluded.data, deleted_ns = NULL`,
		boardID, kind, version, ids, data)
	if err != nil {
		return fmt.Errorf("write %d rows: %w", len(rows), err)
	}
	return nil
}

// deleteRows turns the live rows among ids into tombstones at version and
// returns the IDs it deleted, in the order of ids; unknown or already
// deleted IDs are skipped.
func deleteRows(ctx context.Context, tx pgx.Tx, boardID, kind string, version int64, now time.Time, ids []string) ([]string, error) {
	out := []string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, `UPDATE board_rows SET version = $3, data = NULL, deleted_ns = $4
		WHERE board_id = $1 AND kind = $2 AND id = ANY($5) AND deleted_ns IS NULL RETURNING id`,
		boardID, kind, version, nanos(now), ids)
	if err != nil {
		return nil, fmt.Errorf("delete rows: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("delete rows: %w", err)
	}
	set := make(map[string]bool, len(gone))
	for _, id := range gone {
		set[id] = true
	}
	for _, id := range ids {
		if set[id] {
			out = append(out, id)
			delete(set, id)
		}
	}
	return out, nil
}

func dropDeleted[T any](rows []T, deleted []string, id func(*T) string) []T {
	gone := make(map[string]bool, len(deleted))
	for _, d := range deleted {
		gone[d] = true
	}
	kept := rows[:0]
	for i := range rows {
		if !gone[id(&rows[i])] {
			kept = append(kept, rows[i])
		}
	}
	return kept
}

// ChangesSince answers a pull (see persist.SyncStore) from one snapshot of
// the database: a REPEATABLE READ, read-only transaction.
func (s *Store) ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error) {
	if since < 0 {
		return nil, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	var ch *board.Changes
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		var b board.Board
		var horizon int64
		err := tx.QueryRow(ctx, "SELECT id, name, version, updated_at, horizon FROM boards WHERE id = $1", boardID).
			Scan(&b.ID, &b.Name, &b.Version, &b.UpdatedAt, &horizon)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("Board")
		} else if err != nil {
			return err
		}
		ch = &board.Changes{
			Board:                 b.Header(),
			Notes:                 []board.Note{},
			DeletedNoteIDs:        []string{},
			TrackerItems:          []board.TrackerItem{},
			DeletedTrackerItemIDs: []string{},
			ServerVersion:         b.Version,
		}
		if since == b.Version {
			return nil
		}
		// A client ahead of the board or behind the pruned tombstones
		// cannot be patched: it gets everything and replaces its copy.
		if since == 0 || since > b.Version || since < horizon {
			ch.Reset = since != 0
			return liveRows(ctx, tx, boardID, &ch.Notes, &ch.TrackerItems)
		}
		rows, err := tx.Query(ctx, `SELECT kind, id, data FROM board_rows WHERE board_id = $1 AND version > $2
			ORDER BY kind DESC, version, id`, boardID, since)
		if err != nil {
			return err
		}
		var kind, id string
		var data []byte
		_, err = pgx.ForEachRow(rows, []any{&kind, &id, &data}, func() error {
			switch {
			case data == nil && kind == kindNote:
				ch.DeletedNoteIDs = append(ch.DeletedNoteIDs, id)
			case data == nil:
				ch.DeletedTrackerItemIDs = append(ch.DeletedTrackerItemIDs, id)
			case kind == kindNote:
				return addRow(&ch.Notes, data)
			default:
				return addRow(&ch.TrackerItems, data)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, wrap(err, "changes of board %s since %d", boardID, since)
	}
	return ch, nil
}

func addRow[T any](list *[]T, data []byte) error {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("decode row: %w", err)
	}
	*list = append(*list, v)
	return nil
}

// liveRows appends every live note and item of the board, in ID order.
func liveRows(ctx context.Context, tx pgx.Tx, boardID string, notes *[]board.Note, items *[]board.TrackerItem) error {
	rows, err := tx.Query(ctx, `SELECT kind, data FROM board_rows WHERE board_id = $1 AND deleted_ns IS NULL
		ORDER BY kind DESC, id`, boardID)
	if err != nil {
		return err
	}
	var kind string
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&kind, &data}, func() error {
		if kind == kindNote {
			return addRow(notes, data)
		}
		return addRow(items, data)
	})
	return err
}

// CurrentVersion returns the board's version. ENOTFOUND for an unclaimed board.
func (s *Store) CurrentVersion(ctx context.Context, boardID string) (int64, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var v int64
	err := s.pool.QueryRow(ctx, "SELECT version FROM boards WHERE id = $1", boardID).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, notFound("Board")
	}
	return v, wrap(err, "version of board %s", boardID)
}

// BoardState returns every live note and item of the board with its header
// and phases, from one snapshot (see persist.SyncStore).
func (s *Store) BoardState(ctx context.Context, boardID string) (*board.State, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var st *board.State
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		b, err := scanBoard(tx.QueryRow(ctx, "SELECT "+boardColumns+" FROM boards WHERE id = $1", boardID), false)
		if err != nil {
			return err
		}
		st = &board.State{Board: b.Header(), Phases: b.Phases, Notes: []board.Note{}, TrackerItems: []board.TrackerItem{}}
		return liveRows(ctx, tx, boardID, &st.Notes, &st.TrackerItems)
	})
	if err != nil {
		return nil, wrap(err, "state of board %s", boardID)
	}
	return st, nil
}

// PruneTombstones forgets the deletions recorded before cutoff, one short
// transaction per board, each raising the board's horizon to the highest
// version it forgot (see persist.SyncStore).
func (s *Store) PruneTombstones(ctx context.Context, cutoff time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	end := nanos(cutoff)
	rows, err := s.pool.Query(ctx, "SELECT DISTINCT board_id FROM board_rows WHERE deleted_ns < $1", end)
	if err != nil {
		return 0, wrap(err, "find boards to prune")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, wrap(err, "find boards to prune")
	}
	total := 0
	for _, id := range ids {
		n := 0
		err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
			// The board's lock first, as pushes take it: no deadlock.
			if _, err := tx.Exec(ctx, "SELECT 1 FROM boards WHERE id = $1 FOR UPDATE", id); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `WITH d AS (
					DELETE FROM board_rows WHERE board_id = $1 AND deleted_ns < $2 RETURNING version
				), m AS (SELECT count(*) AS n, max(version) AS v FROM d),
				u AS (UPDATE boards SET horizon = GREATEST(horizon, m.v) FROM m WHERE id = $1 AND m.n > 0)
				SELECT n FROM m`, id, end).Scan(&n)
		})
		if err != nil {
			return total, wrap(err, "prune tombstones of board %s", id)
		}
		total += n
	}
	return total, nil
}

// SweepIdempotencyKeys forgets keys recorded before cutoff, at most
// SweepBatch per statement; a push that repeats a forgotten key is
// applied again.
func (s *Store) SweepIdempotencyKeys(ctx context.Context, cutoff time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE (board_id, key) IN (
			SELECT board_id, key FROM idempotency_keys WHERE recorded_ns < $1 LIMIT $2)`, nanos(cutoff), SweepBatch)
		if err != nil {
			return total, wrap(err, "sweep idempotency keys")
		}
		total += int(tag.RowsAffected())
		if tag.RowsAffected() < SweepBatch {
			return total, nil
		}
	}
}
