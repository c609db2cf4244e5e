package persist

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"corkboard/board"
)

// VoteStore reads a person's own dots in a board's vote: what GET
// /api/boards/{boardId}/votes/mine answers, and what the vote endpoint
// answers after a dot. Others' dots are never read one by one outside the
// push transaction (the reveal ranks them there).
type VoteStore interface {
	// MyDots returns the board's vote (nil when none) and email's dots in
	// it (note ID → count, empty when none), read in one transaction.
	// ENOTFOUND for an unclaimed board.
	MyDots(ctx context.Context, boardID, email string) (*board.Vote, map[string]int, error)
}

// VoteReader is what SettleVote reads inside the push's transaction, as
// the transaction sees it (earlier pushes of the same batch included).
type VoteReader interface {
	// Note is the live note id, nil when it is missing or deleted.
	Note(id string) (*board.Note, error)
	// Frame is the live frame id, nil when it is missing or deleted.
	Frame(id string) (*board.Frame, error)
	// Dots are the rows of vote voteID: email's only, or everyone's when
	// email is "".
	Dots(voteID, email string) ([]board.VoteDots, error)
}

// VoteChange is what a push does to its board's vote (board.Push.Vote or
// Dot).
type VoteChange struct {
	// Set is true when the push changes the vote; Vote is then the board's
	// new vote (nil: none).
	Set  bool
	Vote *board.Vote
	// Drop is the ID of a vote whose rows all go (cleared, or replaced by
	// a start), "" for none.
	Drop string
	// Row is the voter's row after a dot (Count 0: the row goes), nil when
	// the push casts none.
	Row *board.VoteDots
	// Log are the changelog entries the push writes (a start, a reveal).
	Log []NewLogEntry
}

// Changelog actions of a vote (docs/changelog.md, "Entries the server
// writes itself"). Their entries have no note: the key's id part is
// "vote".
const (
	ActionStartVote  = "start_vote"
	ActionRevealVote = "reveal_vote"
	// VoteKeyID is the id part of a vote entry's key.
	VoteKeyID = "vote"
)

// VoteLogContent is the content of a vote's changelog entry: the vote as
// the header showed it once started or revealed (with the ranked results
// for a reveal), as JSON.
func VoteLogContent(v *board.Vote) ([]byte, error) {
	return json.Marshal(v)
}

// SettleVote applies p's vote action or dot, if it has one, to b at now
// (the clock of the push's transaction), reading what it needs through r:
// two dots at once apply one after the other, each seeing the other's
// row, so totals and per-person limits are exact. A push whose action
// changes nothing (close of a closed vote, clear of no vote) has no
// VoteChange: alone, it keeps the version. Its error is the push's own
// answer (EINVALID, ECONFLICT): the push is refused whole.
func SettleVote(b *board.Board, p *board.Push, now time.Time, r VoteReader) (VoteChange, error) {
	switch {
	case p.Vote != nil:
		return settleVoteAction(b, *p.Vote, now, r)
	case p.Dot != nil:
		return settleDot(b, *p.Dot, now, r)
	}
	return VoteChange{}, nil
}

func settleVoteAction(b *board.Board, a board.VoteAction, now time.Time, r VoteReader) (VoteChange, error) {
	cur := b.Vote
	switch a.Action {
	case board.VoteStart:
		next, err := board.StartVote(cur, a, now, b.Timer)
		if err != nil {
			return VoteChange{}, err
		}
		if a.Scope.Kind == board.ScopeFrame {
			f, err := r.Frame(a.Scope.FrameID)
			if err != nil {
				return VoteChange{}, fmt.Errorf("read frame %q: %w", a.Scope.FrameID, err)
			}
			if f == nil {
				return VoteChange{}, board.FieldErrorf("scope.frameId", "The board has no frame %q.", a.Scope.FrameID)
			}
		}
		ch := VoteChange{Set: true, Vote: next}
		if cur != nil {
			ch.Drop = cur.ID
		}
		return ch, ch.log(ActionStartVote)
	case board.VoteClear:
		if cur == nil {
			return VoteChange{}, nil
		}
		return VoteChange{Set: true, Drop: cur.ID}, nil
	}
	reveal := a.Action == board.VoteReveal
	var rows []board.VoteDots
	if reveal && cur != nil && cur.State != board.VoteRevealed {
		var err error
		if rows, err = r.Dots(cur.ID, ""); err != nil {
			return VoteChange{}, fmt.Errorf("read the vote's dots: %w", err)
		}
	}
	next, err := board.CloseVote(cur, reveal, rows)
	if err != nil || next == cur {
		return VoteChange{}, err
	}
	ch := VoteChange{Set: true, Vote: next}
	if reveal {
		return ch, ch.log(ActionRevealVote)
	}
	return ch, nil
}

// log adds the changelog entry of action for the new vote.
func (ch *VoteChange) log(action string) error {
	js, err := VoteLogContent(ch.Vote)
	if err != nil {
		return fmt.Errorf("encode vote entry: %w", err)
	}
	ch.Log = append(ch.Log, NewLogEntry{Action: action, Content: js})
	return nil
}

func settleDot(b *board.Board, d board.VoteDot, now time.Time, r VoteReader) (VoteChange, error) {
	cur := b.Vote
	if err := d.Validate(); err != nil {
		return VoteChange{}, err
	}
	if cur == nil || cur.State != board.VoteOpen {
		// CastDot's answer, without reading anything.
		_, _, err := board.CastDot(cur, nil, d, board.DotTarget{}, b.Timer, now)
		return VoteChange{}, err
	}
	rows, err := r.Dots(cur.ID, d.By)
	if err != nil {
		return VoteChange{}, fmt.Errorf("read dots of %s: %w", d.By, err)
	}
	mine := make(map[string]int, len(rows))
	for _, row := range rows {
		mine[row.NoteID] = row.Count
	}
	var t board.DotTarget
	if d.Delta > 0 {
		if t.Note, err = r.Note(d.NoteID); err != nil {
			return VoteChange{}, fmt.Errorf("read note %q: %w", d.NoteID, err)
		}
		if t.Note != nil && cur.Scope.Kind == board.ScopeFrame {
			if t.Frame, err = r.Frame(cur.Scope.FrameID); err != nil {
				return VoteChange{}, fmt.Errorf("read frame %q: %w", cur.Scope.FrameID, err)
			}
		}
	}
	next, count, err := board.CastDot(cur, mine, d, t, b.Timer, now)
	if err != nil {
		return VoteChange{}, err
	}
	return VoteChange{Set: true, Vote: next, Row: &board.VoteDots{Email: d.By, NoteID: d.NoteID, Count: count}}, nil
}
