package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/internal/rowmerge"
)

var _ persist.SyncStore = (*Store)(nil)

// Row kinds in board_rows.
const (
	kindNote      = "n"
	kindItem      = "i"
	kindFrame     = "f"
	kindConnector = "c"
)

// ApplyPush applies one push to a claimed board and returns the new board
// version; replayed is true when idemKey was already applied to this board.
// See persist.SyncStore.ApplyPushes for the contract.
func (s *Store) ApplyPush(ctx context.Context, boardID string, p *board.Push, idemKey string) (version int64, replayed bool, err error) {
	res, err := s.ApplyPushes(ctx, boardID, []persist.PushInput{{Push: p, IdempotencyKey: idemKey}})
	if err != nil {
		return 0, false, err
	}
	return res[0].Version, res[0].Replayed, res[0].Err
}

// ApplyPushes applies pushes to one board, in order, in one transaction
// (see persist.SyncStore). The transaction first locks the board's row, so
// pushes to one board from any node apply one after the other (and merge
// against the same states); each push that changes something bumps the
// version with one UPDATE … RETURNING.
// A transient failure (serialization, deadlock, a connection lost before
// COMMIT) runs the whole transaction again.
func (s *Store) ApplyPushes(ctx context.Context, boardID string, pushes []persist.PushInput) ([]persist.Applied, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out, valid := persist.ValidatePushes(pushes)
	// The stored states the merges of each push need (rowmerge) are read
	// in the round trip before the push: behind the board's lock for the
	// first, behind the writes of the push before for the others. A merge
	// then costs no round trip of its own, unless a push that wrote
	// nothing (a replay, a no-op) comes between, or the quick read of a
	// single row (historyOneSQL) finds its base below baseVersion, gone, or
	// its row deleted.
	reqs := make([]historyRequest, len(pushes))
	for i, in := range pushes {
		if valid[i] {
			reqs[i] = newHistoryRequest(in.Push)
		}
	}
	nextValid := func(i int) int {
		for j := i + 1; j < len(pushes); j++ {
			if valid[j] {
				return j
			}
		}
		return -1
	}
	// A push refused for a limit ends the transaction (refusedPush); it
	// runs again without that push, at most once per push.
	var err error
	for {
		err = s.applyPushesTx(ctx, boardID, pushes, out, valid, reqs, nextValid)
		r, refused := asRefused(err)
		if !refused {
			break
		}
		out[r.push], valid[r.push], reqs[r.push] = persist.Applied{Err: r.err}, false, historyRequest{}
	}
	if err != nil {
		return nil, wrap(err, "apply pushes to board %s", boardID)
	}
	return out, nil
}

// applyPushesTx is ApplyPushes' transaction.
func (s *Store) applyPushesTx(ctx context.Context, boardID string, pushes []persist.PushInput, out []persist.Applied, valid []bool,
	reqs []historyRequest, nextValid func(int) int) error {
	return s.inTx(ctx, pushWrite, true, func(tx pgx.Tx) error {
		// A retry starts from a clean slate.
		for i := range out {
			if valid[i] {
				out[i] = persist.Applied{}
			}
		}
		pre := prefetch{push: nextValid(-1)}
		b, err := lockBoard(ctx, tx, boardID, reqs, &pre)
		if err != nil {
			return err
		}
		now := s.now()
		for i, in := range pushes {
			if !valid[i] {
				continue
			}
			res, timer, vote, done, err := answerWithoutWrite(ctx, tx, b.Board, in, now)
			if err != nil {
				return err
			}
			if done {
				out[i] = res
				continue
			}
			hist, ok := pre.take(i)
			if !ok && reqs[i].any() {
				if hist, err = readHistory(ctx, tx, boardID, reqs[i]); err != nil {
					return err
				}
			}
			// This push writes: what was read before it is stale for
			// the next, which reads behind these writes instead.
			pre = prefetch{push: nextValid(i)}
			ch, tally, err := s.applyOne(ctx, tx, b, in, now, timer, vote, hist, func(batch *pgx.Batch) {
				pre.queue(batch, boardID, reqs)
			})
			if refused := (*board.Error)(nil); errors.As(err, &refused) && refused.Code == board.EFORBIDDEN {
				// Refused by board.SettleRights before anything was
				// queued: the push writes nothing, the others go on (the
				// next push reads its history itself).
				out[i] = persist.Applied{Err: refused}
				continue
			}
			if full := (*board.Error)(nil); errors.As(err, &full) && (full.Code == board.ETOOLARGE || full.Code == board.EINVALID) {
				return &refusedPush{push: i, err: full}
			} else if err != nil {
				return err
			}
			out[i] = persist.Applied{Version: b.Version, Changes: ch, Merged: tally.Merged, Fallbacks: tally.Fallbacks, Events: tally.Events}
		}
		return nil
	})
}

// lockedBoard is the board a push transaction holds the lock of, with its
// live connectors as the transaction's pushes so far left them: a push
// that deletes notes on a board without connectors has none to look up
// (settleStructure).
type lockedBoard struct {
	*board.Board
	connectors int64
}

// lockBoard reads the board and locks its row for the transaction. When
// the first push to apply needs stored states for its merges, they are
// read in the same round trip (pre).
func lockBoard(ctx context.Context, tx pgx.Tx, boardID string, reqs []historyRequest, pre *prefetch) (*lockedBoard, error) {
	const lockSQL = "SELECT " + boardColumns + ", connector_count FROM boards WHERE id = $1 FOR UPDATE"
	lb := &lockedBoard{}
	var err error
	if pre.push < 0 || !reqs[pre.push].any() {
		lb.Board, err = scanBoard(tx.QueryRow(ctx, lockSQL, boardID), false, &lb.connectors)
		return lb, err
	}
	lock := &pgx.Batch{}
	lock.Queue(lockSQL, boardID).QueryRow(func(row pgx.Row) error {
		lb.Board, err = scanBoard(row, false, &lb.connectors)
		return nil
	})
	pre.queue(lock, boardID, reqs)
	if err := tx.SendBatch(ctx, lock).Close(); err != nil {
		return nil, err
	}
	return lb, err
}

// answerWithoutWrite answers a push that writes no row (done): a replay of
// an idempotency key with the version it recorded, a push whose timer
// action is refused with its error (writing nothing, not even its key),
// and a push that changes nothing with the board's version (keeping its
// key, so that a retry answers the same version and stays a no-op).
// Otherwise it answers what the push does to the board's timer.
func answerWithoutWrite(ctx context.Context, tx pgx.Tx, b *board.Board, in persist.PushInput, now time.Time) (res persist.Applied, timer persist.TimerChange, vote persist.VoteChange, done bool, err error) {
	if in.IdempotencyKey != "" {
		var v int64
		err := tx.QueryRow(ctx, "SELECT version FROM idempotency_keys WHERE board_id = $1 AND key = $2", b.ID, in.IdempotencyKey).Scan(&v)
		if err == nil {
			return persist.Applied{Version: v, Replayed: true}, timer, vote, true, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return persist.Applied{}, timer, vote, false, fmt.Errorf("read idempotency key: %w", err)
		}
	}
	if timer, err = persist.SettleTimer(b, in.Push, now); err != nil {
		return persist.Applied{Err: err}, timer, vote, true, nil
	}
	if vote, err = persist.SettleVote(b, in.Push, now, pgVotes{ctx: ctx, tx: tx, boardID: b.ID}); err != nil {
		if board.ErrorCode(err) == board.EINTERNAL {
			return persist.Applied{}, timer, vote, false, err
		}
		return persist.Applied{Err: err}, timer, vote, true, nil
	}
	if timer.Set || vote.Set {
		return persist.Applied{}, timer, vote, false, nil
	}
	nothing, err := changesNothing(ctx, tx, b.ID, in.Push)
	if err != nil || !nothing {
		return persist.Applied{}, timer, vote, false, err
	}
	// The version and updatedAt stay.
	if err := recordKey(ctx, tx, b.ID, in.IdempotencyKey, b.Version, now); err != nil {
		return persist.Applied{}, timer, vote, false, err
	}
	return persist.Applied{Version: b.Version}, timer, vote, true, nil
}

// changesNothing reports whether p would change nothing: no board patch, no
// upsert, and every ID it deletes is unknown or already deleted (as this
// transaction sees it, earlier pushes of the batch included).
func changesNothing(ctx context.Context, tx pgx.Tx, boardID string, p *board.Push) (bool, error) {
	if p.Board != nil || len(p.Notes.Upserted) > 0 || len(p.TrackerItems.Upserted) > 0 ||
		len(p.Frames.Upserted) > 0 || len(p.Connectors.Upserted) > 0 {
		return false, nil
	}
	if len(p.Notes.Deleted) == 0 && len(p.TrackerItems.Deleted) == 0 && len(p.Frames.Deleted) == 0 && len(p.Connectors.Deleted) == 0 {
		return true, nil
	}
	var live bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM board_rows WHERE board_id = $1 AND deleted_ns IS NULL
		AND ((kind = 'n' AND id = ANY($2)) OR (kind = 'i' AND id = ANY($3))
			OR (kind = 'f' AND id = ANY($4)) OR (kind = 'c' AND id = ANY($5))))`,
		boardID, nonNil(p.Notes.Deleted), nonNil(p.TrackerItems.Deleted), nonNil(p.Frames.Deleted), nonNil(p.Connectors.Deleted)).Scan(&live)
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

// applyOne writes one push that changes something, with its idempotency
// key, and returns what it changed and what its merges did. hist holds
// the stored states its rows with a baseVersion need (readHistory), read
// under the board's lock after every earlier write of the transaction, so
// that every node merges against the same states. The writes go in one
// pipelined batch (one round trip while the board's row lock is held):
// the version bump (UPDATE … RETURNING), the rows at the new version (each
// statement keeping the states it replaces as revisions), the deletions,
// the key, then whatever queueMore adds (the next push's reads). The new
// version is known before the bump answers, since this transaction holds
// the board's lock; the bump's answer is checked against it. A push whose
// merges overwrote part of a note then logs it in the same transaction.
func (s *Store) applyOne(ctx context.Context, tx pgx.Tx, b *lockedBoard, in persist.PushInput, now time.Time, timer persist.TimerChange, vote persist.VoteChange,
	hist map[historyKey]history, queueMore func(*pgx.Batch)) (*board.Changes, *rowmerge.Tally, error) {
	p, key := in.Push, in.IdempotencyKey
	stamp := now.Format(time.RFC3339Nano)
	v := b.Version + 1

	if err := settleRights(ctx, tx, b.ID, p); err != nil {
		return nil, nil, err
	}
	tally := &rowmerge.Tally{}
	notes, err := s.mergeNotes(p.Notes.Upserted, stamp, v, hist, tally)
	if err != nil {
		return nil, nil, err
	}
	items, err := mergeItems(p.TrackerItems.Upserted, stamp, v, hist, tally)
	if err != nil {
		return nil, nil, err
	}
	st, err := settleStructure(ctx, tx, b.ID, p, stamp, v, hist, tally, b.connectors > 0)
	if err != nil {
		return nil, nil, err
	}

	batch := &pgx.Batch{}
	var got int64
	if err := queueBump(batch, b.Board, p, stamp, timer, vote, &got); err != nil {
		return nil, nil, err
	}
	var counts rowCount
	queueCounts(batch, b.ID, notes, items, p, &counts)
	if err := queueUpsert(batch, b.ID, kindNote, v, now, notes, func(n *board.Note) string { return n.ID }); err != nil {
		return nil, nil, err
	}
	if err := queueUpsert(batch, b.ID, kindItem, v, now, items, func(it *board.TrackerItem) string { return it.ID }); err != nil {
		return nil, nil, err
	}
	deletedNotes, deletedItems := []string{}, []string{}
	queueDelete(batch, b.ID, kindNote, v, now, p.Notes.Deleted, &deletedNotes)
	queueDelete(batch, b.ID, kindItem, v, now, p.TrackerItems.Deleted, &deletedItems)
	if err := st.queue(batch, b.ID, p, v, now); err != nil {
		return nil, nil, err
	}
	queueKey(batch, b.ID, key, v, now)
	queueMore(batch)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, nil, err
	}
	if err := cmp.Or(counts.check(s.limits), st.counts.check(s.limits)); err != nil {
		return nil, nil, err
	}
	if got != v {
		// Only possible if something wrote the board without its lock.
		return nil, nil, fmt.Errorf("board %s moved to version %d, want %d", b.ID, got, v)
	}
	b.Version = v
	if timer.Set {
		b.Timer = timer.Timer
	}
	if err := settledVote(ctx, tx, b.Board, vote, now); err != nil {
		return nil, nil, err
	}
	if len(tally.Entries) > 0 {
		logged, err := appendLogTx(ctx, tx, b.ID, now, tally.Entries)
		if err != nil {
			return nil, nil, fmt.Errorf("log what a merge overwrote: %w", err)
		}
		if err := tally.Logged(logged); err != nil {
			return nil, nil, err
		}
	}

	ch := pushChanges(b, notes, deletedNotes, items, deletedItems)
	st.change(ch, b)
	return ch, tally, nil
}

// pushChanges is what a written push changed in its notes and tracker
// items, at b's new version. Rows upserted and then deleted in the same
// push end deleted: they leave the change's upserted lists.
func pushChanges(b *lockedBoard, notes []board.Note, deletedNotes []string, items []board.TrackerItem, deletedItems []string) *board.Changes {
	if len(deletedNotes) > 0 && len(notes) > 0 {
		notes = rowmerge.DropDeleted(notes, deletedNotes, func(n *board.Note) string { return n.ID })
	}
	if len(deletedItems) > 0 && len(items) > 0 {
		items = rowmerge.DropDeleted(items, deletedItems, func(it *board.TrackerItem) string { return it.ID })
	}
	return &board.Changes{
		Board:                 b.Header(),
		Notes:                 notes,
		DeletedNoteIDs:        deletedNotes,
		TrackerItems:          items,
		DeletedTrackerItemIDs: deletedItems,
		ServerVersion:         b.Version,
	}
}

// settleRights reads the live notes and frames p names, behind the
// board's lock and the batch's earlier writes, and settles p against them
// (board.SettleRights: locks, roles, createdBy). One round trip, only for
// a push with notes or frames.
func settleRights(ctx context.Context, tx pgx.Tx, boardID string, p *board.Push) error {
	noteIDs := make([]string, 0, len(p.Notes.Upserted)+len(p.Notes.Deleted))
	for i := range p.Notes.Upserted {
		noteIDs = append(noteIDs, p.Notes.Upserted[i].ID)
	}
	noteIDs = append(noteIDs, p.Notes.Deleted...)
	frameIDs := make([]string, 0, len(p.Frames.Upserted)+len(p.Frames.Deleted))
	for i := range p.Frames.Upserted {
		frameIDs = append(frameIDs, p.Frames.Upserted[i].ID)
	}
	frameIDs = append(frameIDs, p.Frames.Deleted...)
	notes, frames := map[string][]byte{}, map[string][]byte{}
	if len(noteIDs)+len(frameIDs) > 0 {
		rows, err := tx.Query(ctx, `SELECT kind, id, data FROM board_rows WHERE board_id = $1 AND deleted_ns IS NULL
			AND ((kind = 'n' AND id = ANY($2)) OR (kind = 'f' AND id = ANY($3)))`, boardID, noteIDs, frameIDs)
		if err != nil {
			return fmt.Errorf("read rows for locks and roles: %w", err)
		}
		for rows.Next() {
			var kind, id string
			var data []byte
			if err := rows.Scan(&kind, &id, &data); err != nil {
				rows.Close()
				return fmt.Errorf("read rows for locks and roles: %w", err)
			}
			if kind == kindNote {
				notes[id] = data
			} else {
				frames[id] = data
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read rows for locks and roles: %w", err)
		}
	}
	get := func(m map[string][]byte) func(string) ([]byte, error) {
		return func(id string) ([]byte, error) { return m[id], nil }
	}
	return board.SettleRights(p, rowmerge.StoredRows(get(notes), get(frames)))
}

// queueBump queues the version bump of a push (UPDATE … RETURNING the
// version into got) with what it changes in the board's own row: its
// name, its updatedAt (the push's, or stamp; a push that only acts on the
// timer keeps it) and its timer; then what it does to the board's vote
// (queueVote).
func queueBump(batch *pgx.Batch, b *board.Board, p *board.Push, stamp string, timer persist.TimerChange, vote persist.VoteChange, got *int64) error {
	updatedAt := &stamp
	if p.HeaderOnly() { // the timer and the vote are not the board's content
		updatedAt = nil
	}
	var name *string
	if p.Board != nil {
		name = &p.Board.Name
		if p.Board.UpdatedAt != "" {
			updatedAt = &p.Board.UpdatedAt
		}
	}
	timerJS, err := encodeJSONColumn(timer.Timer)
	if err != nil {
		return fmt.Errorf("encode timer: %w", err)
	}
	batch.Queue(`UPDATE boards SET version = version + 1, updated_at = COALESCE($2, updated_at), name = COALESCE($3, name),
		timer = CASE WHEN $4::boolean THEN $5::bytea ELSE timer END
		WHERE id = $1 RETURNING version, name, updated_at`, b.ID, updatedAt, name, timer.Set, timerJS).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(got, &b.Name, &b.UpdatedAt); err != nil {
			return fmt.Errorf("bump version: %w", err)
		}
		return nil
	})
	return queueVote(batch, b.ID, vote)
}

// mergeNotes merges the pushed notes (the last copy of an ID wins, at
// the place of its first) into the stored states hist holds, and returns
// them as they are written at version v; the tally collects what the
// merges did.
func (s *Store) mergeNotes(upserted []board.Note, stamp string, v int64, hist map[historyKey]history, tally *rowmerge.Tally) ([]board.Note, error) {
	notes := rowmerge.LastCopies(upserted, func(n *board.Note) string { return n.ID })
	for i, mine := range notes {
		if mine.UpdatedAt == "" {
			mine.UpdatedAt = stamp
		}
		h := hist[historyKey{kindNote, mine.ID}]
		res, err := rowmerge.Resolve(mine, mine.BaseVersion, h.cur, h.base, h.lastLive, board.MergeNote)
		if err != nil {
			return nil, fmt.Errorf("merge note %q: %w", mine.ID, err)
		}
		if err := tally.AddNote(res, s.renderNote); err != nil {
			return nil, fmt.Errorf("merge note %q: %w", mine.ID, err)
		}
		notes[i] = res.Row
		notes[i].Version, notes[i].DeletedAt, notes[i].BaseVersion = v, nil, 0
	}
	return notes, nil
}

// mergeItems is mergeNotes for tracker items.
func mergeItems(upserted []board.TrackerItem, stamp string, v int64, hist map[historyKey]history, tally *rowmerge.Tally) ([]board.TrackerItem, error) {
	items := rowmerge.LastCopies(upserted, func(it *board.TrackerItem) string { return it.ID })
	for i, mine := range items {
		if mine.UpdatedAt == "" {
			mine.UpdatedAt = stamp
		}
		h := hist[historyKey{kindItem, mine.ID}]
		res, err := rowmerge.Resolve(mine, mine.BaseVersion, h.cur, h.base, h.lastLive, board.MergeItem)
		if err != nil {
			return nil, fmt.Errorf("merge item %q: %w", mine.ID, err)
		}
		tally.AddItem(res)
		items[i] = res.Row
		items[i].Version, items[i].DeletedAt, items[i].BaseVersion = v, nil, 0
	}
	return items, nil
}

// historyKey names one row of a board.
type historyKey struct{ kind, id string }

// history is what rowmerge needs to know of one row (see rowmerge.Resolve).
type history struct {
	cur, base, lastLive *rowmerge.State
}

// historyRequest lists the rows of one push that carry a baseVersion
// (their last copies), as columns for readHistory.
type historyRequest struct {
	kinds, ids []string
	bases      []int64
}

func newHistoryRequest(p *board.Push) historyRequest {
	var r historyRequest
	for _, n := range rowmerge.LastCopies(p.Notes.Upserted, func(n *board.Note) string { return n.ID }) {
		if n.BaseVersion >= 1 {
			r.kinds, r.ids, r.bases = append(r.kinds, kindNote), append(r.ids, n.ID), append(r.bases, n.BaseVersion)
		}
	}
	for _, it := range rowmerge.LastCopies(p.TrackerItems.Upserted, func(it *board.TrackerItem) string { return it.ID }) {
		if it.BaseVersion >= 1 {
			r.kinds, r.ids, r.bases = append(r.kinds, kindItem), append(r.ids, it.ID), append(r.bases, it.BaseVersion)
		}
	}
	for _, f := range rowmerge.LastCopies(p.Frames.Upserted, func(f *board.Frame) string { return f.ID }) {
		if f.BaseVersion >= 1 {
			r.kinds, r.ids, r.bases = append(r.kinds, kindFrame), append(r.ids, f.ID), append(r.bases, f.BaseVersion)
		}
	}
	for _, c := range rowmerge.LastCopies(p.Connectors.Upserted, func(c *board.Connector) string { return c.ID }) {
		if c.BaseVersion >= 1 {
			r.kinds, r.ids, r.bases = append(r.kinds, kindConnector), append(r.ids, c.ID), append(r.bases, c.BaseVersion)
		}
	}
	return r
}

func (r historyRequest) any() bool { return len(r.ids) > 0 }

// historySQL reads the stored states the rows of a historyRequest need:
// the current row, and when it changed since the base, the base (the
// newest revision at or below baseVersion) and, for a tombstone, the last
// live state (the newest revision below it). Rows that do not exist are
// not answered.
//
// Every lookup is a LATERAL subquery on the primary key (LIMIT 1 keeps the
// planner from flattening it into a join), so the plan can only be index
// probes for each row asked, whatever the statistics say: the push runs
// with generic plans (pushWrite), and as a plain join the generic plan of
// a young database read every row of the board and hashed them (a bitmap
// scan of board_rows on board_id alone, 0.1 ms at 1,000 row versions, and
// growing with the board). The base is first looked up at baseVersion
// itself, where clients' bases are (the row's version as they pulled it):
// a probe that stops at the one key, where the backward search for the
// newest at or below it (done only when that finds nothing) reads every
// revision of the row on the index page before deciding, on PostgreSQL 15.
const historySQL = `SELECT u.kind, u.id, r.version, r.data, coalesce(be.version, bv.version), coalesce(be.data, bv.data), lv.version, lv.data
	FROM unnest($2::text[], $3::text[], $4::bigint[]) AS u(kind, id, base)
	CROSS JOIN LATERAL (SELECT r.version, r.data, r.deleted_ns FROM board_rows r
		WHERE r.board_id = $1 AND r.kind = u.kind AND r.id = u.id LIMIT 1) r
	LEFT JOIN LATERAL (SELECT v.version, v.data FROM board_revisions v
		WHERE r.version > u.base AND v.board_id = $1 AND v.kind = u.kind AND v.id = u.id AND v.version = u.base LIMIT 1) be ON true
	LEFT JOIN LATERAL (SELECT v.version, v.data FROM board_revisions v
		WHERE r.version > u.base AND be.version IS NULL AND v.board_id = $1 AND v.kind = u.kind AND v.id = u.id AND v.version <= u.base
		ORDER BY v.version DESC LIMIT 1) bv ON true
	LEFT JOIN LATERAL (SELECT v.version, v.data FROM board_revisions v
		WHERE r.version > u.base AND r.deleted_ns IS NOT NULL
			AND v.board_id = $1 AND v.kind = u.kind AND v.id = u.id AND v.version < r.version
		ORDER BY v.version DESC LIMIT 1) lv ON true`

// scanHistory collects historySQL's answer.
func scanHistory(rows pgx.Rows) (map[historyKey]history, error) {
	out := map[historyKey]history{}
	var k historyKey
	var curVersion int64
	var curData, baseData, lastData []byte
	var baseVersion, lastVersion *int64
	_, err := pgx.ForEachRow(rows, []any{&k.kind, &k.id, &curVersion, &curData, &baseVersion, &baseData, &lastVersion, &lastData}, func() error {
		h := history{cur: &rowmerge.State{Version: curVersion, Data: curData}}
		if baseVersion != nil {
			h.base = &rowmerge.State{Version: *baseVersion, Data: baseData}
		}
		if lastVersion != nil {
			h.lastLive = &rowmerge.State{Version: *lastVersion, Data: lastData}
		}
		out[k] = h
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read history of merged rows: %w", err)
	}
	return out, nil
}

// historyOneSQL reads the history of one row in the common case, with a
// plan a third the size of historySQL's (two probes of primary keys, no
// unnest, no LATERAL), which PostgreSQL sets up and tears down for
// noticeably less (about 10 µs of server CPU a merged push): the current
// row, and its revision at baseVersion itself when it changed since. Its
// answer is all rowmerge needs unless the row changed since and that
// revision is missing (the base lies below it, or is gone) or the row is
// a tombstone (its last live state is needed): then historySQL reads it
// (oneComplete).
const historyOneSQL = `SELECT r.version, r.data, v.version, v.data FROM board_rows r
	LEFT JOIN board_revisions v ON r.version > $4 AND v.board_id = $1 AND v.kind = $2 AND v.id = $3 AND v.version = $4
	WHERE r.board_id = $1 AND r.kind = $2 AND r.id = $3`

// scanHistoryOne collects historyOneSQL's answer to req (of one row), and
// whether it is complete.
func scanHistoryOne(rows pgx.Rows, req historyRequest) (map[historyKey]history, bool, error) {
	out := map[historyKey]history{}
	var curVersion int64
	var curData, baseData []byte
	var baseVersion *int64
	k := historyKey{req.kinds[0], req.ids[0]}
	_, err := pgx.ForEachRow(rows, []any{&curVersion, &curData, &baseVersion, &baseData}, func() error {
		h := history{cur: &rowmerge.State{Version: curVersion, Data: curData}}
		if baseVersion != nil {
			h.base = &rowmerge.State{Version: *baseVersion, Data: baseData}
		}
		out[k] = h
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read history of merged rows: %w", err)
	}
	h := out[k]
	complete := !rowmerge.NeedsBase(req.bases[0], h.cur) || h.base != nil && h.cur.Live()
	return out, complete, nil
}

// readHistory reads the history of req's rows in a round trip of its own
// (historySQL: this is the path of a history that was not read ahead, or
// whose quick read was not complete).
func readHistory(ctx context.Context, tx pgx.Tx, boardID string, req historyRequest) (map[historyKey]history, error) {
	rows, err := tx.Query(ctx, historySQL, boardID, req.kinds, req.ids, req.bases)
	if err != nil {
		return nil, fmt.Errorf("read history of merged rows: %w", err)
	}
	return scanHistory(rows)
}

// prefetch is the history of one push read ahead, in the round trip
// before it: valid only while nothing is written between.
type prefetch struct {
	push int // the push it is for; -1 for none
	hist map[historyKey]history
	read bool // read, and complete
}

// queue adds the read of its push's history to batch, when the push needs
// one: historyOneSQL for a push with one such row, historySQL for more.
func (p *prefetch) queue(batch *pgx.Batch, boardID string, reqs []historyRequest) {
	if p.push < 0 || !reqs[p.push].any() {
		return
	}
	req := reqs[p.push]
	if len(req.ids) == 1 {
		batch.Queue(historyOneSQL, boardID, req.kinds[0], req.ids[0], req.bases[0]).Query(func(rows pgx.Rows) error {
			h, complete, err := scanHistoryOne(rows, req)
			p.hist, p.read = h, err == nil && complete
			return err
		})
		return
	}
	batch.Queue(historySQL, boardID, req.kinds, req.ids, req.bases).Query(func(rows pgx.Rows) error {
		h, err := scanHistory(rows)
		p.hist, p.read = h, err == nil
		return err
	})
}

// take returns the history read ahead for push i, if it was read and is
// complete.
func (p *prefetch) take(i int) (map[historyKey]history, bool) {
	if p.push != i || !p.read {
		return nil, false
	}
	return p.hist, true
}

// unparkSQL is the part of a statement that writes revisions (from its CTE
// old: id, version) which puts the oldest revision of each such row back
// in the sweep's index if a sweep parked it (see PruneRevisions): with one
// more revision it may now be past the count. The oldest revision of each
// row is found by one probe of the primary key (LATERAL … LIMIT 1), and
// the UPDATE runs only when one of them is parked (a one-time filter: most
// often none is). As a join of old with board_revisions, the generic plan
// of a young database hashed every revision of the board's rows of that
// kind, filtering on parked, on every push that overwrote a row. (IDs are
// compared in the column's collation, "C", so that the index can take
// them.)
const unparkSQL = `parked AS (
		SELECT old.id COLLATE "C" AS id FROM old CROSS JOIN LATERAL (SELECT w.parked FROM board_revisions w
			WHERE w.board_id = $1 AND w.kind = $2 AND w.id = old.id ORDER BY w.version LIMIT 1) f
		WHERE old.version < $3 AND f.parked
	),
	unparked AS (
		UPDATE board_revisions v SET parked = false
		WHERE EXISTS (SELECT FROM parked) AND v.board_id = $1 AND v.kind = $2 AND v.id = ANY (ARRAY(SELECT id FROM parked))
			AND v.parked
			AND v.version = (SELECT min(w.version) FROM board_revisions w WHERE w.board_id = $1 AND w.kind = $2 AND w.id = v.id)
	)`

// queueUpsert queues the write of rows (unique IDs) live at version, in one
// statement, which keeps the states it replaces as revisions superseded
// now. A state this push wrote itself (at version) was never committed and
// is not kept.
func queueUpsert[T any](batch *pgx.Batch, boardID, kind string, version int64, now time.Time, rows []T, id func(*T) string) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	data := make([][]byte, len(rows))
	for i := range rows {
		ids[i] = id(&rows[i])
		js, err := rowmerge.Encode(&rows[i])
		if err != nil {
			return fmt.Errorf("encode row %q: %w", ids[i], err)
		}
		data[i] = js
	}
	// Every part of the statement sees the table as it was before it, so
	// old holds the states the INSERT replaces: one probe of the primary
	// key per row (see historySQL for why LATERAL … LIMIT 1; the version
	// test stays outside, or the planner may prefer board_rows_version's
	// index and read the whole board).
	batch.Queue(`WITH u AS (SELECT * FROM unnest($4::text[], $5::bytea[]) AS u(id, data)),
		old AS (
			SELECT u.id, r.version, r.data FROM u CROSS JOIN LATERAL (SELECT r.version, r.data FROM board_rows r
				WHERE r.board_id = $1 AND r.kind = $2 AND r.id = u.id LIMIT 1) r
			WHERE r.version < $3
		),
		kept AS (
			INSERT INTO board_revisions (board_id, kind, id, version, data, superseded_ns)
			SELECT $1, $2, id, version, data, $6 FROM old
		),
		`+unparkSQL+`
		INSERT INTO board_rows (board_id, kind, id, version, data, deleted_ns)
		SELECT $1, $2, u.id, $3, u.data, NULL FROM u
		ON CONFLICT (board_id, kind, id) DO UPDATE SET version = excluded.version, data = excluded.data, deleted_ns = NULL`,
		boardID, kind, version, ids, data, nanos(now)).Exec(func(pgconn.CommandTag) error { return nil })
	return nil
}

// queueDelete queues turning the live rows among ids into tombstones at
// version, keeping each live state as a revision (unless this push wrote
// it); *out receives the IDs it deleted, in the order of ids (unknown or
// already deleted IDs are skipped). The UPDATE picks its rows with old's
// condition (the same rows: one snapshot) rather than joining old, for an
// index probe per ID rather than a plan that may hash the board's rows.
func queueDelete(batch *pgx.Batch, boardID, kind string, version int64, now time.Time, ids []string, out *[]string) {
	if len(ids) == 0 {
		return
	}
	batch.Queue(`WITH old AS (
			SELECT id, version, data FROM board_rows
			WHERE board_id = $1 AND kind = $2 AND id = ANY($5) AND deleted_ns IS NULL
		),
		kept AS (
			INSERT INTO board_revisions (board_id, kind, id, version, data, superseded_ns)
			SELECT $1, $2, id, version, data, $4 FROM old WHERE version < $3
		),
		`+unparkSQL+`
		UPDATE board_rows r SET version = $3, data = NULL, deleted_ns = $4
		WHERE r.board_id = $1 AND r.kind = $2 AND r.id = ANY($5) AND r.deleted_ns IS NULL RETURNING r.id`,
		boardID, kind, version, nanos(now), ids).Query(func(rows pgx.Rows) error {
		gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("delete rows: %w", err)
		}
		set := make(map[string]bool, len(gone))
		for _, id := range gone {
			set[id] = true
		}
		for _, id := range ids {
			if set[id] {
				*out = append(*out, id)
				delete(set, id)
			}
		}
		return nil
	})
}

// queueKey queues remembering that key (none when "") produced version.
func queueKey(batch *pgx.Batch, boardID, key string, version int64, now time.Time) {
	if key == "" {
		return
	}
	batch.Queue(`INSERT INTO idempotency_keys (board_id, key, version, recorded_ns) VALUES ($1, $2, $3, $4)
		ON CONFLICT (board_id, key) DO UPDATE SET version = excluded.version, recorded_ns = excluded.recorded_ns`,
		boardID, key, version, nanos(now)).Exec(func(pgconn.CommandTag) error { return nil })
}

// ChangesSince answers a pull from one snapshot (see persist.SyncStore).
func (s *Store) ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error) {
	return persist.CollectChanges(ctx, s, boardID, since)
}

// scanPage is how many rows one FETCH of a streamed pull reads.
const scanPage = 500

// scanTimeout bounds a streamed pull, which lasts as long as its client
// takes to read the answer (cmd/corkboard's WriteTimeout is as long).
const scanTimeout = 2 * time.Minute

// ScanChangesSince streams a pull's answer from one REPEATABLE READ,
// read-only transaction through a cursor, scanPage rows at a time (see
// persist.SyncStore). Each FETCH is a statement of its own, so
// statement_timeout bounds one page, and idle_in_transaction_session_timeout
// the time fn takes over one page's rows.
func (s *Store) ScanChangesSince(ctx context.Context, boardID string, since int64, fn func(p *persist.ChangePart) error) error {
	if since < 0 {
		return board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	ctx, cancel := withDeadline(ctx, max(s.timeout, scanTimeout))
	defer cancel()
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		var b board.Board
		var horizon int64
		var phases, timer, vote []byte
		err := tx.QueryRow(ctx, "SELECT id, name, version, updated_at, horizon, phases, timer, vote FROM boards WHERE id = $1", boardID).
			Scan(&b.ID, &b.Name, &b.Version, &b.UpdatedAt, &horizon, &phases, &timer, &vote)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("Board")
		} else if err != nil {
			return err
		}
		if b.Timer, err = decodeJSONColumn[board.Timer](timer); err != nil {
			return fmt.Errorf("decode timer of board %s: %w", b.ID, err)
		}
		if b.Vote, err = decodeJSONColumn[board.Vote](vote); err != nil {
			return fmt.Errorf("decode vote of board %s: %w", b.ID, err)
		}
		if phases != nil {
			b.Phases = new(board.Phases)
			if err := json.Unmarshal(phases, b.Phases); err != nil {
				return fmt.Errorf("decode phases of board %s: %w", b.ID, err)
			}
		}
		// A client ahead of the board or behind the pruned tombstones
		// cannot be patched: it gets everything and replaces its copy.
		full := since == 0 || since > b.Version || since < horizon
		part := persist.ChangePart{Kind: persist.PartHeader, Header: persist.ChangesHeader{
			Board: b.Header(), ServerVersion: b.Version, Reset: full && since != 0 && since != b.Version, Phases: b.Phases}}
		if err := fn(&part); err != nil || since == b.Version {
			return err
		}
		if full {
			_, err = tx.Exec(ctx, `DECLARE pull_rows NO SCROLL CURSOR FOR SELECT kind, id, data FROM board_rows
				WHERE board_id = $1 AND deleted_ns IS NULL ORDER BY kind DESC, id`, boardID)
		} else {
			// Live rows before deleted IDs within a kind: the answer's order.
			_, err = tx.Exec(ctx, `DECLARE pull_rows NO SCROLL CURSOR FOR SELECT kind, id, data FROM board_rows
				WHERE board_id = $1 AND version > $2 ORDER BY kind DESC, data IS NULL, version, id`, boardID, since)
		}
		if err != nil {
			return err
		}
		var kind, id string
		var data []byte
		for {
			rows, err := tx.Query(ctx, "FETCH "+strconv.Itoa(scanPage)+" FROM pull_rows")
			if err != nil {
				return err
			}
			n := 0
			_, err = pgx.ForEachRow(rows, []any{&kind, &id, &data}, func() error {
				n++
				return emitRow(kind, id, data, fn)
			})
			if err != nil || n < scanPage {
				return err
			}
		}
	})
	return wrap(err, "changes of board %s since %d", boardID, since)
}

// emitRow gives fn one row of a pull: a note, an item, or a deleted ID.
func emitRow(kind, id string, data []byte, fn func(p *persist.ChangePart) error) error {
	k := partKinds[kind]
	if data == nil {
		return fn(&persist.ChangePart{Kind: k.dead, ID: id})
	}
	// A live row goes as the JSON stored (persist.ChangePart.Raw): the
	// reader decodes it only if it needs the value.
	return fn(&persist.ChangePart{Kind: k.live, Raw: data})
}

// partKinds gives a board_rows kind's parts, live and deleted.
var partKinds = map[string]struct{ live, dead persist.PartKind }{
	kindNote:      {persist.PartNote, persist.PartDeletedNote},
	kindItem:      {persist.PartItem, persist.PartDeletedItem},
	kindFrame:     {persist.PartFrame, persist.PartDeletedFrame},
	kindConnector: {persist.PartConnector, persist.PartDeletedConnector},
}

func addRow[T any](list *[]T, data []byte) error {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("decode row: %w", err)
	}
	*list = append(*list, v)
	return nil
}

// liveRows appends every live note, item, frame and connector of the
// board to st, in ID order.
func liveRows(ctx context.Context, tx pgx.Tx, boardID string, st *board.State) error {
	rows, err := tx.Query(ctx, `SELECT kind, data FROM board_rows WHERE board_id = $1 AND deleted_ns IS NULL
		ORDER BY kind DESC, id`, boardID)
	if err != nil {
		return err
	}
	var kind string
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&kind, &data}, func() error {
		switch kind {
		case kindNote:
			return addRow(&st.Notes, data)
		case kindFrame:
			return addRow(&st.Frames, data)
		case kindConnector:
			return addRow(&st.Connectors, data)
		}
		return addRow(&st.TrackerItems, data)
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
		return liveRows(ctx, tx, boardID, st)
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

// PruneRevisions forgets the revisions superseded before cutoff, except the
// newest keep of each row (see persist.SyncStore). Each step reads at most
// SweepBatch due revisions from board_revisions_due (oldest first), locks
// their boards (in ID order, as a push takes one: no deadlock with pushes
// or another node's sweep) so that no push adds a revision to their rows
// meanwhile, and then, in one statement per step, ranks every revision of
// those rows, deletes the old ones past keep and parks the old ones within
// it: a parked revision leaves the index until its row gets a newer
// revision (the push unparks the row's oldest), since only that can move
// it past the count.
func (s *Store) PruneRevisions(ctx context.Context, cutoff time.Time, keep int) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	keep = max(keep, 0)
	end := nanos(cutoff)
	total := 0
	for {
		seen, n := 0, 0
		err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
			seen, n = 0, 0
			rows, err := tx.Query(ctx, `SELECT board_id, kind, id FROM board_revisions
				WHERE NOT parked AND superseded_ns < $1 ORDER BY superseded_ns LIMIT $2`, end, SweepBatch)
			if err != nil {
				return err
			}
			var boards, kinds, ids []string
			var b, k, id string
			if _, err := pgx.ForEachRow(rows, []any{&b, &k, &id}, func() error {
				boards, kinds, ids = append(boards, b), append(kinds, k), append(ids, id)
				return nil
			}); err != nil {
				return err
			}
			seen = len(ids)
			if seen == 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, `SELECT 1 FROM boards WHERE id = ANY($1) ORDER BY id FOR UPDATE`, boards); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `WITH c AS (
					SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[]) AS c(board_id, kind, id)
				),
				ranked AS (
					SELECT v.board_id, v.kind, v.id, v.version, v.superseded_ns,
						row_number() OVER (PARTITION BY v.board_id, v.kind, v.id ORDER BY v.version DESC) AS rank
					FROM board_revisions v JOIN c ON v.board_id = c.board_id AND v.kind = c.kind AND v.id = c.id
				),
				gone AS (
					DELETE FROM board_revisions v USING ranked r
					WHERE v.board_id = r.board_id AND v.kind = r.kind AND v.id = r.id AND v.version = r.version
						AND r.rank > $5 AND r.superseded_ns < $4
					RETURNING 1
				),
				parked AS (
					UPDATE board_revisions v SET parked = true FROM ranked r
					WHERE v.board_id = r.board_id AND v.kind = r.kind AND v.id = r.id AND v.version = r.version
						AND r.rank <= $5 AND r.superseded_ns < $4 AND NOT v.parked
				)
				SELECT count(*) FROM gone`, boards, kinds, ids, end, keep).Scan(&n)
		})
		if err != nil {
			return total, wrap(err, "prune revisions")
		}
		total += n
		if seen < SweepBatch {
			return total, nil
		}
	}
}
