package persist

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"time"

	"corkboard/board"
)

// A dump is every record a store keeps, exactly as stored (versions, times
// and hashes included), streamed from one backend into another by
// `corkboard migrate`. The records below are the dump's shapes; a source
// calls a DumpSink once per record, in the order DumpSink lists, so that a
// record always comes after the records it refers to (a board before its
// rows).

// Row kinds of a RowRecord.
const (
	RowNote      = "n"
	RowItem      = "i"
	RowFrame     = "f"
	RowConnector = "c"
)

// CustomerRecord maps a payment provider's customer id to a user.
type CustomerRecord struct {
	CustomerID string
	Email      string
}

// BillingEventRecord is a provider event id already applied.
type BillingEventRecord struct {
	EventID     string
	ProcessedAt time.Time
}

// UsageRecord is a user's AI credit usage for one month ("2026-11").
type UsageRecord struct {
	Email string
	Month string
	Used  int
}

// SessionRecord is a session under its id (the SHA-256 of the client's
// token, never the token).
type SessionRecord struct {
	ID      []byte
	Session Session
}

// OTPRecord is the one-time code pending for an address.
type OTPRecord struct {
	Email string
	OTP   OTP
}

// BoardRecord is a claimed board: its header, owner, invitees in invitation
// order, phases and version, and the tombstone horizon.
type BoardRecord struct {
	Board   board.Board
	Horizon int64
}

// RowRecord is one note or tracker item row of a board: a live row holds
// its JSON (Data), a tombstone holds none and the time of its deletion.
type RowRecord struct {
	BoardID   string
	Kind      string // RowNote, RowItem, RowFrame or RowConnector
	ID        string
	Version   int64
	Data      []byte    // nil for a tombstone
	DeletedAt time.Time // zero for a live row
}

// RevisionRecord is one revision of a row: a state a push superseded (the
// row's JSON as stored, or nothing for a tombstone), at the version that
// wrote it, and when it was superseded. Revisions are the bases pushes with
// baseVersion merge against (docs/sync.md, "How a push is merged").
type RevisionRecord struct {
	BoardID      string
	Kind         string // RowNote, RowItem, RowFrame or RowConnector
	ID           string
	Version      int64
	Data         []byte // nil for a tombstone
	SupersededAt time.Time
}

// VoteDotsRecord is one row of a board's dot vote: the dots one person
// put on one note in vote VoteID (docs/api.md, "Dot voting").
type VoteDotsRecord struct {
	BoardID string
	VoteID  string
	Email   string
	NoteID  string
	Count   int
}

// IdempotencyKeyRecord is a recorded idempotency key: the version it
// produced and when it was recorded.
type IdempotencyKeyRecord struct {
	BoardID    string
	Key        string
	Version    int64
	RecordedAt time.Time
}

// ChangelogStateRecord is a board's changelog bookkeeping: the last stamp
// handed out, current.md with the version and phases (as JSON) it was
// rendered from, and the version of the last point-in-time snapshot.
type ChangelogStateRecord struct {
	BoardID         string
	Stamp           string
	Current         []byte // nil when none was stored
	CurrentVersion  int64
	CurrentPhases   []byte
	SnapshotVersion int64
}

// LogEntryRecord is one changelog entry with its content.
type LogEntryRecord struct {
	BoardID string
	Entry   LogEntry
}

// SnapshotRecord is one point-in-time snapshot.
type SnapshotRecord struct {
	BoardID  string
	Key      string
	Markdown []byte
}

// DumpSink receives a dump. The source calls, in this order: Secret once;
// every User, Customer, BillingEvent, Usage, Session and OTP; then for each
// board: Board, its Rows (notes, then items, each in ID order), its
// Revisions (after the rows they belong to), its VoteDots, its IdempotencyKeys, its ChangelogState (when it has one), its LogEntries
// (in key order), its Snapshots and its read-only Links. Records handed over are the sink's:
// the source never touches them again. An error stops the dump and comes
// back from it.
type DumpSink interface {
	Secret(ctx context.Context, secret []byte) error
	User(ctx context.Context, u User) error
	Customer(ctx context.Context, c CustomerRecord) error
	BillingEvent(ctx context.Context, e BillingEventRecord) error
	Usage(ctx context.Context, u UsageRecord) error
	Session(ctx context.Context, s SessionRecord) error
	OTP(ctx context.Context, o OTPRecord) error
	Board(ctx context.Context, b BoardRecord) error
	Row(ctx context.Context, r RowRecord) error
	Revision(ctx context.Context, r RevisionRecord) error
	VoteDots(ctx context.Context, r VoteDotsRecord) error
	IdempotencyKey(ctx context.Context, k IdempotencyKeyRecord) error
	ChangelogState(ctx context.Context, c ChangelogStateRecord) error
	LogEntry(ctx context.Context, e LogEntryRecord) error
	Snapshot(ctx context.Context, s SnapshotRecord) error
	// Link is one of the board's read-only links (expired ones too: the
	// destination drops them as the source would).
	Link(ctx context.Context, l Link) error
}

// Count names the kinds of records a dump holds, for DumpCounts.
const (
	CountSecret         = "secret"
	CountUsers          = "users"
	CountCustomers      = "customers"
	CountBillingEvents  = "billing events"
	CountUsage          = "usage months"
	CountSessions       = "sessions"
	CountOTPs           = "one-time codes"
	CountBoards         = "boards"
	CountMembers        = "board members"
	CountNotes          = "notes"
	CountItems          = "tracker items"
	CountFrames         = "frames"
	CountConnectors     = "connectors"
	CountTombstones     = "tombstones"
	CountRevisions      = "revisions"
	CountVoteDots       = "vote dots"
	CountKeys           = "idempotency keys"
	CountChangelogState = "changelog states"
	CountLogEntries     = "changelog entries"
	CountSnapshots      = "snapshots"
	CountLinks          = "read-only links"
)

// CountKinds lists the kinds of DumpCounts in the order a report shows them.
var CountKinds = []string{
	CountSecret, CountUsers, CountCustomers, CountBillingEvents, CountUsage, CountSessions, CountOTPs,
	CountBoards, CountMembers, CountNotes, CountItems, CountFrames, CountConnectors, CountTombstones, CountRevisions, CountVoteDots, CountKeys,
	CountChangelogState, CountLogEntries, CountSnapshots, CountLinks,
}

// BoardCounts is what one board holds, for comparing two copies of it.
type BoardCounts struct {
	Version    int64
	Horizon    int64
	Notes      int64 // live
	Items      int64 // live
	Frames     int64 // live
	Connectors int64 // live
	Tombstones int64
	Revisions  int64
	VoteDots   int64
	Keys       int64
	LogEntries int64
	Snapshots  int64
	Links      int64
	// Rows is the RowsDigest of the board's rows, live and tombstones:
	// equal digests mean equal rows, content included.
	Rows [sha256.Size]byte
}

// Of is b's count of records of kind (a Count* name), or nil for a kind
// that is not counted per board, so that whoever counts a dump's records
// maps a kind to its board's field in one place.
func (b *BoardCounts) Of(kind string) *int64 {
	for _, f := range []struct {
		kind string
		n    *int64
	}{
		{CountNotes, &b.Notes}, {CountItems, &b.Items}, {CountFrames, &b.Frames}, {CountConnectors, &b.Connectors}, {CountTombstones, &b.Tombstones},
		{CountRevisions, &b.Revisions}, {CountVoteDots, &b.VoteDots}, {CountKeys, &b.Keys}, {CountLogEntries, &b.LogEntries}, {CountSnapshots, &b.Snapshots}, {CountLinks, &b.Links},
	} {
		if f.kind == kind {
			return f.n
		}
	}
	return nil
}

// DumpCounts counts a store's records: per kind (the Count* names) and per
// board.
type DumpCounts struct {
	Kinds  map[string]int64
	Boards map[string]BoardCounts
}

// NewDumpCounts returns empty counts.
func NewDumpCounts() DumpCounts {
	return DumpCounts{Kinds: map[string]int64{}, Boards: map[string]BoardCounts{}}
}

// RowsDigest hashes a board's rows in dump order (notes, then items, each
// in ID order): kind, ID, version, deletion time and the stored JSON of
// each. Two copies of a board have the same digest exactly when their rows
// are the same.
type RowsDigest struct {
	h hash.Hash
}

// NewRowsDigest returns the digest of no rows.
func NewRowsDigest() *RowsDigest { return &RowsDigest{h: sha256.New()} }

// Add adds the next row.
func (d *RowsDigest) Add(r RowRecord) {
	var buf [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(buf[:], uint64(len(b)))
		d.h.Write(buf[:])
		d.h.Write(b)
	}
	field([]byte(r.Kind))
	field([]byte(r.ID))
	binary.BigEndian.PutUint64(buf[:], uint64(r.Version))
	d.h.Write(buf[:])
	if r.Data == nil {
		binary.BigEndian.PutUint64(buf[:], uint64(r.DeletedAt.UnixNano()))
		d.h.Write([]byte{'T'})
		d.h.Write(buf[:])
		return
	}
	d.h.Write([]byte{'L'})
	field(r.Data)
}

// Sum returns the digest of the rows added so far.
func (d *RowsDigest) Sum() [sha256.Size]byte {
	var out [sha256.Size]byte
	d.h.Sum(out[:0])
	return out
}
