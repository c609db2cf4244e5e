package board

import (
	"encoding/json"
	"time"
)

// Board is a board as stored: its identity, owner, sharing and phase
// configuration, and the version counter that sync moves.
type Board struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	OwnerEmail    string    `json:"ownerEmail"`
	InvitedEmails []string  `json:"invitedEmails"`
	CreatedAt     time.Time `json:"createdAt"`
	// UpdatedAt is the ISO 8601 time the last push gave for the board (or the
	// server's time when the push gave none).
	UpdatedAt string  `json:"updatedAt"`
	Version   int64   `json:"version"`
	Phases    *Phases `json:"phases,omitempty"`
	// Timer is the board's countdown (timer.go), nil when it has none.
	Timer *Timer `json:"timer,omitempty"`
	// Vote is the board's dot vote (vote.go), nil when it has none.
	Vote *Vote `json:"vote,omitempty"`
	// Roles maps an invitee to the role the owner gave them when it is
	// not RoleEdit, the default (rights.go); nil when every invitee edits.
	Roles map[string]string `json:"roles,omitempty"`
}

// Header is the board part of a pull answer.
type Header struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Version   int64  `json:"version"`
	UpdatedAt string `json:"updatedAt"`
	// Timer is Corkboard's extension (timer.go): left out when the board
	// has none, so that a spec client sees nothing new.
	Timer *Timer `json:"timer,omitempty"`
	// Vote is Corkboard's extension (vote.go), left out like the timer.
	Vote *Vote `json:"vote,omitempty"`
}

// Header returns the pull-answer view of b.
func (b *Board) Header() Header {
	return Header{ID: b.ID, Name: b.Name, Version: b.Version, UpdatedAt: b.UpdatedAt, Timer: b.Timer, Vote: b.Vote}
}

// HasMember reports whether email owns b or is invited to it.
func (b *Board) HasMember(email string) bool {
	if b.OwnerEmail == email {
		return true
	}
	for _, e := range b.InvitedEmails {
		if e == email {
			return true
		}
	}
	return false
}

// Phases is a board's phase configuration. Each phase is a JSON object with
// at least a string "id"; other keys (name, colour, …) belong to the client
// and are kept as sent.
type Phases struct {
	Phases         []json.RawMessage `json:"phases"`
	CurrentPhaseID string            `json:"currentPhaseId"`
}

// Note is a sticky note. On pull, Version is the board version that last
// changed it and DeletedAt is null for a live note.
type Note struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Content string  `json:"content"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	// W and H are the note's size in board units, Corkboard's extension
	// (docs/sync.md, "Note size"): both set or both 0, and 0 means never
	// set, which is left out of every answer so the spec's clients see
	// nothing new.
	W         float64 `json:"w,omitempty"`
	H         float64 `json:"h,omitempty"`
	Color     string  `json:"color"`
	Type      string  `json:"type"`
	UpdatedAt string  `json:"updatedAt"`
	Version   int64   `json:"version"`
	DeletedAt *string `json:"deletedAt"`
	// BaseVersion is the version of the server copy a pushed edit started
	// from: with it the push is merged into the stored row (MergeNote), 0
	// replaces the row. It comes only in pushes and is never stored or
	// sent.
	BaseVersion int64 `json:"-"`
	// Extra holds the fields a client sent that are none of the above, in
	// the order sent; MarshalJSON writes them after the note's own.
	Extra []Field `json:"-"`
	// Locked is Corkboard's extension (rights.go): only the board's owner
	// may change or delete a locked note. Left out when false.
	Locked bool `json:"locked,omitempty"`
	// CreatedBy is the e-mail of whoever first created the note, set by
	// the store from the push's Author (rights.go); a client's value is
	// ignored. Empty for notes from before it existed: they count as the
	// owner's.
	CreatedBy string `json:"createdBy,omitempty"`
	// LockedSent reports that a push carried "locked": a push without it
	// keeps the stored value. Never stored or sent.
	LockedSent bool `json:"-"`
}

// TrackerItem is a tracker work item. The spec names id, key, type, summary
// and updatedAt; description, status and parentId are Corkboard's additions
// (docs/sync.md) so that generated children can point at their parent.
type TrackerItem struct {
	ID          string  `json:"id"`
	Key         string  `json:"key"`
	Type        string  `json:"type"`
	Summary     string  `json:"summary"`
	Description string  `json:"description,omitempty"`
	Status      string  `json:"status,omitempty"`
	ParentID    string  `json:"parentId,omitempty"`
	UpdatedAt   string  `json:"updatedAt"`
	Version     int64   `json:"version"`
	DeletedAt   *string `json:"deletedAt"`
	// BaseVersion is as Note's: merge with it, replace without.
	BaseVersion int64 `json:"-"`
	// Extra holds the fields a client sent that are none of the above
	// (priority, assignee, labels …), in the order sent.
	Extra []Field `json:"-"`
}

// Push is one batch of client mutations, applied atomically.
type Push struct {
	ClientVersion int64       `json:"clientVersion"`
	Board         *BoardPatch `json:"board,omitempty"`
	Notes         NoteChanges `json:"notes"`
	TrackerItems  ItemChanges `json:"trackerItems"`
	// Connectors and Frames are Corkboard's extension (structure.go): a
	// push without them is a spec push.
	Connectors ConnectorChanges `json:"connectors,omitzero"`
	Frames     FrameChanges     `json:"frames,omitzero"`
	// Timer is an action on the board's timer, applied with the store's
	// clock in the push's transaction. Only the timer endpoint sets it:
	// a sync push never carries one, so that no client writes endsAt.
	Timer *TimerAction `json:"-"`
	// Vote is an action on the board's dot vote and Dot one person's dot
	// (vote.go), applied in the push's transaction with the vote's rows.
	// Only the vote endpoints set them, as the timer's.
	Vote *VoteAction `json:"-"`
	Dot  *VoteDot    `json:"-"`
	// Author is who pushes, as the board guard decided (rights.go): the
	// store checks locks and roles against the rows as stored, in the
	// push's transaction. nil is a push nobody's rights limit (the
	// server's own), which still keeps createdBy and locked as stored.
	Author *Author `json:"-"`
}

// BoardPatch carries the board fields a push may change.
type BoardPatch struct {
	Name      string `json:"name"`
	UpdatedAt string `json:"updatedAt"`
}

// NoteChanges lists upserted notes and deleted note IDs.
type NoteChanges struct {
	Upserted []Note   `json:"upserted"`
	Deleted  []string `json:"deleted"`
}

// ItemChanges lists upserted tracker items and deleted item IDs.
type ItemChanges struct {
	Upserted []TrackerItem `json:"upserted"`
	Deleted  []string      `json:"deleted"`
}

// Changes is what a pull answers for since < serverVersion, and what a room
// fans out after each applied push: every row changed after a version, the
// IDs deleted after it, and the board header.
type Changes struct {
	Board                 Header        `json:"board"`
	Notes                 []Note        `json:"notes"`
	DeletedNoteIDs        []string      `json:"deletedNoteIds"`
	TrackerItems          []TrackerItem `json:"trackerItems"`
	DeletedTrackerItemIDs []string      `json:"deletedTrackerItemIds"`
	// The connector and frame lists are Corkboard's extension, left out
	// when empty (nil or not) so that a spec client sees nothing new.
	// Frames come before connectors, whose ends they may be.
	Frames              []Frame     `json:"frames,omitempty"`
	DeletedFrameIDs     []string    `json:"deletedFrameIds,omitempty"`
	Connectors          []Connector `json:"connectors,omitempty"`
	DeletedConnectorIDs []string    `json:"deletedConnectorIds,omitempty"`
	ServerVersion       int64       `json:"serverVersion"`
	// Reset is true when the client's since is older than the tombstone
	// horizon: the answer is the full state and the client must drop rows it
	// has that are not in it.
	Reset bool `json:"reset,omitempty"`
}

// State is a whole board at one version: the board header, every live note,
// tracker item, connector and frame. It is what a board snapshot holds.
type State struct {
	Board        Header        `json:"board"`
	Phases       *Phases       `json:"phases,omitempty"`
	Notes        []Note        `json:"notes"`
	TrackerItems []TrackerItem `json:"trackerItems"`
	Frames       []Frame       `json:"frames,omitempty"`
	Connectors   []Connector   `json:"connectors,omitempty"`
}
