package persist

import (
	"context"
	"strings"
	"time"

	"corkboard/board"
)

// StampLayout is the time layout of changelog and snapshot timestamps: ISO
// 8601 in UTC with exactly nine fractional digits, so that every stamp has
// the same width and stamps sort as strings in time order.
const StampLayout = "2006-01-02T15:04:05.000000000Z"

// Key shapes.
const (
	// LogKeyPrefix starts every changelog entry key.
	LogKeyPrefix = "log/"
	// SnapshotKeyPrefix starts every point-in-time snapshot key.
	SnapshotKeyPrefix = "snapshots/"
	// SnapshotKeySuffix ends every point-in-time snapshot key.
	SnapshotKeySuffix = ".md"
	// CurrentKey names the board's current snapshot.
	CurrentKey = "current.md"
	// RenameKeyID is the id part of the key of an entry without a note (a
	// board rename).
	RenameKeyID = "board"
	// MaxKeyIDLen is the longest id part of a log key, in bytes.
	MaxKeyIDLen = board.MaxIDLen
)

// MaxPruneScan bounds the oldest entries one AppendLog looks at to prune.
const MaxPruneScan = 1000

// LogEntry is one changelog entry: its key, the note it is about ("" for a
// board rename), its action and the time the server recorded it. Content,
// the Markdown, is filled only when one entry is read.
type LogEntry struct {
	Key       string `json:"key"`
	NoteID    string `json:"noteId"`
	Action    string `json:"action"`
	Timestamp string `json:"timestamp"`
	Content   []byte `json:"-"`
}

// NewLogEntry is an entry to append; AppendLog gives it its key and timestamp.
type NewLogEntry struct {
	NoteID  string
	Action  string
	Content []byte
}

// RenderedBoard is a board snapshot in Markdown with what it was rendered
// from that can change: the board version and the phase configuration
// (phases change without moving the version).
type RenderedBoard struct {
	Markdown []byte
	Version  int64
	Phases   *board.Phases
}

// SnapshotInfo names one point-in-time snapshot.
type SnapshotInfo struct {
	Key       string `json:"key"`
	Timestamp string `json:"timestamp"`
	// Existing is set by PutSnapshot when the snapshot was identical to
	// the newest one, which it returned instead of keeping a copy.
	Existing bool `json:"-"`
}

// LogQuery selects changelog entries, newest first. Empty NoteID or Action
// and a nil Before do not filter; Limit must be positive.
type LogQuery struct {
	NoteID string
	Action string
	// Before keeps entries recorded strictly before it; any time counts,
	// the zero time included (which nothing is before).
	Before *time.Time
	Limit  int
}

// ChangelogStore is the storage of changelogs and snapshots. Every method
// answers ENOTFOUND for an unclaimed board.
type ChangelogStore interface {
	// AppendLog stores entries in one transaction: each under a new key in
	// order, in the note and action indexes, and, when current is not nil,
	// as the board's current.md (unless the stored one is newer). When the
	// board's entries then hold more than Limits.ChangelogBytesPerBoard
	// bytes of content, it prunes the oldest, in the same transaction,
	// except the newest entry of each note and the newest of each action
	// of entries without a note; each append looks at no more than
	// MaxPruneScan of the oldest entries, so the log may stay over the
	// limit for a few appends while those are kept. It returns
	// the stored entries without content. Keys and timestamps come from the
	// store's clock in StampLayout, strictly increasing per board even when
	// the clock stands still or goes back (then one nanosecond after the
	// last), so keys are unique and sort by time as strings.
	AppendLog(ctx context.Context, boardID string, entries []NewLogEntry, current *RenderedBoard) ([]LogEntry, error)
	// ListLog answers a query, newest first, without content, at most
	// q.Limit entries; a caller pages by passing the last timestamp as
	// q.Before.
	ListLog(ctx context.Context, boardID string, q LogQuery) ([]LogEntry, error)
	// FindLogEntry returns one entry with its content; ENOTFOUND when the
	// board has no such key.
	FindLogEntry(ctx context.Context, boardID, key string) (*LogEntry, error)
	// LatestNoteEntry returns the newest entry about noteID with its
	// content; ENOTFOUND when there is none.
	LatestNoteEntry(ctx context.Context, boardID, noteID string) (*LogEntry, error)
	// CurrentSnapshot returns current.md and whether it still shows the
	// board as it is (same version and phases); nil Markdown when none was
	// stored.
	CurrentSnapshot(ctx context.Context, boardID string) (md []byte, fresh bool, err error)
	// CurrentSnapshotFresh is CurrentSnapshot without reading the Markdown.
	CurrentSnapshotFresh(ctx context.Context, boardID string) (bool, error)
	// PutSnapshot stores snap as a new point-in-time snapshot (its key
	// stamped like AppendLog's, from the same per-board sequence) and as
	// current.md, remembers its version as the last snapshotted one, and
	// prunes the oldest snapshots beyond keep (keep <= 0 keeps all). It
	// returns the new snapshot and how many it pruned. When snap's Markdown
	// is byte for byte the newest snapshot's, it writes nothing and returns
	// that snapshot, with Existing set.
	PutSnapshot(ctx context.Context, boardID string, snap RenderedBoard, keep int) (SnapshotInfo, int, error)
	// ListSnapshots lists the point-in-time snapshots, newest first.
	ListSnapshots(ctx context.Context, boardID string) ([]SnapshotInfo, error)
	// FindSnapshot returns a point-in-time snapshot's Markdown; ENOTFOUND
	// when the board has no such key.
	FindSnapshot(ctx context.Context, boardID, key string) ([]byte, error)
	// BoardsToSnapshot lists the boards whose version moved since their
	// last point-in-time snapshot (never-snapshotted boards count from 0).
	BoardsToSnapshot(ctx context.Context) ([]string, error)
}

// Stamp formats t as a changelog timestamp (StampLayout, in UTC).
func Stamp(t time.Time) string {
	return t.UTC().Format(StampLayout)
}

// ParseStamp reads a timestamp in StampLayout exactly (the width included).
func ParseStamp(s string) (time.Time, bool) {
	if len(s) != len(StampLayout) {
		return time.Time{}, false
	}
	t, err := time.Parse(StampLayout, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// LogKeyID is the id part of the log key of an entry about noteID: the ID
// itself when it is made of A-Z a-z 0-9 _ - . ~ only, else with every other
// character replaced by "_" (and every "." too when the ID holds ".."), cut
// to MaxKeyIDLen bytes; RenameKeyID for "". Keys are thus one URL path
// segment after "log/", never hold "..", and stay unique through their
// stamp; the exact note ID is kept in the entry.
func LogKeyID(noteID string) string {
	if noteID == "" {
		return RenameKeyID
	}
	var b strings.Builder
	for _, r := range noteID {
		if keyIDChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= MaxKeyIDLen {
			break
		}
	}
	id := b.String()
	if strings.Contains(id, "..") {
		id = strings.ReplaceAll(id, ".", "_")
	}
	return id
}

func keyIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == '~'
}

// cutKeyStamp reads the ISO 8601 UTC timestamp s starts with, as clients
// other than ours write them in keys: "2006-01-02T15:04:05", an optional
// fraction of 1 to 9 digits (JavaScript's toISOString gives 3, Python's
// isoformat 6), then "Z" or "+00:00". It returns the time and the rest of s.
func cutKeyStamp(s string) (time.Time, string, bool) {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(shape)+1 {
		return time.Time{}, "", false
	}
	for i := range len(shape) {
		if c := s[i]; shape[i] == 'd' && (c < '0' || c > '9') || shape[i] != 'd' && c != shape[i] {
			return time.Time{}, "", false
		}
	}
	end := len(shape)
	if s[end] == '.' {
		digits := 0
		for end+1+digits < len(s) && s[end+1+digits] >= '0' && s[end+1+digits] <= '9' {
			digits++
		}
		if digits < 1 || digits > 9 {
			return time.Time{}, "", false
		}
		end += 1 + digits
	}
	stamp, rest := s[:end], s[end:]
	if r, ok := strings.CutPrefix(rest, "Z"); ok {
		rest = r
	} else if r, ok := strings.CutPrefix(rest, "+00:00"); ok {
		rest = r
	} else {
		return time.Time{}, "", false
	}
	t, err := time.Parse(time.RFC3339Nano, stamp+"Z")
	if err != nil {
		return time.Time{}, "", false
	}
	return t, rest, true
}

// CanonicalLogKey reads a key of the shape "log/<timestamp>-<id>", where
// the timestamp is any ISO 8601 UTC time (see cutKeyStamp) and the id is
// one LogKeyID could make, and returns it as AppendLog writes keys: with
// the timestamp in StampLayout. A key with a millisecond timestamp thus
// names the entry recorded at exactly that millisecond. ok is false for
// any other key.
func CanonicalLogKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, LogKeyPrefix)
	if !ok {
		return "", false
	}
	t, rest, ok := cutKeyStamp(rest)
	if !ok {
		return "", false
	}
	id, ok := strings.CutPrefix(rest, "-")
	if !ok || id == "" || len(id) > MaxKeyIDLen || strings.Contains(id, "..") {
		return "", false
	}
	for _, r := range id {
		if !keyIDChar(r) {
			return "", false
		}
	}
	return LogKeyPrefix + Stamp(t) + "-" + id, true
}

// ValidLogKey reports whether key has the shape of a log key (see
// CanonicalLogKey).
func ValidLogKey(key string) bool {
	_, ok := CanonicalLogKey(key)
	return ok
}

// CanonicalSnapshotKey reads a key of the shape "snapshots/<timestamp>.md"
// with any ISO 8601 UTC timestamp, as CanonicalLogKey does, and returns it
// as PutSnapshot writes keys. ok is false for any other key.
func CanonicalSnapshotKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, SnapshotKeyPrefix)
	if !ok {
		return "", false
	}
	t, rest, ok := cutKeyStamp(rest)
	if !ok || rest != SnapshotKeySuffix {
		return "", false
	}
	return SnapshotKeyPrefix + Stamp(t) + SnapshotKeySuffix, true
}

// SnapshotKeyStamp is the timestamp of a snapshot key PutSnapshot wrote.
func SnapshotKeyStamp(key string) string {
	return strings.TrimSuffix(strings.TrimPrefix(key, SnapshotKeyPrefix), SnapshotKeySuffix)
}

// ValidSnapshotKey reports whether key has the shape "snapshots/<timestamp>.md"
// (see CanonicalSnapshotKey).
func ValidSnapshotKey(key string) bool {
	_, ok := CanonicalSnapshotKey(key)
	return ok
}
