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

// pgVotes reads what SettleVote needs inside the push transaction, which
// holds the board's row lock.
type pgVotes struct {
	ctx     context.Context
	tx      pgx.Tx
	boardID string
}

// liveRow reads the JSON of the live row id of kind into dst; false when
// the row is missing or a tombstone.
func (r pgVotes) liveRow(kind, id string, dst any) (bool, error) {
	var js []byte
	err := r.tx.QueryRow(r.ctx, "SELECT data FROM board_rows WHERE board_id = $1 AND kind = $2 AND id = $3 AND data IS NOT NULL",
		r.boardID, kind, id).Scan(&js)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, json.Unmarshal(js, dst)
}

func (r pgVotes) Note(id string) (*board.Note, error) {
	n := new(board.Note)
	if ok, err := r.liveRow(kindNote, id, n); !ok || err != nil {
		return nil, err
	}
	return n, nil
}

func (r pgVotes) Frame(id string) (*board.Frame, error) {
	f := new(board.Frame)
	if ok, err := r.liveRow(kindFrame, id, f); !ok || err != nil {
		return nil, err
	}
	return f, nil
}

func (r pgVotes) Dots(voteID, email string) ([]board.VoteDots, error) {
	return readDots(r.ctx, r.tx, r.boardID, voteID, email)
}

// readDots lists vote voteID's rows (email's only unless email is "").
func readDots(ctx context.Context, q querier, boardID, voteID, email string) ([]board.VoteDots, error) {
	rows, err := q.Query(ctx, `SELECT email, note_id, count FROM vote_dots
		WHERE board_id = $1 AND vote_id = $2 AND ($3 = '' OR email = $3) ORDER BY email, note_id`, boardID, voteID, email)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (board.VoteDots, error) {
		var d board.VoteDots
		err := row.Scan(&d.Email, &d.NoteID, &d.Count)
		return d, err
	})
}

// queueVote queues what a push does to the board's vote: its column, the
// rows of a dropped vote, and the voter's row (gone at 0).
func queueVote(batch *pgx.Batch, boardID string, ch persist.VoteChange) error {
	if !ch.Set {
		return nil
	}
	js, err := encodeJSONColumn(ch.Vote)
	if err != nil {
		return fmt.Errorf("encode vote: %w", err)
	}
	batch.Queue("UPDATE boards SET vote = $2 WHERE id = $1", boardID, js)
	if ch.Drop != "" {
		batch.Queue("DELETE FROM vote_dots WHERE board_id = $1 AND vote_id = $2", boardID, ch.Drop)
	}
	if r := ch.Row; r != nil {
		if r.Count == 0 {
			batch.Queue("DELETE FROM vote_dots WHERE board_id = $1 AND vote_id = $2 AND email = $3 AND note_id = $4",
				boardID, ch.Vote.ID, r.Email, r.NoteID)
		} else {
			batch.Queue(`INSERT INTO vote_dots (board_id, vote_id, email, note_id, count) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (board_id, vote_id, email, note_id) DO UPDATE SET count = EXCLUDED.count`,
				boardID, ch.Vote.ID, r.Email, r.NoteID, r.Count)
		}
	}
	return nil
}

// settledVote finishes a push's VoteChange once its batch (queueVote) is
// written: the board's vote in memory, and the changelog entries of a
// start or a reveal in the push's transaction.
func settledVote(ctx context.Context, tx pgx.Tx, b *board.Board, ch persist.VoteChange, now time.Time) error {
	if !ch.Set {
		return nil
	}
	b.Vote = ch.Vote
	if len(ch.Log) > 0 {
		if _, err := appendLogTx(ctx, tx, b.ID, now, ch.Log); err != nil {
			return fmt.Errorf("log the vote: %w", err)
		}
	}
	return nil
}

// MyDots implements persist.VoteStore.
func (s *Store) MyDots(ctx context.Context, boardID, email string) (*board.Vote, map[string]int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var vote *board.Vote
	mine := map[string]int{}
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		vote, mine = nil, map[string]int{} // a retry starts again
		b, err := getBoard(ctx, tx, boardID, false)
		if err != nil || b.Vote == nil {
			return err
		}
		vote = b.Vote
		rows, err := readDots(ctx, tx, boardID, vote.ID, email)
		for _, r := range rows {
			mine[r.NoteID] = r.Count
		}
		return err
	})
	if err != nil {
		return nil, nil, wrap(err, "read dots of %s on board %s", email, boardID)
	}
	return vote, mine, nil
}
