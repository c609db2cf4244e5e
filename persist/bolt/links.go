package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
)

// Read-only links: bucketLinks holds each link by its token's hash (the
// lookup every link request makes), bucketBoardLinks indexes them by board
// (boardID 0x00 linkID → hash) for the owner's list, the cap and revoking.
var (
	bucketLinks      = []byte("links")
	bucketBoardLinks = []byte("board_links")
)

func init() {
	topBuckets = append(topBuckets, bucketLinks, bucketBoardLinks)
}

// storedLink is a link as bbolt keeps it (the hash is its key).
type storedLink struct {
	ID        string    `json:"id"`
	BoardID   string    `json:"boardId"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func boardLinkKey(boardID, id string) []byte {
	k := make([]byte, 0, len(boardID)+1+len(id))
	k = append(k, boardID...)
	k = append(k, 0)
	return append(k, id...)
}

func getLink(tx *bbolt.Tx, hash []byte) (*persist.Link, error) {
	v := tx.Bucket(bucketLinks).Get(hash)
	if v == nil {
		return nil, notFound("Link")
	}
	var sl storedLink
	if err := json.Unmarshal(v, &sl); err != nil {
		return nil, fmt.Errorf("decode link: %w", err)
	}
	return &persist.Link{ID: sl.ID, BoardID: sl.BoardID, Hash: bytes.Clone(hash), CreatedBy: sl.CreatedBy, CreatedAt: sl.CreatedAt, ExpiresAt: sl.ExpiresAt}, nil
}

// boardLinks returns every link of the board, expired or not, in key order.
func boardLinks(tx *bbolt.Tx, boardID string) ([]persist.Link, error) {
	prefix := boardLinkKey(boardID, "")
	c := tx.Bucket(bucketBoardLinks).Cursor()
	var out []persist.Link
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		l, err := getLink(tx, v)
		if err != nil {
			return nil, fmt.Errorf("link %s of board %s: %w", k[len(prefix):], boardID, err)
		}
		out = append(out, *l)
	}
	return out, nil
}

func deleteLink(tx *bbolt.Tx, l *persist.Link) error {
	if err := tx.Bucket(bucketLinks).Delete(l.Hash); err != nil {
		return err
	}
	return tx.Bucket(bucketBoardLinks).Delete(boardLinkKey(l.BoardID, l.ID))
}

// CreateLink stores l unless the board has max live links at now; the
// board's expired links are deleted first.
func (db *DB) CreateLink(ctx context.Context, l persist.Link, now time.Time, max int) error {
	return db.update(ctx, func(tx *bbolt.Tx) error {
		if _, err := getBoard(tx, l.BoardID); err != nil {
			return err
		}
		links, err := boardLinks(tx, l.BoardID)
		if err != nil {
			return err
		}
		live := 0
		for i := range links {
			if links[i].Expired(now) {
				if err := deleteLink(tx, &links[i]); err != nil {
					return err
				}
				continue
			}
			if links[i].ID == l.ID {
				return board.Errorf(board.ECONFLICT, "Link %s exists.", l.ID)
			}
			live++
		}
		if live >= max {
			return linksFull(max)
		}
		if tx.Bucket(bucketLinks).Get(l.Hash) != nil {
			return board.Errorf(board.ECONFLICT, "A link with this token exists.")
		}
		v, err := json.Marshal(storedLink{ID: l.ID, BoardID: l.BoardID, CreatedBy: l.CreatedBy, CreatedAt: l.CreatedAt.UTC(), ExpiresAt: l.ExpiresAt.UTC()})
		if err != nil {
			return fmt.Errorf("encode link: %w", err)
		}
		if err := tx.Bucket(bucketLinks).Put(bytes.Clone(l.Hash), v); err != nil {
			return err
		}
		return tx.Bucket(bucketBoardLinks).Put(boardLinkKey(l.BoardID, l.ID), bytes.Clone(l.Hash))
	})
}

// linksFull is the answer to one link too many on a board.
func linksFull(max int) error {
	return board.Errorf(board.ECONFLICT, "A board can have at most %d read-only links: revoke one first.", max)
}

// ListLinks returns the board's links not expired at now, oldest first.
func (db *DB) ListLinks(ctx context.Context, boardID string, now time.Time) ([]persist.Link, error) {
	out := []persist.Link{}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		links, err := boardLinks(tx, boardID)
		for _, l := range links {
			if !l.Expired(now) {
				out = append(out, l)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	persist.SortLinks(out)
	return out, nil
}

// FindLink returns the link of that token hash, unless expired at now.
func (db *DB) FindLink(ctx context.Context, hash []byte, now time.Time) (*persist.Link, error) {
	var l *persist.Link
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		l, err = getLink(tx, hash)
		return err
	})
	if err != nil {
		return nil, err
	}
	if l.Expired(now) {
		return nil, notFound("Link")
	}
	return l, nil
}

// DeleteLink removes the board's link id.
func (db *DB) DeleteLink(ctx context.Context, boardID, id string) (bool, error) {
	deleted := false
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		deleted = false
		hash := tx.Bucket(bucketBoardLinks).Get(boardLinkKey(boardID, id))
		if hash == nil {
			return nil
		}
		deleted = true
		return deleteLink(tx, &persist.Link{ID: id, BoardID: boardID, Hash: slices.Clone(hash)})
	})
	return deleted, err
}
