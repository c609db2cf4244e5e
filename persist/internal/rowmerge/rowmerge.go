// Package rowmerge is the rule both stores apply to an upserted row that
// carries a baseVersion (docs/sync.md, "How a push is merged"): which stored
// states of the row it needs, and what is written. Each store looks the
// states up its own way (bbolt in its transaction, PostgreSQL in one query
// after the board's row lock); the decision is made here, once, so that the
// bbolt store and every PostgreSQL node merge alike.
package rowmerge

import (
	"errors"
	"fmt"

	"corkboard/board"
	"corkboard/persist"
)

// State is one stored state of a row at Version: live, with the row's JSON
// as stored, or a tombstone (Data nil).
type State struct {
	Version int64
	Data    []byte
}

// Live reports whether s is a live state.
func (s *State) Live() bool { return s != nil && s.Data != nil }

// NeedsBase reports whether a row with baseVersion base, whose stored row is
// cur (nil when there is none), is merged, so that the store must look up
// its base: the newest revision at or below base.
func NeedsBase(base int64, cur *State) bool {
	return base >= 1 && cur != nil && cur.Version > base
}

// NeedsLastLive reports whether the store must also look up the row's last
// live state: the newest revision below the current row's version, when the
// current row is a tombstone (the row was deleted since its base).
func NeedsLastLive(base int64, cur *State) bool {
	return NeedsBase(base, cur) && !cur.Live()
}

// Outcome is how a row was written.
type Outcome int

const (
	// AsSent: written as the push sent it (no baseVersion, no stored row,
	// or nothing committed to it since the base).
	AsSent Outcome = iota
	// Fallback: the row had a baseVersion but its base is forgotten or a
	// tombstone, so it replaced the stored row whole.
	Fallback
	// Merged: merged into the stored row against its base.
	Merged
)

// Result is what Resolve decided for one row.
type Result[T any] struct {
	Outcome Outcome
	// Row is what to store: mine, or the merge (whose version, deletedAt and
	// the like the store still sets).
	Row T
	// Overlap reports that the merge overwrote lines of Theirs.
	Overlap bool
	// Revived reports that the row was a tombstone: the merge went into its
	// last live state and brings it back.
	Revived bool
	// Theirs is the row the merge went into, as stored: the current row, or
	// for a revival its last live state; TheirsVersion is its version.
	Theirs        T
	TheirsVersion int64
	// DeletedVersion is the version of the deletion a revival undoes.
	DeletedVersion int64
}

// Resolve applies the rule to mine, pushed with baseVersion, given the
// stored row cur (nil when there is none), its base (the newest revision at
// or below baseVersion; nil when there is none) and, for a tombstone, its
// last live state (the newest revision below cur's version). base and
// lastLive are read only when NeedsBase and NeedsLastLive say so. merge is
// board.MergeNote or board.MergeItem. It fails only when a stored state
// does not decode.
func Resolve[T any](mine T, baseVersion int64, cur, base, lastLive *State, merge func(base, theirs, mine T) (T, bool)) (Result[T], error) {
	res := Result[T]{Outcome: AsSent, Row: mine}
	if !NeedsBase(baseVersion, cur) {
		return res, nil
	}
	theirs := cur
	if !cur.Live() {
		theirs = lastLive
	}
	// Without a live base there is nothing to merge against (the base was
	// forgotten, or the row did not exist then); without a live state
	// before the deletion, nothing to merge into.
	if !base.Live() || !theirs.Live() {
		res.Outcome = Fallback
		return res, nil
	}
	var b, t T
	if err := decode(base.Data, &b); err != nil {
		return res, fmt.Errorf("decode revision at version %d: %w", base.Version, err)
	}
	if err := decode(theirs.Data, &t); err != nil {
		return res, fmt.Errorf("decode state at version %d: %w", theirs.Version, err)
	}
	res.Outcome = Merged
	res.Row, res.Overlap = merge(b, t, mine)
	res.Theirs, res.TheirsVersion = t, theirs.Version
	if !cur.Live() {
		res.Revived, res.DeletedVersion = true, cur.Version
	}
	return res, nil
}

// Tally gathers what the merges of one push did: the counts and events of
// persist.Applied, and the changelog entries that keep what they
// overwrote, which the store appends in the push's transaction.
type Tally struct {
	Merged, Fallbacks int
	Events            []persist.MergeEvent
	// Entries are the changelog entries to append, in order.
	Entries []persist.NewLogEntry
	// entryOf is, for each event, the index in Entries of the entry that
	// holds what it lost (-1 for none).
	entryOf []int
}

// count adds one row's outcome to the counts.
func (t *Tally) count(o Outcome) {
	switch o {
	case Merged:
		t.Merged++
	case Fallback:
		t.Fallbacks++
	}
}

func (t *Tally) event(kind, table, id string, version int64, entry int) {
	t.Events = append(t.Events, persist.MergeEvent{Kind: kind, Table: table, ID: id, Version: version})
	t.entryOf = append(t.entryOf, entry)
}

// AddNote records a note's outcome. An overlap logs theirs as an
// update_note entry; a revival logs the note as it was when deleted as a
// delete_note entry, which also stands for an overlap of the same merge
// (it holds theirs whole). render is the store's note renderer: nil fails
// when something must be logged, loudly rather than losing it.
func (t *Tally) AddNote(res Result[board.Note], render func(board.Note) []byte) error {
	t.count(res.Outcome)
	if !res.Overlap && !res.Revived {
		return nil
	}
	if render == nil {
		return errors.New("a merge overwrote part of a note and the store has no note renderer to log it (SetNoteRenderer was not called)")
	}
	id := res.Theirs.ID
	action := persist.ActionUpdateNote
	if res.Revived {
		action = persist.ActionDeleteNote
	}
	entry := len(t.Entries)
	t.Entries = append(t.Entries, persist.NewLogEntry{NoteID: id, Action: action, Content: render(res.Theirs)})
	if res.Revived {
		t.event(persist.MergeRevived, persist.MergeTableNote, id, res.DeletedVersion, entry)
	}
	if res.Overlap {
		t.event(persist.MergeOverlap, persist.MergeTableNote, id, res.TheirsVersion, entry)
	}
	return nil
}

// AddItem records a tracker item's outcome. Items have no changelog: what
// an overlap overwrote stays in the item's revisions only, and its events
// name no entry.
func (t *Tally) AddItem(res Result[board.TrackerItem]) {
	t.count(res.Outcome)
	if res.Revived {
		t.event(persist.MergeRevived, persist.MergeTableItem, res.Theirs.ID, res.DeletedVersion, -1)
	}
	if res.Overlap {
		t.event(persist.MergeOverlap, persist.MergeTableItem, res.Theirs.ID, res.TheirsVersion, -1)
	}
}

// AddRow records the outcome of a row that has no changelog (a frame or
// connector, table MergeTableFrame or MergeTableConnector), as AddItem.
func AddRow[T any](t *Tally, table, id string, res Result[T]) {
	t.count(res.Outcome)
	if res.Revived {
		t.event(persist.MergeRevived, table, id, res.DeletedVersion, -1)
	}
	if res.Overlap {
		t.event(persist.MergeOverlap, table, id, res.TheirsVersion, -1)
	}
}

// Logged fills the events' LogKey from the entries as appended (in the
// order of Entries).
func (t *Tally) Logged(entries []persist.LogEntry) error {
	if len(entries) != len(t.Entries) {
		return fmt.Errorf("%d changelog entries appended for %d merges", len(entries), len(t.Entries))
	}
	for i, e := range t.entryOf {
		if e >= 0 {
			t.Events[i].LogKey = entries[e].Key
		}
	}
	return nil
}
