package board

// Limits bound what one board and one person may keep, so that one account
// cannot grow the server's storage and the memory of its reads without
// bound (docs/operations.md lists the flags, docs/api.md the answers). A
// zero field takes its default (DefaultLimits); limits are per server, the
// same for every plan.
type Limits struct {
	// NotesPerBoard is the most live notes a board holds; deleted notes
	// (tombstones) do not count.
	NotesPerBoard int
	// ItemsPerBoard is the most live tracker items a board holds.
	ItemsPerBoard int
	// ConnectorsPerBoard is the most live connectors a board holds.
	ConnectorsPerBoard int
	// FramesPerBoard is the most live frames a board holds.
	FramesPerBoard int
	// BoardsPerUser is the most boards one person may own (claim);
	// boards they are invited to do not count.
	BoardsPerUser int
	// ChangelogBytesPerBoard bounds the content of a board's changelog:
	// past it the oldest entries are pruned, except each note's newest
	// (and the newest rename), so the history never stops taking entries
	// (docs/changelog.md).
	ChangelogBytesPerBoard int64
}

// Defaults of Limits.
const (
	DefaultNotesPerBoard      = 50_000
	DefaultItemsPerBoard      = 50_000
	DefaultConnectorsPerBoard = 50_000
	DefaultFramesPerBoard     = 1_000
	DefaultBoardsPerUser      = 1_000
	// DefaultChangelogBytesPerBoard is 64 MiB: about 500 full saves of a
	// note of the largest size, tens of thousands of ordinary ones.
	DefaultChangelogBytesPerBoard = 64 << 20
)

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.NotesPerBoard == 0 {
		l.NotesPerBoard = DefaultNotesPerBoard
	}
	if l.ItemsPerBoard == 0 {
		l.ItemsPerBoard = DefaultItemsPerBoard
	}
	if l.ConnectorsPerBoard == 0 {
		l.ConnectorsPerBoard = DefaultConnectorsPerBoard
	}
	if l.FramesPerBoard == 0 {
		l.FramesPerBoard = DefaultFramesPerBoard
	}
	if l.BoardsPerUser == 0 {
		l.BoardsPerUser = DefaultBoardsPerUser
	}
	if l.ChangelogBytesPerBoard == 0 {
		l.ChangelogBytesPerBoard = DefaultChangelogBytesPerBoard
	}
	return l
}

// RowsFull is the error of a push that would take a board past its limit
// of live rows of one table (field "notes", "trackerItems", "connectors"
// or "frames"): ETOOLARGE, naming the field and the limit, so a client
// shows the push as refused rather than trying it again.
func RowsFull(field string, limit int) *Error {
	noun := field
	if field == "trackerItems" {
		noun = "tracker items"
	}
	return LimitErrorf(field, int64(limit), "This board has reached %d %s: delete some before adding more. Nothing was applied.", limit, noun)
}

// BoardsFull is the error of a claim by someone who owns limit boards
// already: ETOOLARGE naming "boards" and the limit.
func BoardsFull(limit int) *Error {
	return LimitErrorf("boards", int64(limit), "You own %d boards, the most one person may own: delete or hand over one before claiming another.", limit)
}

// LimitErrorf returns an ETOOLARGE error naming field and the limit it
// would pass.
func LimitErrorf(field string, limit int64, format string, args ...any) *Error {
	e := Errorf(ETOOLARGE, format, args...)
	e.Field, e.Limit = field, limit
	return e
}
