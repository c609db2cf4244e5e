package board

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
)

// Vote states (Vote.State).
const (
	VoteOpen     = "open"
	VoteClosed   = "closed"
	VoteRevealed = "revealed"
)

// Vote actions (VoteAction.Action).
const (
	VoteStart  = "start"
	VoteClose  = "close"
	VoteReveal = "reveal"
	VoteClear  = "clear"
)

// Vote scope kinds (VoteScope.Kind).
const (
	ScopeAll   = "all"
	ScopeFrame = "frame"
	ScopeType  = "type"
)

// Vote limits and defaults (docs/api.md, "Dot voting").
const (
	MaxDotsPerPerson     = 99
	DefaultDotsPerPerson = 3
	DefaultDotsPerNote   = 1
)

// Default note size in board units, for a note that never had one set (w
// and h 0): what the browser draws (web/src/canvas/notes.ts), so that the
// server and the browser agree on which notes a frame holds.
const (
	DefaultNoteW = 220
	DefaultNoteH = 160
)

// VoteScope is which notes a vote is on: every note, the notes a frame
// holds (their centre inside its box, as the browser decides), or the
// notes of one type.
type VoteScope struct {
	Kind    string `json:"kind"`
	FrameID string `json:"frameId,omitempty"`
	Type    string `json:"type,omitempty"`
}

// Vote is a board's dot vote, on the board header like the timer (docs/
// live-protocol.md, "Dot voting"). It carries totals only: who put which
// dot is in the vote's rows (VoteDots), never on the header, until the
// reveal ranks them into Results.
type Vote struct {
	ID            string    `json:"id"`
	State         string    `json:"state"`
	Scope         VoteScope `json:"scope"`
	PerPerson     int       `json:"perPerson"`
	PerNote       int       `json:"perNote"`
	Anonymous     bool      `json:"anonymous"`
	EndsWithTimer bool      `json:"endsWithTimer"`
	StartedBy     string    `json:"startedBy"`
	StartedAt     int64     `json:"startedAt"`
	// Voters is how many people have at least one dot down; Dots is how
	// many dots are down in all.
	Voters int `json:"voters"`
	Dots   int `json:"dots"`
	// Results is the ranking, set by the reveal (empty, not nil, when
	// nobody voted) and nil before it.
	Results []VoteResult `json:"results,omitempty"`
}

// MarshalJSON writes results for a revealed vote, [] when nobody voted,
// and leaves them out before the reveal.
func (v Vote) MarshalJSON() ([]byte, error) {
	type plain Vote
	w := struct {
		plain
		Results *[]VoteResult `json:"results,omitempty"`
	}{plain: plain(v)}
	if v.State == VoteRevealed {
		res := v.Results
		if res == nil {
			res = []VoteResult{}
		}
		w.Results = &res
	}
	return json.Marshal(w)
}

// VoteResult is one note's count in a revealed vote; Voters (each address
// once, sorted) only when the vote was not anonymous.
type VoteResult struct {
	NoteID string   `json:"noteId"`
	Count  int      `json:"count"`
	Voters []string `json:"voters,omitempty"`
}

// VoteDots is one vote row: the dots one person put on one note.
type VoteDots struct {
	Email  string
	NoteID string
	Count  int
}

// VoteAction is what the board's owner asks of its vote (POST
// /api/boards/{boardId}/vote). The options are start's; the other actions
// ignore them.
type VoteAction struct {
	Action        string
	PerPerson     int
	PerNote       int
	Anonymous     bool
	EndsWithTimer bool
	Scope         VoteScope
	// ID is the new vote's ID (start) and By who asks: the server sets
	// both, a body never does.
	ID string
	By string
}

// NewVoteAction is an action with start's defaults: 3 dots a person, 1 a
// note, anonymous, on every note, ending by hand.
func NewVoteAction() VoteAction {
	return VoteAction{PerPerson: DefaultDotsPerPerson, PerNote: DefaultDotsPerNote, Anonymous: true, Scope: VoteScope{Kind: ScopeAll}}
}

// Validate checks an action on its own, before any vote is looked at:
// EINVALID naming the field.
func (a *VoteAction) Validate() error {
	switch a.Action {
	case VoteStart:
	case VoteClose, VoteReveal, VoteClear:
		return nil
	case "":
		return FieldErrorf("action", "action is required: start, close, reveal or clear.")
	default:
		return FieldErrorf("action", "action must be start, close, reveal or clear.")
	}
	if a.PerPerson < 1 || a.PerPerson > MaxDotsPerPerson {
		return FieldErrorf("perPerson", "perPerson must be between 1 and %d.", MaxDotsPerPerson)
	}
	if a.PerNote < 1 || a.PerNote > a.PerPerson {
		return FieldErrorf("perNote", "perNote must be between 1 and perPerson (%d).", a.PerPerson)
	}
	return a.Scope.Validate()
}

// Validate checks a scope's shape (the frame itself is the store's to
// find).
func (s *VoteScope) Validate() error {
	switch s.Kind {
	case ScopeAll:
		if s.FrameID != "" || s.Type != "" {
			return FieldErrorf("scope", "A scope of kind all takes no frameId or type.")
		}
	case ScopeFrame:
		if s.Type != "" {
			return FieldErrorf("scope.type", "A scope of kind frame takes no type.")
		}
		return checkLen("scope.frameId", s.FrameID, MaxIDLen, true)
	case ScopeType:
		if s.FrameID != "" {
			return FieldErrorf("scope.frameId", "A scope of kind type takes no frameId.")
		}
		return checkLen("scope.type", s.Type, MaxShortField, true)
	default:
		return FieldErrorf("scope.kind", "scope.kind must be all, frame or type.")
	}
	return nil
}

// Holds reports whether note n is in scope s; frame is the scope's frame
// (nil when it is not live: then no note is in a frame scope).
func (s *VoteScope) Holds(n *Note, frame *Frame) bool {
	switch s.Kind {
	case ScopeFrame:
		if frame == nil {
			return false
		}
		w, h := n.W, n.H
		if w == 0 || h == 0 {
			w, h = DefaultNoteW, DefaultNoteH
		}
		cx, cy := n.X+w/2, n.Y+h/2
		fw, fh := min(max(frame.W, 40), 100_000), min(max(frame.H, 40), 100_000)
		return cx >= frame.X && cx <= frame.X+fw && cy >= frame.Y && cy <= frame.Y+fh
	case ScopeType:
		return n.Type == s.Type
	}
	return true
}

// timerLeft reports whether t (nil: none) has time left at now.
func timerLeft(t *Timer, now time.Time) bool {
	return t != nil && t.Remaining(now) > 0
}

// StartVote is the vote a start action a opens on a board whose vote is
// cur (nil: none) and whose timer is timer, at now. A revealed vote is
// replaced; an open or closed one is ECONFLICT (field action): reveal or
// clear it first. endsWithTimer needs a timer with time left (ECONFLICT,
// field endsWithTimer). The frame of a frame scope is the caller's to
// check.
func StartVote(cur *Vote, a VoteAction, now time.Time, timer *Timer) (*Vote, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if cur != nil && cur.State != VoteRevealed {
		return nil, &Error{Code: ECONFLICT, Field: "action", Message: "A vote is already " + cur.State + ": reveal or clear it before starting another."}
	}
	if a.EndsWithTimer && !timerLeft(timer, now) {
		return nil, &Error{Code: ECONFLICT, Field: "endsWithTimer", Message: "endsWithTimer needs the board's timer running with time left: start the timer first."}
	}
	return &Vote{ID: a.ID, State: VoteOpen, Scope: a.Scope, PerPerson: a.PerPerson, PerNote: a.PerNote,
		Anonymous: a.Anonymous, EndsWithTimer: a.EndsWithTimer, StartedBy: a.By, StartedAt: now.UnixMilli()}, nil
}

// CloseVote is cur after close (reveal false) or reveal (with rows, every
// row of the vote): cur itself when nothing changes (close of a closed or
// revealed vote, reveal of a revealed one), ECONFLICT when there is no
// vote.
func CloseVote(cur *Vote, reveal bool, rows []VoteDots) (*Vote, error) {
	if cur == nil {
		return nil, Errorf(ECONFLICT, "The board has no vote to %s: start one first.", map[bool]string{false: "close", true: "reveal"}[reveal])
	}
	if cur.State == VoteRevealed || (!reveal && cur.State == VoteClosed) {
		return cur, nil
	}
	next := *cur
	next.State = VoteClosed
	if reveal {
		next.State = VoteRevealed
		next.Results = Rank(rows, cur.Anonymous)
	}
	return &next, nil
}

// Rank is the results of rows: one per note with dots, by count (most
// first), ties by note ID; each with its voters (sorted) unless anonymous.
func Rank(rows []VoteDots, anonymous bool) []VoteResult {
	at := map[string]int{}
	out := []VoteResult{}
	for _, r := range rows {
		if r.Count <= 0 {
			continue
		}
		i, ok := at[r.NoteID]
		if !ok {
			i = len(out)
			at[r.NoteID] = i
			out = append(out, VoteResult{NoteID: r.NoteID})
		}
		out[i].Count += r.Count
		if !anonymous {
			out[i].Voters = append(out[i].Voters, r.Email)
		}
	}
	for i := range out {
		slices.Sort(out[i].Voters)
		out[i].Voters = slices.Compact(out[i].Voters)
	}
	slices.SortFunc(out, func(a, b VoteResult) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.NoteID, b.NoteID))
	})
	return out
}

// VoteDot is one person putting a dot on a note (Delta 1) or taking one
// back (Delta -1): POST /api/boards/{boardId}/votes.
type VoteDot struct {
	NoteID string
	Delta  int
	// By is who votes: the server sets it from the session.
	By string
}

// Validate checks a dot on its own: EINVALID naming the field.
func (d *VoteDot) Validate() error {
	if err := checkLen("noteId", d.NoteID, MaxIDLen, true); err != nil {
		return err
	}
	if d.Delta != 1 && d.Delta != -1 {
		return FieldErrorf("delta", "delta must be 1 (put a dot) or -1 (take one back).")
	}
	return nil
}

// DotTarget is what the store found for a dot: the note (nil when it is
// missing or deleted) and the frame of a frame scope (nil when none or
// not live).
type DotTarget struct {
	Note  *Note
	Frame *Frame
}

// CastDot applies dot d of a person whose dots in cur are mine (note ID →
// count) at now, with the board's timer: it returns the vote with its
// totals moved and the person's new count on the note. Errors: ECONFLICT
// when no vote is open or it ended with the timer; EINVALID (noteId) for a
// note that is missing, deleted or outside the scope (a dot taken back
// from a note that has since left the scope is allowed); ECONFLICT (field
// delta) when out of dots, at perNote, or taking back a dot not there.
func CastDot(cur *Vote, mine map[string]int, d VoteDot, t DotTarget, timer *Timer, now time.Time) (*Vote, int, error) {
	if err := d.Validate(); err != nil {
		return nil, 0, err
	}
	if cur == nil || cur.State != VoteOpen {
		return nil, 0, Errorf(ECONFLICT, "No vote is open on this board.")
	}
	if cur.EndsWithTimer && !timerLeft(timer, now) {
		return nil, 0, Errorf(ECONFLICT, "The vote ended with the board's timer.")
	}
	have, total := mine[d.NoteID], 0
	for _, c := range mine {
		total += c
	}
	if d.Delta < 0 {
		if have == 0 {
			return nil, 0, &Error{Code: ECONFLICT, Field: "delta", Message: "You have no dot on this note to take back."}
		}
	} else {
		if t.Note == nil {
			return nil, 0, FieldErrorf("noteId", "The board has no note %q.", d.NoteID)
		}
		if !cur.Scope.Holds(t.Note, t.Frame) {
			return nil, 0, FieldErrorf("noteId", "Note %q is not in this vote's scope.", d.NoteID)
		}
		if total >= cur.PerPerson {
			return nil, 0, &Error{Code: ECONFLICT, Field: "delta", Message: "You have no dots left."}
		}
		if have >= cur.PerNote {
			return nil, 0, &Error{Code: ECONFLICT, Field: "delta", Message: "This note has as many of your dots as one note may."}
		}
	}
	next := *cur
	next.Dots += d.Delta
	switch {
	case total == 0 && d.Delta > 0:
		next.Voters++
	case total == 1 && d.Delta < 0:
		next.Voters--
	}
	return &next, have + d.Delta, nil
}

// DotsLeft is what a person with dots mine has left in v (0 when v is nil
// or not open).
func DotsLeft(v *Vote, mine map[string]int) int {
	if v == nil || v.State != VoteOpen {
		return 0
	}
	total := 0
	for _, c := range mine {
		total += c
	}
	return max(0, v.PerPerson-total)
}

// HeaderOnly reports whether p acts only on the board's header extensions
// (its timer, its vote, a dot): such a push moves the version but not the
// board's updatedAt, and writes no note or item.
func (p *Push) HeaderOnly() bool {
	return (p.Timer != nil || p.Vote != nil || p.Dot != nil) && p.Board == nil && len(p.Notes.Upserted) == 0 && len(p.Notes.Deleted) == 0 &&
		len(p.TrackerItems.Upserted) == 0 && len(p.TrackerItems.Deleted) == 0 && !p.HasStructure()
}

// validateVote checks the vote action or dot a push carries (only the
// vote endpoints set them).
func (p *Push) validateVote() error {
	if p.Vote != nil {
		if err := p.Vote.Validate(); err != nil {
			return err
		}
	}
	if p.Dot != nil {
		return p.Dot.Validate()
	}
	return nil
}
