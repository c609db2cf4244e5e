package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"corkboard/board"
)

// querier is what both the pool and a transaction answer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const boardColumns = "id, name, owner_email, created_ns, updated_at, version, phases, timer, vote"

// invitees is a column expression: the board b's invitees in invitation
// order, so that a board and its invitees come in one statement.
const invitees = `COALESCE((SELECT array_agg(m.email ORDER BY m.pos) FROM board_members m
	WHERE m.board_id = b.id AND m.role = 'invitee'), '{}'), ` + inviteeRoles

// inviteeRoles is a column expression (migration 0008): the roles of b's
// invitees that are not board.RoleEdit, as parallel arrays of addresses
// and roles (empty when every invitee edits).
const inviteeRoles = `COALESCE((SELECT array_agg(m.email) FROM board_members m
	WHERE m.board_id = b.id AND m.role = 'invitee' AND m.rights <> 'edit'), '{}'),
	COALESCE((SELECT array_agg(m.rights) FROM board_members m
	WHERE m.board_id = b.id AND m.role = 'invitee' AND m.rights <> 'edit'), '{}')`

// scanBoard reads one boards row (boardColumns), with the invitees after
// them when withInvitees is set, then into extra the columns the query
// selects after those.
func scanBoard(row pgx.Row, withInvitees bool, extra ...any) (*board.Board, error) {
	var b board.Board
	var created int64
	var phases, timer, vote []byte
	dest := []any{&b.ID, &b.Name, &b.OwnerEmail, &created, &b.UpdatedAt, &b.Version, &phases, &timer, &vote}
	var roleEmails, roles []string
	if withInvitees {
		dest = append(dest, &b.InvitedEmails, &roleEmails, &roles)
	}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, notFound("Board")
		}
		return nil, err
	}
	b.CreatedAt = fromNanos(created)
	if phases != nil {
		b.Phases = new(board.Phases)
		if err := json.Unmarshal(phases, b.Phases); err != nil {
			return nil, fmt.Errorf("decode phases of board %s: %w", b.ID, err)
		}
	}
	var err error
	if b.Timer, err = decodeJSONColumn[board.Timer](timer); err != nil {
		return nil, fmt.Errorf("decode timer of board %s: %w", b.ID, err)
	}
	if b.Vote, err = decodeJSONColumn[board.Vote](vote); err != nil {
		return nil, fmt.Errorf("decode vote of board %s: %w", b.ID, err)
	}
	if b.InvitedEmails == nil {
		b.InvitedEmails = []string{}
	}
	if len(roleEmails) > 0 && len(roleEmails) == len(roles) {
		b.Roles = make(map[string]string, len(roles))
		for i, e := range roleEmails {
			b.Roles[e] = roles[i]
		}
	}
	return &b, nil
}

// decodeJSONColumn reads a nullable JSON column such as a board's timer or
// vote (NULL: nil), so every such column decodes the same way.
func decodeJSONColumn[T any](js []byte) (*T, error) {
	if js == nil {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(js, v); err != nil {
		return nil, err
	}
	return v, nil
}

// encodeJSONColumn is a nullable JSON column's value for v (nil: NULL).
func encodeJSONColumn[T any](v *T) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// getBoard reads a board with its invitees; lock takes the board's row
// lock for the rest of the transaction (FOR UPDATE).
func getBoard(ctx context.Context, q querier, id string, lock bool) (*board.Board, error) {
	sql := "SELECT " + boardColumns + ", " + invitees + " FROM boards b WHERE id = $1"
	if lock {
		sql += " FOR UPDATE"
	}
	return scanBoard(q.QueryRow(ctx, sql, id), true)
}

// FindBoard returns a claimed board. ENOTFOUND when nobody has claimed it.
func (s *Store) FindBoard(ctx context.Context, id string) (*board.Board, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var b *board.Board
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		var err error
		b, err = getBoard(ctx, tx, id, false)
		return err
	})
	return b, wrap(err, "find board %s", id)
}

// ClaimBoard makes email the owner of the unclaimed board id. ECONFLICT when
// the board already has an owner.
func (s *Store) ClaimBoard(ctx context.Context, id, email string) (*board.Board, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	now := s.now()
	b := &board.Board{
		ID:            id,
		Name:          "",
		OwnerEmail:    email,
		InvitedEmails: []string{},
		CreatedAt:     now,
		UpdatedAt:     now.Format(time.RFC3339Nano),
	}
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		// One claim of this person's at a time, from any node, so that
		// two cannot both pass the count; the count is a statement of its
		// own, whose snapshot (READ COMMITTED) is taken behind the lock.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('claim:' || $1, 0))", email); err != nil {
			return fmt.Errorf("lock the claims of %s: %w", email, err)
		}
		var owned int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM board_members WHERE email = $1 AND role = 'owner'", email).Scan(&owned); err != nil {
			return fmt.Errorf("count owned boards: %w", err)
		}
		if limit := s.limits.WithDefaults().BoardsPerUser; owned >= limit {
			return board.BoardsFull(limit)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO boards (id, name, owner_email, created_ns, updated_at)
			VALUES ($1, '', $2, $3, $4) ON CONFLICT (id) DO NOTHING`, id, email, nanos(now), b.UpdatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return board.Errorf(board.ECONFLICT, "Board %s is already claimed.", id)
		}
		_, err = tx.Exec(ctx, "INSERT INTO board_members (email, board_id, role) VALUES ($1, $2, 'owner')", email, id)
		return err
	})
	if err != nil {
		return nil, wrap(err, "claim board %s", id)
	}
	return b, nil
}

// SetPhases saves a board's phase configuration. ENOTFOUND for an unclaimed board.
func (s *Store) SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var js []byte
	if ph != nil {
		var err error
		if js, err = json.Marshal(ph); err != nil {
			return nil, fmt.Errorf("encode phases of board %s: %w", id, err)
		}
	}
	var b *board.Board
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "UPDATE boards SET phases = $2 WHERE id = $1", id, js)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("Board")
		}
		b, err = getBoard(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return nil, wrap(err, "set phases of board %s", id)
	}
	return b, nil
}

// AddInvite adds email to the board's collaborators. It reports false when
// the address was already invited. EINVALID when email is the owner's.
func (s *Store) AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var b *board.Board
	added := false
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		added = false
		var err error
		// The board's row lock orders invites of one board, so the count
		// check below holds at commit.
		if b, err = getBoard(ctx, tx, id, true); err != nil {
			return err
		}
		if b.OwnerEmail == email {
			return board.FieldErrorf("email", "The owner cannot invite themself.")
		}
		for _, e := range b.InvitedEmails {
			if e == email {
				return nil
			}
		}
		if len(b.InvitedEmails) >= board.MaxInvites {
			return board.FieldErrorf("email", "A board can have at most %d collaborators.", board.MaxInvites)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO board_members (email, board_id, role) VALUES ($1, $2, 'invitee')", email, id); err != nil {
			return err
		}
		b.InvitedEmails = append(b.InvitedEmails, email)
		added = true
		return nil
	})
	if err != nil {
		return nil, false, wrap(err, "invite to board %s", id)
	}
	return b, added, nil
}

// RemoveInvite removes email from the board's collaborators. It reports false
// when the address was not invited.
func (s *Store) RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var b *board.Board
	removed := false
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		removed = false
		if _, err := getBoard(ctx, tx, id, true); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM board_members WHERE email = $1 AND board_id = $2 AND role = 'invitee'", email, id)
		if err != nil {
			return err
		}
		removed = tag.RowsAffected() > 0
		b, err = getBoard(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return nil, false, wrap(err, "uninvite from board %s", id)
	}
	return b, removed, nil
}

// SetRole gives the invitee email role (persist.BoardStore).
func (s *Store) SetRole(ctx context.Context, id, email, role string) (*board.Board, bool, error) {
	if !board.ValidRole(role) {
		return nil, false, board.FieldErrorf("role", "role must be %q, %q or %q.", board.RoleView, board.RoleAdd, board.RoleEdit)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	var b *board.Board
	changed := false
	err := s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		changed = false
		var err error
		if b, err = getBoard(ctx, tx, id, true); err != nil {
			return err
		}
		if !slices.Contains(b.InvitedEmails, email) {
			return &board.Error{Code: board.ENOTFOUND, Field: "email", Message: "That address is not invited to this board."}
		}
		if b.RoleOf(email) == role {
			return nil
		}
		if _, err := tx.Exec(ctx, "UPDATE board_members SET rights = $3 WHERE email = $1 AND board_id = $2 AND role = 'invitee'", email, id, role); err != nil {
			return err
		}
		changed = true
		b, err = getBoard(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return nil, false, wrap(err, "set a role on board %s", id)
	}
	return b, changed, nil
}

// ListBoardsFor returns the boards email owns or is invited to, newest first
// (by creation time, then ID for a stable order).
func (s *Store) ListBoardsFor(ctx context.Context, email string) ([]board.Board, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := []board.Board{}
	rows, err := s.pool.Query(ctx, "SELECT "+boardColumns+", "+invitees+` FROM boards b
		WHERE b.id IN (SELECT board_id FROM board_members WHERE email = $1)
		ORDER BY b.created_ns DESC, b.id COLLATE "C"`, email)
	if err == nil {
		for rows.Next() {
			var b *board.Board
			if b, err = scanBoard(rows, true); err != nil {
				break
			}
			out = append(out, *b)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		return nil, wrap(err, "list boards of %s", email)
	}
	return out, nil
}
