package persist

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
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
// "board", as a rename's.
const (
	ActionStartVote  = "start_vote"
	ActionRevealVote = "reveal_vote"
)

// IsVoteAction reports whether action is a vote's changelog action.
func IsVoteAction(action string) bool {
	return action == ActionStartVote || action == ActionRevealVote
}

// RenderVote is the content of a vote's changelog entry, a vote record
// (docs/markdown-format.md, "Vote record"): the vote in a front matter,
// then for a revealed vote its ranked results as a table, each note with
// its title as it was at the reveal (titles: note ID → title; a note
// deleted since is "(deleted)").
func RenderVote(v *board.Vote, titles map[string]string) []byte {
	var b bytes.Buffer
	scope := v.Scope.Kind
	switch v.Scope.Kind {
	case board.ScopeFrame:
		scope += " " + v.Scope.FrameID
	case board.ScopeType:
		scope += " " + v.Scope.Type
	}
	b.WriteString("---\n")
	fmt.Fprintf(&b, "vote: %s\nstate: %s\nscope: %s\n", strconv.Quote(v.ID), strconv.Quote(v.State), strconv.Quote(scope))
	fmt.Fprintf(&b, "perPerson: %d\nperNote: %d\nanonymous: %t\nendsWithTimer: %t\n", v.PerPerson, v.PerNote, v.Anonymous, v.EndsWithTimer)
	fmt.Fprintf(&b, "startedBy: %s\nstartedAt: %s\n", strconv.Quote(v.StartedBy), strconv.Quote(time.UnixMilli(v.StartedAt).UTC().Format(time.RFC3339Nano)))
	fmt.Fprintf(&b, "voters: %d\ndots: %d\n", v.Voters, v.Dots)
	b.WriteString("---\n")
	if v.State != board.VoteRevealed {
		return b.Bytes()
	}
	b.WriteString("\n| rank | note | dots | voters |\n|---|---|---|---|\n")
	rank := 0
	for i, r := range v.Results {
		if i == 0 || r.Count != v.Results[i-1].Count {
			rank = i + 1 // ties share a rank
		}
		title, ok := titles[r.NoteID]
		switch {
		case !ok:
			title = "(deleted)"
		case title == "":
			title = "Untitled note"
		}
		fmt.Fprintf(&b, "| %d | %s (%s) | %d | %s |\n", rank, cell(title), cell(r.NoteID), r.Count, cell(strings.Join(r.Voters, ", ")))
	}
	return b.Bytes()
}

// cell is s as one Markdown table cell: on one line, its pipes escaped.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\\", "\\\\"), "|", "\\|")
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
		ch.log(ActionStartVote, nil)
		return ch, nil
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
		titles := make(map[string]string, len(next.Results))
		for _, res := range next.Results {
			n, err := r.Note(res.NoteID)
			if err != nil {
				return VoteChange{}, fmt.Errorf("read note %q: %w", res.NoteID, err)
			}
			if n != nil {
				titles[res.NoteID] = n.Title
			}
		}
		ch.log(ActionRevealVote, titles)
	}
	return ch, nil
}

// log adds the changelog entry of action for the new vote.
func (ch *VoteChange) log(action string, titles map[string]string) {
	ch.Log = append(ch.Log, NewLogEntry{Action: action, Content: RenderVote(ch.Vote, titles)})
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
