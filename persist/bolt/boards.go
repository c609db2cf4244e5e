package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
)

// Roles in the members index.
const (
	roleOwner   = "owner"
	roleInvitee = "invitee"
)

func memberKey(email, boardID string) []byte {
	k := make([]byte, 0, len(email)+1+len(boardID))
	k = append(k, email...)
	k = append(k, 0)
	return append(k, boardID...)
}

func getBoard(tx *bbolt.Tx, id string) (*board.Board, error) {
	v := tx.Bucket(bucketBoards).Get([]byte(id))
	if v == nil {
		return nil, notFound("Board")
	}
	var b board.Board
	if err := json.Unmarshal(v, &b); err != nil {
		return nil, fmt.Errorf("decode board %s: %w", id, err)
	}
	if b.InvitedEmails == nil {
		b.InvitedEmails = []string{}
	}
	return &b, nil
}

func putBoard(tx *bbolt.Tx, b *board.Board) error {
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode board %s: %w", b.ID, err)
	}
	return tx.Bucket(bucketBoards).Put([]byte(b.ID), v)
}

// FindBoard returns a claimed board. ENOTFOUND when nobody has claimed it.
func (db *DB) FindBoard(ctx context.Context, id string) (*board.Board, error) {
	var b *board.Board
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		b, err = getBoard(tx, id)
		return err
	})
	return b, err
}

// ClaimBoard makes email the owner of the unclaimed board id. ECONFLICT when
// the board already has an owner.
func (db *DB) ClaimBoard(ctx context.Context, id, email string) (*board.Board, error) {
	now := db.now()
	b := &board.Board{
		ID:            id,
		Name:          "",
		OwnerEmail:    email,
		InvitedEmails: []string{},
		CreatedAt:     now,
		UpdatedAt:     now.Format(time.RFC3339Nano),
	}
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketBoards).Get([]byte(id)) != nil {
			return board.Errorf(board.ECONFLICT, "Board %s is already claimed.", id)
		}
		if limit := db.limits.WithDefaults().BoardsPerUser; ownedBoards(tx, email) >= limit {
			return board.BoardsFull(limit)
		}
		if err := putBoard(tx, b); err != nil {
			return err
		}
		return tx.Bucket(bucketMembers).Put(memberKey(email, id), []byte(roleOwner))
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// SetPhases saves a board's phase configuration. ENOTFOUND for an unclaimed board.
func (db *DB) SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error) {
	var b *board.Board
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if b, err = getBoard(tx, id); err != nil {
			return err
		}
		b.Phases = ph
		return putBoard(tx, b)
	})
	return b, err
}

// AddInvite adds email to the board's collaborators. It reports false when
// the address was already invited. EINVALID when email is the owner's.
func (db *DB) AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	var b *board.Board
	added := false
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if b, err = getBoard(tx, id); err != nil {
			return err
		}
		if b.OwnerEmail == email {
			return board.FieldErrorf("email", "The owner cannot invite themself.")
		}
		if slices.Contains(b.InvitedEmails, email) {
			return nil
		}
		if len(b.InvitedEmails) >= board.MaxInvites {
			return board.FieldErrorf("email", "A board can have at most %d collaborators.", board.MaxInvites)
		}
		b.InvitedEmails = append(b.InvitedEmails, email)
		added = true
		if err := putBoard(tx, b); err != nil {
			return err
		}
		return tx.Bucket(bucketMembers).Put(memberKey(email, id), []byte(roleInvitee))
	})
	return b, added, err
}

// RemoveInvite removes email from the board's collaborators. It reports false
// when the address was not invited.
func (db *DB) RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	var b *board.Board
	removed := false
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if b, err = getBoard(tx, id); err != nil {
			return err
		}
		i := slices.Index(b.InvitedEmails, email)
		if i < 0 {
			return nil
		}
		b.InvitedEmails = slices.Delete(b.InvitedEmails, i, i+1)
		delete(b.Roles, email)
		if len(b.Roles) == 0 {
			b.Roles = nil
		}
		removed = true
		if err := putBoard(tx, b); err != nil {
			return err
		}
		return tx.Bucket(bucketMembers).Delete(memberKey(email, id))
	})
	return b, removed, err
}

// SetRole gives the invitee email role (persist.BoardStore).
func (db *DB) SetRole(ctx context.Context, id, email, role string) (*board.Board, bool, error) {
	if !board.ValidRole(role) {
		return nil, false, board.FieldErrorf("role", "role must be %q, %q or %q.", board.RoleView, board.RoleAdd, board.RoleEdit)
	}
	var b *board.Board
	changed := false
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		var err error
		if b, err = getBoard(tx, id); err != nil {
			return err
		}
		if !slices.Contains(b.InvitedEmails, email) {
			return &board.Error{Code: board.ENOTFOUND, Field: "email", Message: "That address is not invited to this board."}
		}
		if changed = b.RoleOf(email) != role; !changed {
			return nil
		}
		if role == board.RoleEdit {
			delete(b.Roles, email)
			if len(b.Roles) == 0 {
				b.Roles = nil
			}
		} else {
			if b.Roles == nil {
				b.Roles = map[string]string{}
			}
			b.Roles[email] = role
		}
		return putBoard(tx, b)
	})
	return b, changed, err
}

// ListBoardsFor returns the boards email owns or is invited to, newest first
// (by creation time, then ID for a stable order).
func (db *DB) ListBoardsFor(ctx context.Context, email string) ([]board.Board, error) {
	var out []board.Board
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		prefix := memberKey(email, "")
		c := tx.Bucket(bucketMembers).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			b, err := getBoard(tx, string(k[len(prefix):]))
			if err != nil {
				return fmt.Errorf("members index names board %q: %w", k[len(prefix):], err)
			}
			out = append(out, *b)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b board.Board) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if out == nil {
		out = []board.Board{}
	}
	return out, err
}
