package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"corkboard/board"
	"corkboard/persist"
)

// subVoteDots holds a board's vote rows, one per person per note per
// vote: be16(len(vote ID)) ‖ vote ID ‖ be16(len(email)) ‖ email ‖ note ID
// → be32(count). The lengths keep one vote's (and one person's) keys a
// prefix no other shares. The bucket is made by the first dot.
var subVoteDots = []byte("vd")

// votePrefix is the prefix of vote voteID's rows, and of email's rows in
// it when email is not "".
func votePrefix(voteID, email string) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(len(voteID)))
	k = append(k, voteID...)
	if email == "" {
		return k
	}
	k = binary.BigEndian.AppendUint16(k, uint16(len(email)))
	return append(k, email...)
}

// boltVotes reads what SettleVote needs from a board's rows bucket.
type boltVotes struct{ rb *bbolt.Bucket }

// liveJSON is the JSON of the live row id of t, nil when not live.
func liveJSON(t table, id string) []byte {
	if t.rows == nil {
		return nil
	}
	v := t.rows.Get([]byte(id))
	if len(v) < 9 || v[0] != rowLive {
		return nil
	}
	return v[9:]
}

func (r boltVotes) Note(id string) (*board.Note, error) {
	js := liveJSON(notesTable(r.rb), id)
	if js == nil {
		return nil, nil
	}
	n := new(board.Note)
	if err := json.Unmarshal(js, n); err != nil {
		return nil, fmt.Errorf("decode note %q: %w", id, err)
	}
	return n, nil
}

func (r boltVotes) Frame(id string) (*board.Frame, error) {
	js := liveJSON(framesTable(r.rb), id)
	if js == nil {
		return nil, nil
	}
	f := new(board.Frame)
	if err := json.Unmarshal(js, f); err != nil {
		return nil, fmt.Errorf("decode frame %q: %w", id, err)
	}
	return f, nil
}

func (r boltVotes) Dots(voteID, email string) ([]board.VoteDots, error) {
	return readDots(r.rb, voteID, email)
}

// readDots lists vote voteID's rows (email's only unless email is "").
func readDots(rb *bbolt.Bucket, voteID, email string) ([]board.VoteDots, error) {
	vb := rb.Bucket(subVoteDots)
	if vb == nil {
		return nil, nil
	}
	var out []board.VoteDots
	prefix := votePrefix(voteID, "")
	c := vb.Cursor()
	for k, v := c.Seek(votePrefix(voteID, email)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		rest := k[len(prefix):]
		if len(rest) < 2 || len(v) != 4 {
			return nil, fmt.Errorf("vote row %q is malformed", k)
		}
		n := int(binary.BigEndian.Uint16(rest))
		if len(rest) < 2+n {
			return nil, fmt.Errorf("vote row %q is malformed", k)
		}
		who := string(rest[2 : 2+n])
		if email != "" && who != email {
			break
		}
		out = append(out, board.VoteDots{Email: who, NoteID: string(rest[2+n:]), Count: int(binary.BigEndian.Uint32(v))})
	}
	return out, nil
}

// writeVote writes what a push does to the vote's rows: the rows of a
// dropped vote go, and the voter's row is put (or goes, at 0).
func writeVote(rb *bbolt.Bucket, ch persist.VoteChange) error {
	if ch.Drop == "" && ch.Row == nil {
		return nil
	}
	vb, err := rb.CreateBucketIfNotExists(subVoteDots)
	if err != nil {
		return fmt.Errorf("create vote rows bucket: %w", err)
	}
	if ch.Drop != "" {
		prefix := votePrefix(ch.Drop, "")
		var keys [][]byte
		c := vb.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := vb.Delete(k); err != nil {
				return fmt.Errorf("drop vote row: %w", err)
			}
		}
	}
	if r := ch.Row; r != nil {
		key := append(votePrefix(ch.Vote.ID, r.Email), r.NoteID...)
		if r.Count == 0 {
			return vb.Delete(key)
		}
		return vb.Put(key, binary.BigEndian.AppendUint32(nil, uint32(r.Count)))
	}
	return nil
}

// MyDots implements persist.VoteStore.
func (db *DB) MyDots(ctx context.Context, boardID, email string) (*board.Vote, map[string]int, error) {
	var vote *board.Vote
	mine := map[string]int{}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		vote = b.Vote
		rb, err := rowsBucket(tx, boardID, false)
		if err != nil || rb == nil || vote == nil {
			return err
		}
		rows, err := readDots(rb, vote.ID, email)
		for _, r := range rows {
			mine[r.NoteID] = r.Count
		}
		return err
	})
	if err != nil {
		return nil, nil, clWrap(err, "read dots of %s on board %s", email, boardID)
	}
	return vote, mine, nil
}

// applyVote writes a push's VoteChange in its transaction: the board's
// vote (b, stored when the batch finishes), its rows and its changelog
// entries.
func applyVote(tx *bbolt.Tx, rb *bbolt.Bucket, b *board.Board, ch persist.VoteChange, now time.Time) error {
	if !ch.Set {
		return nil
	}
	b.Vote = ch.Vote
	if err := writeVote(rb, ch); err != nil {
		return err
	}
	if len(ch.Log) > 0 {
		if _, err := appendLogTx(tx, b.ID, now, ch.Log); err != nil {
			return fmt.Errorf("log the vote: %w", err)
		}
	}
	return nil
}

// exportVoteDots streams a board's vote rows, in key order (vote, then
// person, then note).
func exportVoteDots(ctx context.Context, rb *bbolt.Bucket, id string, sink persist.DumpSink) error {
	vb := rb.Bucket(subVoteDots)
	if vb == nil {
		return nil
	}
	c := vb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, ok := parseVoteKey(k, v)
		if !ok {
			return fmt.Errorf("board %s: vote row %q is malformed", id, k)
		}
		rec.BoardID = id
		if err := sink.VoteDots(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// parseVoteKey reads a vote row's key and value (subVoteDots).
func parseVoteKey(k, v []byte) (persist.VoteDotsRecord, bool) {
	if len(k) < 2 || len(v) != 4 {
		return persist.VoteDotsRecord{}, false
	}
	n := int(binary.BigEndian.Uint16(k))
	if len(k) < 2+n+2 {
		return persist.VoteDotsRecord{}, false
	}
	vote, rest := string(k[2:2+n]), k[2+n:]
	m := int(binary.BigEndian.Uint16(rest))
	if len(rest) < 2+m {
		return persist.VoteDotsRecord{}, false
	}
	return persist.VoteDotsRecord{VoteID: vote, Email: string(rest[2 : 2+m]), NoteID: string(rest[2+m:]), Count: int(binary.BigEndian.Uint32(v))}, true
}
