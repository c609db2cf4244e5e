package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"corkboard/board"
	"corkboard/persist"
)

const linkColumns = "hash, id, board_id, created_by, created_ns, expires_ns"

func scanLink(row pgx.Row) (*persist.Link, error) {
	var l persist.Link
	var created, expires int64
	if err := row.Scan(&l.Hash, &l.ID, &l.BoardID, &l.CreatedBy, &created, &expires); err != nil {
		return nil, err
	}
	l.CreatedAt, l.ExpiresAt = fromNanos(created), fromNanos(expires)
	return &l, nil
}

// CreateLink stores l unless the board has max live links at now; the
// board's expired links are deleted first. The board's row lock orders
// the creations of one board, so the count holds at commit.
func (s *Store) CreateLink(ctx context.Context, l persist.Link, now time.Time, max int) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		if _, err := getBoard(ctx, tx, l.BoardID, true); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM board_links WHERE board_id = $1 AND expires_ns <= $2", l.BoardID, nanos(now)); err != nil {
			return err
		}
		var live int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM board_links WHERE board_id = $1", l.BoardID).Scan(&live); err != nil {
			return err
		}
		if live >= max {
			return board.Errorf(board.ECONFLICT, "A board can have at most %d read-only links: revoke one first.", max)
		}
		_, err := tx.Exec(ctx, "INSERT INTO board_links ("+linkColumns+") VALUES ($1, $2, $3, $4, $5, $6)",
			l.Hash, l.ID, l.BoardID, l.CreatedBy, nanos(l.CreatedAt), nanos(l.ExpiresAt))
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return board.Errorf(board.ECONFLICT, "Link %s exists.", l.ID)
		}
		return err
	})
	return wrap(err, "create link on board %s", l.BoardID)
}

// ListLinks returns the board's links not expired at now, oldest first.
func (s *Store) ListLinks(ctx context.Context, boardID string, now time.Time) ([]persist.Link, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := []persist.Link{}
	rows, err := s.pool.Query(ctx, "SELECT "+linkColumns+` FROM board_links
		WHERE board_id = $1 AND expires_ns > $2 ORDER BY created_ns, id COLLATE "C"`, boardID, nanos(now))
	if err == nil {
		for rows.Next() {
			var l *persist.Link
			if l, err = scanLink(rows); err != nil {
				break
			}
			out = append(out, *l)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		return nil, wrap(err, "list links of board %s", boardID)
	}
	return out, nil
}

// FindLink returns the link of that token hash, unless expired at now.
func (s *Store) FindLink(ctx context.Context, hash []byte, now time.Time) (*persist.Link, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	l, err := scanLink(s.pool.QueryRow(ctx, "SELECT "+linkColumns+" FROM board_links WHERE hash = $1", hash))
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && l.Expired(now)) {
		return nil, notFound("Link")
	}
	if err != nil {
		return nil, wrap(err, "find link")
	}
	return l, nil
}

// DeleteLink removes the board's link id.
func (s *Store) DeleteLink(ctx context.Context, boardID, id string) (bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, "DELETE FROM board_links WHERE board_id = $1 AND id = $2", boardID, id)
	if err != nil {
		return false, wrap(err, "delete link %s of board %s", id, boardID)
	}
	return tag.RowsAffected() > 0, nil
}
