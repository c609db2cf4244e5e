package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"corkboard/board"
	"corkboard/persist"
)

var _ persist.ChangelogStore = (*Store)(nil)

// boardExists answers ENOTFOUND for an unclaimed board; lock takes the
// board's row lock, which orders the changelog writes of one board.
func boardExists(ctx context.Context, q querier, boardID string, lock bool) error {
	sql := "SELECT 1 FROM boards WHERE id = $1"
	if lock {
		sql += " FOR UPDATE"
	}
	var one int
	err := q.QueryRow(ctx, sql, boardID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("Board")
	}
	return err
}

// lockChangelog creates the board's changelog state when needed and locks
// it for the rest of the transaction, returning the last stamp handed out.
// The state's row lock (not the board's) orders changelog writers, so they
// never wait for a push.
func lockChangelog(ctx context.Context, tx pgx.Tx, boardID string) (string, error) {
	if err := boardExists(ctx, tx, boardID, false); err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO changelog_state (board_id) VALUES ($1) ON CONFLICT (board_id) DO NOTHING", boardID); err != nil {
		return "", err
	}
	var stamp string
	err := tx.QueryRow(ctx, "SELECT stamp FROM changelog_state WHERE board_id = $1 FOR UPDATE", boardID).Scan(&stamp)
	return stamp, err
}

// nextStamp hands out the board's next stamp after last: now, or one
// nanosecond after last when the clock has not moved past it.
func nextStamp(last string, now time.Time) string {
	t := now.UTC()
	if l, ok := persist.ParseStamp(last); ok && !t.After(l) {
		t = l.Add(time.Nanosecond)
	}
	return persist.Stamp(t)
}

// putCurrent stores cur as current.md unless the stored one shows a newer
// version (a slower writer must not roll it back).
func putCurrent(ctx context.Context, tx pgx.Tx, boardID string, cur *persist.RenderedBoard) error {
	phases, err := json.Marshal(cur.Phases)
	if err != nil {
		return fmt.Errorf("encode phases: %w", err)
	}
	md := cur.Markdown
	if md == nil {
		md = []byte{}
	}
	_, err = tx.Exec(ctx, `UPDATE changelog_state SET current_md = $2, current_version = $3, current_phases = $4
		WHERE board_id = $1 AND (current_version IS NULL OR current_version <= $3)`, boardID, md, cur.Version, phases)
	return err
}

// AppendLog stores entries and refreshes current.md in one transaction (see
// persist.ChangelogStore).
func (s *Store) AppendLog(ctx context.Context, boardID string, entries []persist.NewLogEntry, current *persist.RenderedBoard) ([]persist.LogEntry, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var out []persist.LogEntry
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		var err error
		if out, err = appendLogTx(ctx, tx, boardID, s.now(), entries); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pruneLogSQL, boardID, s.limits.WithDefaults().ChangelogBytesPerBoard, persist.MaxPruneScan); err != nil {
			return fmt.Errorf("prune changelog: %w", err)
		}
		if current != nil {
			return putCurrent(ctx, tx, boardID, current)
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "append %d changelog entries to board %s", len(entries), boardID)
	}
	return out, nil
}

// appendLogTx stores entries in the board's changelog inside tx, stamped
// from now: AppendLog's writing of entries (the changelog state's lock and
// stamps, the keys, one INSERT), which a push shares when it logs what a
// merge overwrote. It returns the stored entries without content;
// ENOTFOUND for an unclaimed board.
func appendLogTx(ctx context.Context, tx pgx.Tx, boardID string, now time.Time, entries []persist.NewLogEntry) ([]persist.LogEntry, error) {
	out := make([]persist.LogEntry, 0, len(entries))
	stamp, err := lockChangelog(ctx, tx, boardID)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(entries))
	notes := make([]string, len(entries))
	actions := make([]string, len(entries))
	stamps := make([]string, len(entries))
	contents := make([][]byte, len(entries))
	for i, e := range entries {
		stamp = nextStamp(stamp, now)
		keys[i] = persist.LogKeyPrefix + stamp + "-" + persist.LogKeyID(e.NoteID)
		notes[i], actions[i], stamps[i], contents[i] = e.NoteID, e.Action, stamp, e.Content
		if contents[i] == nil {
			contents[i] = []byte{}
		}
		out = append(out, persist.LogEntry{Key: keys[i], NoteID: e.NoteID, Action: e.Action, Timestamp: stamp})
	}
	if len(entries) == 0 {
		return out, nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO changelog_entries (board_id, key, note_id, action, stamp, content)
		SELECT $1, u.key, u.note_id, u.action, u.stamp, u.content
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[]) AS u(key, note_id, action, stamp, content)`,
		boardID, keys, notes, actions, stamps, contents); err != nil {
		return nil, err
	}
	var n int64
	for _, c := range contents {
		n += int64(len(c))
	}
	if _, err := tx.Exec(ctx, "UPDATE changelog_state SET stamp = $2, log_bytes = log_bytes + $3 WHERE board_id = $1", boardID, stamp, n); err != nil {
		return nil, err
	}
	return out, nil
}

// logKeyBound is the key that log keys recorded strictly before before sort
// below: past every log key when before is nil.
func logKeyBound(before *time.Time) string {
	switch {
	case before == nil, before.UTC().Year() > 9999:
		return "log0" // '0' follows '/': after every "log/…" key
	case before.UTC().Year() < 0:
		return persist.LogKeyPrefix
	}
	return persist.LogKeyPrefix + persist.Stamp(*before)
}

// ListLog answers q (see persist.ChangelogStore), newest first.
func (s *Store) ListLog(ctx context.Context, boardID string, q persist.LogQuery) ([]persist.LogEntry, error) {
	if q.Limit <= 0 {
		return nil, board.FieldErrorf("limit", "limit must be a positive integer.")
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := []persist.LogEntry{}
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		if err := boardExists(ctx, tx, boardID, false); err != nil {
			return err
		}
		sql := "SELECT key, note_id, action, stamp FROM changelog_entries WHERE board_id = $1 AND key < $2"
		args := []any{boardID, logKeyBound(q.Before)}
		if q.NoteID != "" {
			args = append(args, q.NoteID)
			sql += fmt.Sprintf(" AND note_id = $%d", len(args))
		}
		if q.Action != "" {
			args = append(args, q.Action)
			sql += fmt.Sprintf(" AND action = $%d", len(args))
		}
		args = append(args, q.Limit)
		sql += fmt.Sprintf(" ORDER BY key DESC LIMIT $%d", len(args))
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		var e persist.LogEntry
		_, err = pgx.ForEachRow(rows, []any{&e.Key, &e.NoteID, &e.Action, &e.Timestamp}, func() error {
			out = append(out, e)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, wrap(err, "list changelog of board %s", boardID)
	}
	return out, nil
}

// readEntry reads one entry with its content by the query's condition.
func (s *Store) readEntry(ctx context.Context, boardID, cond string, arg string) (*persist.LogEntry, error) {
	var e *persist.LogEntry
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		if err := boardExists(ctx, tx, boardID, false); err != nil {
			return err
		}
		var x persist.LogEntry
		err := tx.QueryRow(ctx, "SELECT key, note_id, action, stamp, content FROM changelog_entries WHERE board_id = $1 AND "+cond, boardID, arg).
			Scan(&x.Key, &x.NoteID, &x.Action, &x.Timestamp, &x.Content)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("Changelog entry")
		} else if err != nil {
			return err
		}
		e = &x
		return nil
	})
	return e, err
}

// FindLogEntry returns one entry with its content (see persist.ChangelogStore).
func (s *Store) FindLogEntry(ctx context.Context, boardID, key string) (*persist.LogEntry, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	e, err := s.readEntry(ctx, boardID, "key = $2", key)
	if err != nil {
		return nil, wrap(err, "read changelog entry of board %s", boardID)
	}
	return e, nil
}

// LatestNoteEntry returns the newest entry about noteID (see persist.ChangelogStore).
func (s *Store) LatestNoteEntry(ctx context.Context, boardID, noteID string) (*persist.LogEntry, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if noteID == "" {
		// Entries without a note (renames) are not about any note.
		if err := boardExists(ctx, s.pool, boardID, false); err != nil {
			return nil, wrap(err, "read latest changelog entry of board %s", boardID)
		}
		return nil, notFound("Changelog entry")
	}
	e, err := s.readEntry(ctx, boardID, "note_id = $2 ORDER BY key DESC LIMIT 1", noteID)
	if err != nil {
		return nil, wrap(err, "read latest changelog entry of note %q on board %s", noteID, boardID)
	}
	return e, nil
}

// currentSnapshot reads current.md (unless withMD is false) and whether it
// shows the board as it is: same version and phases.
func (s *Store) currentSnapshot(ctx context.Context, boardID string, withMD bool) ([]byte, bool, error) {
	var md []byte
	fresh := false
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		var version int64
		var phases, curMD, curPhases []byte
		var curVersion *int64
		err := tx.QueryRow(ctx, `SELECT b.version, b.phases, c.current_md, c.current_version, c.current_phases
			FROM boards b LEFT JOIN changelog_state c ON c.board_id = b.id WHERE b.id = $1`, boardID).
			Scan(&version, &phases, &curMD, &curVersion, &curPhases)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("Board")
		} else if err != nil {
			return err
		}
		if curMD == nil || curVersion == nil || *curVersion != version {
			if withMD {
				md = curMD
			}
			return nil
		}
		// Phases compare as their JSON, as the bbolt store does; a board
		// without phases is "null".
		var ph *board.Phases
		if phases != nil {
			ph = new(board.Phases)
			if err := json.Unmarshal(phases, ph); err != nil {
				return fmt.Errorf("decode phases: %w", err)
			}
		}
		want, err := json.Marshal(ph)
		if err != nil {
			return fmt.Errorf("encode phases: %w", err)
		}
		fresh = bytes.Equal(want, curPhases)
		if withMD {
			md = curMD
		}
		return nil
	})
	return md, fresh, err
}

// CurrentSnapshot returns current.md and whether it is fresh (see persist.ChangelogStore).
func (s *Store) CurrentSnapshot(ctx context.Context, boardID string) ([]byte, bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	md, fresh, err := s.currentSnapshot(ctx, boardID, true)
	if err != nil {
		return nil, false, wrap(err, "read current snapshot of board %s", boardID)
	}
	return md, fresh, nil
}

// CurrentSnapshotFresh reports whether current.md shows the board as it is
// (see persist.ChangelogStore).
func (s *Store) CurrentSnapshotFresh(ctx context.Context, boardID string) (bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, fresh, err := s.currentSnapshot(ctx, boardID, false)
	if err != nil {
		return false, wrap(err, "read current snapshot of board %s", boardID)
	}
	return fresh, nil
}

// PutSnapshot stores a point-in-time snapshot and prunes old ones (see
// persist.ChangelogStore).
func (s *Store) PutSnapshot(ctx context.Context, boardID string, snap persist.RenderedBoard, keep int) (persist.SnapshotInfo, int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var info persist.SnapshotInfo
	pruned := 0
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		pruned = 0
		last, err := lockChangelog(ctx, tx, boardID)
		if err != nil {
			return err
		}
		md := snap.Markdown
		if md == nil {
			md = []byte{}
		}
		// The same board as the newest snapshot keeps no second copy. The
		// database compares digests, so the Markdown is not sent twice.
		sum := sha256.Sum256(md)
		var newest string
		var same bool
		err = tx.QueryRow(ctx, "SELECT key, sha256(markdown) = $2 FROM snapshots WHERE board_id = $1 ORDER BY key DESC LIMIT 1", boardID, sum[:]).Scan(&newest, &same)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("compare with the newest snapshot: %w", err)
		}
		if same {
			info = persist.SnapshotInfo{Key: newest, Timestamp: persist.SnapshotKeyStamp(newest), Existing: true}
			return nil
		}
		stamp := nextStamp(last, s.now())
		info = persist.SnapshotInfo{Key: persist.SnapshotKeyPrefix + stamp + persist.SnapshotKeySuffix, Timestamp: stamp}
		if _, err := tx.Exec(ctx, "INSERT INTO snapshots (board_id, key, markdown) VALUES ($1, $2, $3)", boardID, info.Key, md); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE changelog_state SET stamp = $2, snapshot_version = $3 WHERE board_id = $1", boardID, stamp, snap.Version); err != nil {
			return err
		}
		if err := putCurrent(ctx, tx, boardID, &snap); err != nil {
			return err
		}
		if keep <= 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, `DELETE FROM snapshots WHERE board_id = $1 AND key IN (
			SELECT key FROM snapshots WHERE board_id = $1 ORDER BY key DESC OFFSET $2)`, boardID, keep)
		pruned = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return persist.SnapshotInfo{}, 0, wrap(err, "store snapshot of board %s", boardID)
	}
	return info, pruned, nil
}

// ListSnapshots lists point-in-time snapshots, newest first (see persist.ChangelogStore).
func (s *Store) ListSnapshots(ctx context.Context, boardID string) ([]persist.SnapshotInfo, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := []persist.SnapshotInfo{}
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		if err := boardExists(ctx, tx, boardID, false); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT key FROM snapshots WHERE board_id = $1 ORDER BY key DESC", boardID)
		if err != nil {
			return err
		}
		var key string
		_, err = pgx.ForEachRow(rows, []any{&key}, func() error {
			stamp := strings.TrimSuffix(strings.TrimPrefix(key, persist.SnapshotKeyPrefix), persist.SnapshotKeySuffix)
			out = append(out, persist.SnapshotInfo{Key: key, Timestamp: stamp})
			return nil
		})
		return err
	})
	if err != nil {
		return nil, wrap(err, "list snapshots of board %s", boardID)
	}
	return out, nil
}

// FindSnapshot returns a point-in-time snapshot (see persist.ChangelogStore).
func (s *Store) FindSnapshot(ctx context.Context, boardID, key string) ([]byte, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var md []byte
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		if err := boardExists(ctx, tx, boardID, false); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, "SELECT markdown FROM snapshots WHERE board_id = $1 AND key = $2", boardID, key).Scan(&md)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("Snapshot")
		}
		return err
	})
	if err != nil {
		return nil, wrap(err, "read snapshot of board %s", boardID)
	}
	return md, nil
}

// BoardsToSnapshot lists boards changed since their last snapshot (see
// persist.ChangelogStore).
func (s *Store) BoardsToSnapshot(ctx context.Context) ([]string, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT b.id FROM boards b LEFT JOIN changelog_state c ON c.board_id = b.id
		WHERE b.version <> COALESCE(c.snapshot_version, 0) ORDER BY b.id COLLATE "C"`)
	if err != nil {
		return nil, wrap(err, "list boards to snapshot")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap(err, "list boards to snapshot")
	}
	return ids, nil
}
