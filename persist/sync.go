package persist

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"corkboard/board"
)

// SyncStore is the storage behind sync: it applies pushes and owns the board
// version, answers "what changed since", and forgets old tombstones and
// idempotency keys. Rooms and the hub speak only this interface. Every
// method answers ENOTFOUND for an unclaimed board.
//
// Versions: a claimed board starts at 0; every push that changes something
// and is not a replay takes the next version, exactly one higher, in one
// transaction with every row it writes (each stamped with that version), so
// that concurrent pushes to one board get 1..N with no gap and no
// duplicate, and a reader never sees a version without its rows.
type SyncStore interface {
	// ApplyPushes validates (board.Push.Validate, the key's length) and
	// applies pushes to one board in order, in one transaction, and returns
	// one entry per input. A push that fails validation gets EINVALID in its
	// own entry and writes nothing, its idempotency key included; the others
	// still apply. A push whose key the board already recorded is a replay:
	// it writes nothing and answers the version the key first produced. A
	// push that changes nothing (empty, or deleting only IDs that are not
	// live) keeps the version and the board's updatedAt and answers the
	// current version without Changes, but records its key. Within a push,
	// upserts apply before deletions, and deleting a note or frame deletes
	// the connectors attached to it (after the push's upserts); a push
	// whose connector names an end that is neither a live note nor a live
	// frame once its upserts apply gets EINVALID (board.MissingEnd) in its
	// own entry and writes nothing. The call's own error is ENOTFOUND for
	// an unclaimed board (nothing written) or an internal one.
	ApplyPushes(ctx context.Context, boardID string, pushes []PushInput) ([]Applied, error)
	// ChangesSince answers a pull: the rows changed after since and the IDs
	// deleted after it. since 0 is the full live state; since older than the
	// tombstone horizon or newer than the board is the full live state with
	// Reset; since equal to the version is the header with empty lists.
	// Lists are never nil. EINVALID (field "since") for a negative since.
	ChangesSince(ctx context.Context, boardID string, since int64) (*board.Changes, error)
	// ScanChangesSince answers the pull ChangesSince answers, part by part,
	// without holding it whole: fn gets the header first, then every row
	// and deleted ID in the order of the answer's JSON (notes, deleted
	// note IDs, items, deleted item IDs, frames, deleted frame IDs,
	// connectors, deleted connector IDs; each list in ChangesSince's
	// order). Every part comes from one version of the board, read in one
	// read transaction (or snapshot), so a push committed meanwhile is not
	// half in it. The part is valid only during the call; the note or item
	// it points to is the caller's to keep. fn's error stops the scan and comes back as it is (errors.Is
	// finds it); ENOTFOUND and EINVALID as ChangesSince.
	ScanChangesSince(ctx context.Context, boardID string, since int64, fn func(p *ChangePart) error) error
	// CurrentVersion returns the board's version.
	CurrentVersion(ctx context.Context, boardID string) (int64, error)
	// BoardState returns the whole live board, header and rows, at one
	// version.
	BoardState(ctx context.Context, boardID string) (*board.State, error)
	// PruneTombstones forgets deletions recorded (by the store's clock)
	// strictly before cutoff, moving each board's horizon up to the highest
	// version it forgot; it returns how many it forgot.
	PruneTombstones(ctx context.Context, cutoff time.Time) (int, error)
	// SweepIdempotencyKeys forgets keys recorded strictly before cutoff,
	// after which a push repeating one applies again; it returns how many.
	SweepIdempotencyKeys(ctx context.Context, cutoff time.Time) (int, error)
	// PruneRevisions forgets the revisions (superseded states of rows, the
	// bases of merges) superseded (by the store's clock) strictly before
	// cutoff, except the newest keep revisions of each row, and returns how
	// many it forgot. A push whose baseVersion names a forgotten state
	// falls back to the whole-row rule. It reads an index, not every
	// revision: a revision it kept for keep is looked at again only once
	// its row has a newer one.
	PruneRevisions(ctx context.Context, cutoff time.Time, keep int) (int, error)
}

// KeepRevisions is how many revisions of each row the sweep keeps however
// old they are: with the tombstone retention (30 days by default) as the
// cutoff, a merge finds its base when the base is at most that old or
// among the row's last KeepRevisions states, whichever reaches further.
const KeepRevisions = 100

// MaxIdempotencyKeyLen is the longest Idempotency-Key accepted, in bytes.
const MaxIdempotencyKeyLen = 128

// Merging (docs/sync.md, "How a push is merged"): an upserted row with a
// baseVersion of 1 or more is the client's edit of the row as it was at
// that version. When the row changed since, the store merges the edit into
// the current row (board.MergeNote, board.MergeItem) against that earlier
// state, which it keeps as a revision: every push that overwrites or
// deletes a row keeps the state it replaced (the row's JSON as stored, or
// its tombstone), in the push's own transaction, until PruneRevisions
// forgets it. A row without baseVersion (or 0) replaces the stored one
// whole, as it always did.
//
// What a merge overwrites is not lost: when both sides changed the same
// lines of a note, the store appends an update_note changelog entry
// holding the note as it was (theirs) in the push's transaction; when an
// edit brings back a note deleted since its base, a delete_note entry
// holding the note as it was when deleted. Tracker items have no
// changelog: what a merge overwrote in an item stays in the revisions only.

// Kinds of MergeEvent.
const (
	// MergeOverlap: both sides changed the same lines of a text field, and
	// the push's lines won.
	MergeOverlap = "overlap"
	// MergeRevived: the row was deleted since the push's base, and the
	// merged edit brought it back to life.
	MergeRevived = "revived"
)

// Tables of MergeEvent.
const (
	MergeTableNote      = "note"
	MergeTableItem      = "item"
	MergeTableFrame     = "frame"
	MergeTableConnector = "connector"
)

// Changelog actions the store itself appends when a merge overwrites
// something (the changelog package's names for the same actions).
const (
	ActionUpdateNote = "update_note"
	ActionDeleteNote = "delete_note"
)

// MergeEvent tells that a merge of one row replaced something another
// push had committed: lines of theirs (an overlap) or a deletion (a
// revival). A revived note whose merge also overlapped has both events,
// and both name the one delete_note entry, which holds the note whole.
type MergeEvent struct {
	// Kind is MergeOverlap or MergeRevived.
	Kind string
	// Table is MergeTableNote or MergeTableItem.
	Table string
	ID    string
	// Version is the version of the change that lost: theirs' version for
	// an overlap, the deletion's version for a revival.
	Version int64
	// LogKey is the changelog entry that holds what was lost ("" for
	// items, which have no changelog).
	LogKey string
}

// PushInput is one validated-or-not push waiting to be applied, with the
// client's idempotency key ("" for none).
type PushInput struct {
	Push           *board.Push
	IdempotencyKey string
}

// Applied is the outcome of one push.
type Applied struct {
	// Version is the board version the push produced; for a replayed key it
	// is the version the key first produced, and for a push that changes
	// nothing the board's current version.
	Version int64
	// Replayed is true when the idempotency key had already been applied:
	// nothing was written.
	Replayed bool
	// Changes holds exactly what the push changed, every row at Version, in
	// the shape of a pull answer since Version-1. It is nil when no row was
	// written (replay, a push that changes nothing, error).
	Changes *board.Changes
	// Err is the push's own failure (EINVALID); the other pushes of the same
	// call are unaffected.
	Err error
	// Merged counts the rows of the push merged against their base (a
	// revival included).
	Merged int
	// Fallbacks counts the rows with a baseVersion whose base the store no
	// longer had (forgotten, or a tombstone): they replaced the row whole.
	Fallbacks int
	// Events lists what the push's merges overwrote, in the order of the
	// push's rows (notes, then items); nil when nothing was.
	Events []MergeEvent
}

// PartKind tells what a ChangePart holds.
type PartKind uint8

// Kinds of ChangePart, in the order ScanChangesSince gives them.
const (
	PartHeader PartKind = iota + 1
	PartNote
	PartDeletedNote
	PartItem
	PartDeletedItem
	// Frames and connectors (Corkboard's extension) come after the spec's
	// rows, frames first.
	PartFrame
	PartDeletedFrame
	PartConnector
	PartDeletedConnector
)

// ChangePart is one piece of a streamed pull answer (ScanChangesSince).
type ChangePart struct {
	Kind PartKind
	// Header is the answer's board header, version and reset flag
	// (PartHeader).
	Header ChangesHeader
	// Raw is a live row's JSON as the store keeps it (PartNote, PartItem,
	// PartFrame, PartConnector). Stores keep a row in its wire form, what
	// json.Marshal gives for it, so a pull answer copies Raw as it is
	// rather than decoding and encoding every row again (on a full pull
	// of 10,000 notes that was 85 % of the server's work). Raw is valid
	// only until fn returns.
	Raw []byte
	// Note is a live note (PartNote); nil until Decode.
	Note *board.Note
	// Item is a live tracker item (PartItem); nil until Decode.
	Item *board.TrackerItem
	// Frame is a live frame (PartFrame); nil until Decode.
	Frame *board.Frame
	// Connector is a live connector (PartConnector); nil until Decode.
	Connector *board.Connector
	// ID is a deleted row's ID (PartDeletedNote, PartDeletedItem,
	// PartDeletedFrame, PartDeletedConnector).
	ID string
}

// Decode fills a live row's typed field (Note, Item, Frame or Connector)
// from Raw. It does nothing for other parts or when the field is set: a
// reader that needs the row as a value calls it, a reader that writes
// the row out does not.
func (p *ChangePart) Decode() error {
	switch {
	case p.Kind == PartNote && p.Note == nil:
		p.Note = new(board.Note)
		return decodeRow(p.Raw, p.Note, "note")
	case p.Kind == PartItem && p.Item == nil:
		p.Item = new(board.TrackerItem)
		return decodeRow(p.Raw, p.Item, "tracker item")
	case p.Kind == PartFrame && p.Frame == nil:
		p.Frame = new(board.Frame)
		return decodeRow(p.Raw, p.Frame, "frame")
	case p.Kind == PartConnector && p.Connector == nil:
		p.Connector = new(board.Connector)
		return decodeRow(p.Raw, p.Connector, "connector")
	}
	return nil
}

func decodeRow(raw []byte, v any, noun string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %s: %w", noun, err)
	}
	return nil
}

// ChangesHeader is what a pull answer says besides its lists: the board
// header, the version the answer brings the client to, and whether the
// client must drop the rows it has that are not in it.
type ChangesHeader struct {
	Board         board.Header
	ServerVersion int64
	Reset         bool
	// Phases is the board's phase configuration at that version (nil
	// when it has none). A pull answer does not carry it; a snapshot
	// rendered from a full scan does.
	Phases *board.Phases
}

// ChangeScanner is the streaming read of SyncStore.
type ChangeScanner interface {
	ScanChangesSince(ctx context.Context, boardID string, since int64, fn func(p *ChangePart) error) error
}

// CollectChanges is ChangesSince built on ScanChangesSince: the whole
// answer in memory. Stores answer ChangesSince with it, so that the two
// reads never disagree.
func CollectChanges(ctx context.Context, s ChangeScanner, boardID string, since int64) (*board.Changes, error) {
	ch := &board.Changes{
		Notes:                 []board.Note{},
		DeletedNoteIDs:        []string{},
		TrackerItems:          []board.TrackerItem{},
		DeletedTrackerItemIDs: []string{},
	}
	err := s.ScanChangesSince(ctx, boardID, since, func(p *ChangePart) error {
		if err := p.Decode(); err != nil {
			return err
		}
		switch p.Kind {
		case PartHeader:
			ch.Board, ch.ServerVersion, ch.Reset = p.Header.Board, p.Header.ServerVersion, p.Header.Reset
		case PartNote:
			ch.Notes = append(ch.Notes, *p.Note)
		case PartDeletedNote:
			ch.DeletedNoteIDs = append(ch.DeletedNoteIDs, p.ID)
		case PartItem:
			ch.TrackerItems = append(ch.TrackerItems, *p.Item)
		case PartDeletedItem:
			ch.DeletedTrackerItemIDs = append(ch.DeletedTrackerItemIDs, p.ID)
		case PartFrame:
			ch.Frames = append(ch.Frames, *p.Frame)
		case PartDeletedFrame:
			ch.DeletedFrameIDs = append(ch.DeletedFrameIDs, p.ID)
		case PartConnector:
			ch.Connectors = append(ch.Connectors, *p.Connector)
		case PartDeletedConnector:
			ch.DeletedConnectorIDs = append(ch.DeletedConnectorIDs, p.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// ValidatePushes gives each push that cannot be applied its EINVALID
// answer, before any transaction; valid says which may be applied. Both
// stores' ApplyPushes start with it.
func ValidatePushes(pushes []PushInput) (out []Applied, valid []bool) {
	out = make([]Applied, len(pushes))
	valid = make([]bool, len(pushes))
	for i, in := range pushes {
		switch {
		case in.Push == nil:
			out[i].Err = board.Errorf(board.EINVALID, "Request body must be a JSON object.")
		case len(in.IdempotencyKey) > MaxIdempotencyKeyLen:
			out[i].Err = board.FieldErrorf("Idempotency-Key", "Idempotency-Key must be at most %d bytes.", MaxIdempotencyKeyLen)
		default:
			out[i].Err = in.Push.Validate()
		}
		valid[i] = out[i].Err == nil
	}
	return out, valid
}
