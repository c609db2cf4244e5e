package changelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
	"unicode/utf8"

	"corkboard/board"
	"corkboard/persist"
)

// Actions of changelog entries (spec: changelog entry). The store appends
// update_note and delete_note entries of its own when a merge overwrites
// something (persist.ActionUpdateNote): the names are the same.
const (
	ActionCreateNote  = "create_note"
	ActionUpdateNote  = persist.ActionUpdateNote
	ActionDeleteNote  = persist.ActionDeleteNote
	ActionRenameBoard = "rename_board"
)

// Limits of the changelog (docs/changelog.md).
const (
	// MaxEntries is the most entries one append may carry.
	MaxEntries = 500
	// MaxEntryBytes bounds one entry's content. The largest valid note
	// snapshot is about 135 KB: 30,000 characters of up to 4 bytes, a
	// 1,000-character title escaped in YAML, the other fields.
	MaxEntryBytes = 256 << 10
	// DefaultListLimit is the page size of a listing without a limit.
	DefaultListLimit = 50
	// MaxListLimit is the largest page of a listing.
	MaxListLimit = 500
	// DefaultKeep is how many point-in-time snapshots a board keeps.
	DefaultKeep = 10
	// MaxKeep bounds Options.Keep: with snapshots of at most
	// DefaultMaxSnapshotBytes, a board's snapshots take at most 3.2 GB.
	MaxKeep = 100
	// DefaultMaxSnapshotBytes bounds a board snapshot's Markdown: a board
	// of 50,000 short notes (the default notes limit) renders to about
	// 13 MB. A board past it cannot be snapshotted, and its current.md is
	// rendered when asked instead of kept.
	DefaultMaxSnapshotBytes = 32 << 20
	// DefaultSnapshotSlots is how many snapshots one server takes at once
	// (each holds the board's state and its Markdown in memory).
	DefaultSnapshotSlots = 2
	// snapshotRetryAfter is the Retry-After, in seconds, of a snapshot
	// refused for want of a slot.
	snapshotRetryAfter = 5
)

// CurrentKey names a board's current snapshot in restores.
const CurrentKey = persist.CurrentKey

// ValidAction reports whether a is one of the four actions.
func ValidAction(a string) bool {
	switch a {
	case ActionCreateNote, ActionUpdateNote, ActionDeleteNote, ActionRenameBoard:
		return true
	}
	return false
}

// isNoteAction reports whether entries of action a are about one note and
// hold its snapshot.
func isNoteAction(a string) bool {
	return a == ActionCreateNote || a == ActionUpdateNote || a == ActionDeleteNote
}

// Store is the storage a Log needs: the changelog itself and the board's
// authoritative state (what the rooms committed).
type Store interface {
	persist.ChangelogStore
	// BoardState returns the whole live board; ENOTFOUND when unclaimed.
	BoardState(ctx context.Context, boardID string) (*board.State, error)
	// ScanChangesSince with since 0 streams the whole live board, its
	// phases included, notes then items in ID order, from one read:
	// snapshots and exports are rendered from it row by row.
	persist.ChangeScanner
}

var _ Store = persist.Store(nil)

// Options tune a Log. Zero fields take the defaults.
type Options struct {
	// Keep is how many point-in-time snapshots each board keeps (at most
	// MaxKeep); the oldest beyond it are pruned whenever a snapshot is
	// taken. 0 is DefaultKeep.
	Keep int
	// MaxSnapshotBytes bounds a board snapshot's Markdown; 0 is
	// DefaultMaxSnapshotBytes.
	MaxSnapshotBytes int
	// SnapshotSlots is how many snapshots may be taken at once; 0 is
	// DefaultSnapshotSlots.
	SnapshotSlots int
	// Logger; nil is slog.Default().
	Logger *slog.Logger
}

// Log is the changelog and snapshot service of every board: it validates
// and appends entries, answers listings and reads, takes snapshots and
// parses stored Markdown back for restores. It holds no state of its own
// and is safe for concurrent use.
type Log struct {
	store    Store
	keep     int
	maxBytes int
	// slots holds one token per snapshot being taken.
	slots chan struct{}
	log   *slog.Logger
}

// New builds a Log on store. Keep beyond MaxKeep is MaxKeep (the flag
// refuses it before).
func New(store Store, opts Options) *Log {
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	opts.Keep = min(opts.Keep, MaxKeep)
	if opts.MaxSnapshotBytes <= 0 {
		opts.MaxSnapshotBytes = DefaultMaxSnapshotBytes
	}
	if opts.SnapshotSlots <= 0 {
		opts.SnapshotSlots = DefaultSnapshotSlots
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Log{store: store, keep: opts.Keep, maxBytes: opts.MaxSnapshotBytes, slots: make(chan struct{}, opts.SnapshotSlots), log: opts.Logger}
}

// Entry is one changelog entry as a client sends it: a note snapshot for
// the three note actions, the new board name for rename_board.
type Entry struct {
	NoteID  string `json:"noteId"`
	Action  string `json:"action"`
	Content string `json:"content"`
}

// Query selects entries of a listing. Zero fields do not filter; a zero
// Limit is DefaultListLimit.
type Query struct {
	NoteID string
	Action string
	// Before, when not nil, keeps entries recorded strictly before it:
	// paging passes the timestamp of the last entry of the previous page.
	// The zero time is a time like any other, before every entry.
	Before *time.Time
	Limit  int
}

// fieldError returns an EINVALID error naming field whose message starts
// with the field, from a client-safe reason.
func fieldError(field string, reason error) error {
	return board.FieldErrorf(field, "%s: %s", field, board.ErrorMessage(reason))
}

// checkNoteID checks a note ID as a push would: 1 to 128 characters of UTF-8.
func checkNoteID(field, id string) error {
	switch {
	case id == "":
		return board.FieldErrorf(field, "%s is required.", field)
	case !utf8.ValidString(id):
		return board.FieldErrorf(field, "%s must be valid UTF-8.", field)
	case utf8.RuneCountInString(id) > board.MaxIDLen:
		return board.FieldErrorf(field, "%s must be at most %d characters.", field, board.MaxIDLen)
	}
	return nil
}

// prepared is a validated entry: what will be stored, or, for a
// delete_note without content, the note whose snapshot the server fills in,
// or, for plain Markdown, the text of a note whose other fields the server
// fills in.
type prepared struct {
	persist.NewLogEntry
	needsSnapshot bool
	plain         bool
	text          string
}

// isPlainMarkdown reports whether a note entry's content is the note's text
// alone rather than a note snapshot. A snapshot opens with a front-matter
// fence and its front matter is a mapping with an "id"; text that merely
// opens with a horizontal rule ("---"), or carries front matter of its own
// without an id, is the note's text. Anything that claims to be a snapshot
// (it has the id) is parsed as one, so a broken snapshot is still refused
// rather than kept as text.
func isPlainMarkdown(content string) bool {
	doc := []byte(content)
	first, _, _ := cutLine(bytes.TrimPrefix(doc, utf8BOM))
	if !isFence(first) {
		return true
	}
	front := doc
	if fm, err := splitFrontMatter(doc, "note snapshot"); err == nil {
		front = fm.yaml
	} else {
		// No closing fence: a snapshot cut short still shows its id.
		_, front, _ = cutLine(bytes.TrimPrefix(doc, utf8BOM))
	}
	m, err := parseYAMLMapping(front, 2, "note snapshot front matter")
	if err != nil {
		return true
	}
	return !hasKey(m, "id")
}

// validate checks every entry and renders the ones it can. Content is
// stored in the canonical rendering of what it parses to, so every stored
// entry has one shape and parses back to exactly what the client meant.
func validate(entries []Entry) ([]prepared, error) {
	if len(entries) > MaxEntries {
		return nil, board.FieldErrorf("entries", "entries may hold at most %d entries (got %d); send them in several requests.", MaxEntries, len(entries))
	}
	out := make([]prepared, len(entries))
	for i, e := range entries {
		path := fmt.Sprintf("entries[%d]", i)
		if !ValidAction(e.Action) {
			return nil, board.FieldErrorf(path+".action", "%s.action must be one of %s, %s, %s, %s.", path, ActionCreateNote, ActionUpdateNote, ActionDeleteNote, ActionRenameBoard)
		}
		if len(e.Content) > MaxEntryBytes {
			return nil, board.FieldErrorf(path+".content", "%s.content must be at most %d bytes (got %d).", path, MaxEntryBytes, len(e.Content))
		}
		if e.Action == ActionRenameBoard {
			// A rename is about the board: any noteId sent is not kept.
			name, err := ParseRename([]byte(e.Content))
			if err != nil {
				return nil, fieldError(path+".content", err)
			}
			out[i].NewLogEntry = persist.NewLogEntry{Action: e.Action, Content: RenderRename(name)}
			continue
		}
		if err := checkNoteID(path+".noteId", e.NoteID); err != nil {
			return nil, err
		}
		out[i].NoteID, out[i].Action = e.NoteID, e.Action
		if e.Content == "" && e.Action == ActionDeleteNote {
			out[i].needsSnapshot = true
			continue
		}
		if isPlainMarkdown(e.Content) {
			// The note's text as plain Markdown (the empty text included):
			// checked now as a push would, the rest filled in by Append.
			n := board.Note{ID: e.NoteID, Content: e.Content}
			if err := n.Validate(path); err != nil {
				return nil, err
			}
			out[i].plain, out[i].text = true, e.Content
			continue
		}
		n, err := ParseNote([]byte(e.Content))
		if err != nil {
			return nil, fieldError(path+".content", err)
		}
		if n.ID != e.NoteID {
			return nil, board.FieldErrorf(path+".content", "%s.content is a snapshot of note %q, not of %s.noteId %q.", path, clip(n.ID, 40), path, clip(e.NoteID, 40))
		}
		out[i].Content = RenderNote(n)
	}
	return out, nil
}

// Append validates every entry, then stores them all in one transaction
// with the board's current.md refreshed from the server's state (the
// client's idea of the board plays no part). Nothing is stored when any
// entry is invalid: the error is EINVALID naming entries[i].field. A
// delete_note entry without content gets the pre-deletion snapshot from the
// server: the note as stored when it is still live, else its newest logged
// snapshot; EINVALID when there is neither. A note entry whose content is
// plain Markdown (no front matter; for create_note and update_note the
// empty text too) is the note's text: the entry stores a snapshot of the
// note with that id and text and every other field from the same server
// copy, or zero fields when there is none. ENOTFOUND for an unclaimed board.
func (l *Log) Append(ctx context.Context, boardID string, entries []Entry) ([]persist.LogEntry, error) {
	prep, err := validate(entries)
	if err != nil {
		return nil, err
	}
	fresh, err := l.store.CurrentSnapshotFresh(ctx, boardID)
	if err != nil {
		return nil, err
	}
	// The server's state is read at most once, and only when needed.
	var st *board.State
	state := func() (*board.State, error) {
		if st != nil {
			return st, nil
		}
		s, err := l.store.BoardState(ctx, boardID)
		if err != nil {
			return nil, err
		}
		st = s
		return st, nil
	}
	recs := make([]persist.NewLogEntry, len(prep))
	for i, p := range prep {
		if p.plain {
			n, _, err := l.serverNote(ctx, boardID, p.NoteID, state)
			if err != nil {
				return nil, err
			}
			// Every field but the id and the text is the server's, so the
			// entry restores into a note a push accepts.
			n.ID, n.Content = p.NoteID, p.text
			p.Content = RenderNote(n)
		}
		if p.needsSnapshot {
			if p.Content, err = l.preDeletionSnapshot(ctx, boardID, p.NoteID, state); err != nil {
				if board.ErrorCode(err) == board.EINVALID {
					return nil, fieldError(fmt.Sprintf("entries[%d].content", i), err)
				}
				return nil, err
			}
		}
		recs[i] = p.NewLogEntry
	}
	var cur *persist.RenderedBoard
	if !fresh {
		s, err := state()
		if err != nil {
			return nil, err
		}
		// A board past the snapshot size keeps no current.md: GET renders
		// it from the state when asked.
		if cur, err = l.render(s); board.ErrorCode(err) == board.ETOOLARGE {
			cur = nil
		} else if err != nil {
			return nil, err
		}
	}
	return l.store.AppendLog(ctx, boardID, recs, cur)
}

// preDeletionSnapshot finds what a delete_note entry without content keeps.
func (l *Log) preDeletionSnapshot(ctx context.Context, boardID, noteID string, state func() (*board.State, error)) ([]byte, error) {
	n, ok, err := l.serverNote(ctx, boardID, noteID, state)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, board.Errorf(board.EINVALID, "note %q is not live on the server and has no logged snapshot; send the pre-deletion snapshot as content.", clip(noteID, 40))
	}
	return RenderNote(n), nil
}

// serverNote is the server's copy of a note: as stored when it is live,
// else as its newest logged snapshot has it. ok is false (and the note has
// zero fields) when there is neither.
func (l *Log) serverNote(ctx context.Context, boardID, noteID string, state func() (*board.State, error)) (board.Note, bool, error) {
	st, err := state()
	if err != nil {
		return board.Note{}, false, err
	}
	for _, n := range st.Notes {
		if n.ID == noteID {
			return n, true, nil
		}
	}
	e, err := l.store.LatestNoteEntry(ctx, boardID, noteID)
	if board.ErrorCode(err) == board.ENOTFOUND {
		return board.Note{}, false, nil
	} else if err != nil {
		return board.Note{}, false, err
	}
	n, err := ParseNote(e.Content)
	if err != nil {
		return board.Note{}, false, corrupt("entry", e.Key, boardID, err)
	}
	return n, true, nil
}

// corrupt is the error for stored Markdown that does not parse. The server
// rendered it, so this is corruption, not the client's mistake: the parse
// error (an EINVALID naming a field) is kept as text only, never wrapped,
// so the client gets a 500 and the log gets the details.
func corrupt(what, key, boardID string, err error) error {
	return fmt.Errorf("stored %s %s of board %s does not parse: %v", what, key, boardID, err)
}

// render renders a state as a board snapshot of at most l.maxBytes:
// rendering stops at the limit, so a board past it costs no more than the
// limit. ETOOLARGE (field "snapshot", with the limit) past it.
func (l *Log) render(st *board.State) (*persist.RenderedBoard, error) {
	w := &cappedBuffer{max: l.maxBytes}
	if err := WriteBoard(w, *st); err != nil {
		return nil, l.renderError(err)
	}
	return &persist.RenderedBoard{Markdown: w.buf.Bytes(), Version: st.Board.Version, Phases: st.Phases}, nil
}

// renderError names the snapshot limit when a rendering passed it.
func (l *Log) renderError(err error) error {
	if errors.Is(err, errSnapshotTooLarge) {
		return board.LimitErrorf("snapshot", int64(l.maxBytes),
			"This board's snapshot would be larger than %d bytes: delete notes or shorten them to take one.", l.maxBytes)
	}
	return err
}

var errSnapshotTooLarge = errors.New("snapshot too large")

// cappedBuffer keeps what is written up to max bytes, and fails past it.
type cappedBuffer struct {
	buf bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.max {
		return 0, errSnapshotTooLarge
	}
	return c.buf.Write(p)
}

// Validate checks a query: a known action, a note ID a push would accept,
// a limit of 1 to MaxListLimit (0 is DefaultListLimit); the error names
// the query parameter.
func (q *Query) Validate() error {
	// The vote's actions are listed (the server writes them, a client
	// may not: ValidAction).
	if q.Action != "" && !ValidAction(q.Action) && !persist.IsVoteAction(q.Action) {
		return board.FieldErrorf("action", "action must be one of %s, %s, %s, %s, %s, %s.", ActionCreateNote, ActionUpdateNote, ActionDeleteNote, ActionRenameBoard,
			persist.ActionStartVote, persist.ActionRevealVote)
	}
	if q.NoteID != "" {
		if err := checkNoteID("noteId", q.NoteID); err != nil {
			return err
		}
	}
	if q.Limit < 0 || q.Limit > MaxListLimit {
		return board.FieldErrorf("limit", "limit must be an integer from 1 to %d.", MaxListLimit)
	}
	return nil
}

// List answers a listing, newest first, without content. EINVALID for a
// bad query, ENOTFOUND for an unclaimed board.
func (l *Log) List(ctx context.Context, boardID string, q Query) ([]persist.LogEntry, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultListLimit
	}
	return l.store.ListLog(ctx, boardID, persist.LogQuery{NoteID: q.NoteID, Action: q.Action, Before: q.Before, Limit: q.Limit})
}

// CheckLogKey checks that key has the shape of a log key,
// "log/<timestamp>-<id>" with any ISO 8601 UTC timestamp; field names it
// in the error. Keys are relative to the board in the path, so a
// well-formed key can never reach another board's entries.
func CheckLogKey(field, key string) error {
	_, err := canonicalLogKey(field, key)
	return err
}

// canonicalLogKey is key as the store writes it (see
// persist.CanonicalLogKey), or CheckLogKey's error.
func canonicalLogKey(field, key string) (string, error) {
	canon, ok := persist.CanonicalLogKey(key)
	if !ok {
		return "", board.FieldErrorf(field, "%s must be a changelog key such as log/2026-03-01T09:30:00.123456789Z-note-7 (got %q).", field, clip(key, 80))
	}
	return canon, nil
}

// Entry returns one entry with its Markdown. The key's timestamp may have
// any precision: log/2026-03-01T09:30:00.123Z-n1 is the entry recorded at
// 09:30:00.123000000. EINVALID for a malformed key, ENOTFOUND when the
// board has no such entry.
func (l *Log) Entry(ctx context.Context, boardID, key string) (*persist.LogEntry, error) {
	canon, err := canonicalLogKey("logKey", key)
	if err != nil {
		return nil, err
	}
	return l.store.FindLogEntry(ctx, boardID, canon)
}

// RestoreNote parses the note snapshot of a create_note, update_note or
// delete_note entry. It changes nothing: the client pushes the note back.
// EINVALID (field logKey) for a key that is not a note entry's, ENOTFOUND
// for an unknown key.
func (l *Log) RestoreNote(ctx context.Context, boardID, key string) (board.Note, error) {
	if key == CurrentKey || persist.ValidSnapshotKey(key) {
		return board.Note{}, board.FieldErrorf("logKey", "logKey %q is a board snapshot: restore it with type \"board\".", key)
	}
	e, err := l.Entry(ctx, boardID, key)
	if err != nil {
		return board.Note{}, err
	}
	if persist.IsVoteAction(e.Action) {
		return board.Note{}, errVoteRestore(key, e.Action)
	}
	if !isNoteAction(e.Action) {
		return board.Note{}, board.FieldErrorf("logKey", "logKey %q is a %s entry, which holds no note: restore it with type \"board\".", key, e.Action)
	}
	n, err := ParseNote(e.Content)
	if err != nil {
		return board.Note{}, corrupt("entry", key, boardID, err)
	}
	return n, nil
}

// CheckSnapshotKey checks that key is "current.md" or has the shape
// "snapshots/<timestamp>.md" with any ISO 8601 UTC timestamp; field names
// it in the error.
func CheckSnapshotKey(field, key string) error {
	if key != CurrentKey && !persist.ValidSnapshotKey(key) {
		return board.FieldErrorf(field, "%s must be %q or a snapshot key such as snapshots/2026-03-01T09:30:00.123456789Z.md (got %q).", field, CurrentKey, clip(key, 80))
	}
	return nil
}

// BoardSnapshot returns the Markdown of a board snapshot: key "current.md"
// (or "") is the current snapshot (see Current), else a point-in-time
// snapshot, whose timestamp may have any precision. EINVALID for a
// malformed key, ENOTFOUND for an unknown one.
func (l *Log) BoardSnapshot(ctx context.Context, boardID, key string) ([]byte, error) {
	if key == "" || key == CurrentKey {
		return l.Current(ctx, boardID)
	}
	canon, ok := persist.CanonicalSnapshotKey(key)
	if !ok {
		return nil, CheckSnapshotKey("key", key)
	}
	return l.store.FindSnapshot(ctx, boardID, canon)
}

// RestoreBoard parses a board snapshot: "current.md" or a point-in-time
// snapshot key. The key of a rename_board entry restores the name: the
// board as the server holds it now, named as the entry says (a rename
// record holds nothing else). It changes nothing. EINVALID (field logKey)
// for a key that is neither (a note entry's included), ENOTFOUND for an
// unknown key.
func (l *Log) RestoreBoard(ctx context.Context, boardID, key string) (board.State, error) {
	if persist.ValidLogKey(key) {
		return l.restoreRename(ctx, boardID, key)
	}
	if err := CheckSnapshotKey("logKey", key); err != nil {
		return board.State{}, err
	}
	md, err := l.BoardSnapshot(ctx, boardID, key)
	if err != nil {
		return board.State{}, err
	}
	st, err := ParseBoard(md)
	if err != nil {
		return board.State{}, corrupt("snapshot", key, boardID, err)
	}
	return st, nil
}

// restoreRename answers RestoreBoard for a log key: the server's state of
// the board with the name a rename_board entry holds.
func (l *Log) restoreRename(ctx context.Context, boardID, key string) (board.State, error) {
	e, err := l.Entry(ctx, boardID, key)
	if err != nil {
		return board.State{}, err
	}
	if persist.IsVoteAction(e.Action) {
		return board.State{}, errVoteRestore(key, e.Action)
	}
	if e.Action != ActionRenameBoard {
		return board.State{}, board.FieldErrorf("logKey", "logKey %q is a %s entry, which holds a note: restore it with type \"note\".", key, e.Action)
	}
	name, err := ParseRename(e.Content)
	if err != nil {
		return board.State{}, corrupt("entry", key, boardID, err)
	}
	st, err := l.store.BoardState(ctx, boardID)
	if err != nil {
		return board.State{}, err
	}
	st.Board.Name = name
	return *st, nil
}

// errVoteRestore refuses to restore a vote's entry: it records a vote,
// neither a note nor the board.
func errVoteRestore(key, action string) error {
	return board.FieldErrorf("logKey", "logKey %q is a %s entry, the record of a dot vote: there is nothing in it to restore.", key, action)
}

// Current returns the board's current snapshot: current.md when it still
// shows the board as the server has it, else the server's state rendered
// now (a board with no data yet gives its empty snapshot). ENOTFOUND for an
// unclaimed board.
func (l *Log) Current(ctx context.Context, boardID string) ([]byte, error) {
	d, err := l.CurrentDoc(ctx, boardID)
	if err != nil {
		return nil, err
	}
	if d.render == nil {
		return d.md, nil
	}
	var buf bytes.Buffer
	if _, err := d.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Doc is a board snapshot ready to be written: Markdown as stored, or the
// board as the store has it, rendered while it is written.
type Doc struct {
	md     []byte
	render func(w io.Writer) error
}

// WriteTo writes the document to w. The board is rendered row by row as
// the store reads it, through a small buffer, never whole in memory; the
// store's read lasts as long as w takes the bytes, so a caller writing to
// a slow client gives a spool here (transport does).
func (d Doc) WriteTo(w io.Writer) (int64, error) {
	if d.render == nil {
		n, err := w.Write(d.md)
		return int64(n), err
	}
	cw := &countingWriter{w: w}
	err := d.render(cw)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// CurrentDoc is Current to be written: the stored current.md when it is
// fresh, else the board as the store has it, read and rendered row by row
// while the Doc is written (ENOTFOUND for an unclaimed board may then
// come from WriteTo).
func (l *Log) CurrentDoc(ctx context.Context, boardID string) (Doc, error) {
	md, fresh, err := l.store.CurrentSnapshot(ctx, boardID)
	if err != nil {
		return Doc{}, err
	}
	if md != nil && fresh {
		return Doc{md: md}, nil
	}
	return Doc{render: func(w io.Writer) error {
		_, err := l.writeState(ctx, boardID, w)
		return err
	}}, nil
}

// writeState renders the board as the store has it to w (WriteBoard's
// Markdown), row by row from one read of the store, through a small
// buffer; it returns the header of what it rendered. A failing w stops
// the read within the buffer's size.
func (l *Log) writeState(ctx context.Context, boardID string, w io.Writer) (persist.ChangesHeader, error) {
	var h persist.ChangesHeader
	var bw *BoardWriter
	ew := &stickyWriter{w: w}
	err := l.store.ScanChangesSince(ctx, boardID, 0, func(p *persist.ChangePart) error {
		if err := p.Decode(); err != nil {
			return err
		}
		switch p.Kind {
		case persist.PartHeader:
			h = p.Header
			bw = NewBoardWriter(ew, h.Board, h.Phases)
		case persist.PartNote:
			bw.Note(*p.Note)
		case persist.PartItem:
			bw.Item(*p.Item)
		case persist.PartFrame:
			bw.Frame(*p.Frame)
		case persist.PartConnector:
			bw.Connector(*p.Connector)
		default:
			return fmt.Errorf("a full read of board %s gave a part of kind %d", boardID, p.Kind)
		}
		return ew.err
	})
	if err != nil {
		return h, err
	}
	return h, bw.End()
}

// stickyWriter keeps the first error of w, so that a reader of what is
// written through a buffer can stop at it.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// Snapshot stores the server's state of the board as a point-in-time
// snapshot (and as current.md) and prunes the oldest beyond Keep. A
// snapshot identical to the newest is not kept again: the newest is
// returned. EUNAVAILABLE (with RetryAfter) when SnapshotSlots snapshots
// are being taken already; ETOOLARGE (field "snapshot", with the limit)
// when its Markdown would pass MaxSnapshotBytes; ENOTFOUND for an
// unclaimed board.
func (l *Log) Snapshot(ctx context.Context, boardID string) (persist.SnapshotInfo, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		return persist.SnapshotInfo{}, &board.Error{Code: board.EUNAVAILABLE, Field: "snapshot", RetryAfter: snapshotRetryAfter,
			Message: "The server is taking other snapshots: try again in a few seconds."}
	}
	defer func() { <-l.slots }()
	return l.snapshot(ctx, boardID)
}

// snapshotWaiting is Snapshot waiting for a slot instead of refusing (the
// scheduler's, which has no client to tell to come back).
func (l *Log) snapshotWaiting(ctx context.Context, boardID string) (persist.SnapshotInfo, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return persist.SnapshotInfo{}, ctx.Err()
	}
	defer func() { <-l.slots }()
	return l.snapshot(ctx, boardID)
}

func (l *Log) snapshot(ctx context.Context, boardID string) (persist.SnapshotInfo, error) {
	// Rendered as the store reads the rows: the snapshot costs its
	// Markdown (at most maxBytes), not the board's rows besides.
	w := &cappedBuffer{max: l.maxBytes}
	h, err := l.writeState(ctx, boardID, w)
	if err != nil {
		return persist.SnapshotInfo{}, l.renderError(err)
	}
	rb := &persist.RenderedBoard{Markdown: w.buf.Bytes(), Version: h.Board.Version, Phases: h.Phases}
	info, pruned, err := l.store.PutSnapshot(ctx, boardID, *rb, l.keep)
	if err != nil {
		return persist.SnapshotInfo{}, err
	}
	l.log.InfoContext(ctx, "board snapshot", slog.String("board", boardID), slog.String("key", info.Key),
		slog.Int64("version", rb.Version), slog.Int("pruned", pruned), slog.Bool("existing", info.Existing), slog.Int("bytes", len(rb.Markdown)))
	return info, nil
}

// Snapshots lists the board's point-in-time snapshots, newest first.
// ENOTFOUND for an unclaimed board.
func (l *Log) Snapshots(ctx context.Context, boardID string) ([]persist.SnapshotInfo, error) {
	return l.store.ListSnapshots(ctx, boardID)
}

// ParseTimestamp reads an ISO 8601 timestamp (RFC 3339, any precision and
// offset) such as a listing's before cursor; field names it in the error.
func ParseTimestamp(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || len(s) > 64 {
		return time.Time{}, board.FieldErrorf(field, "%s must be an ISO 8601 timestamp such as 2026-03-01T09:30:00.123456789Z.", field)
	}
	return t, nil
}
