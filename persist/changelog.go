package persist

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"corkboard/board"
)

// The changelog of each board lives in nested buckets under bucketChangelog:
//
//	changelog / <boardID> / e   log key → entry record (see encodeEntry)
//	                      / n   be16(len(noteID)) ‖ noteID ‖ log key → action
//	                      / a   action ‖ 0x00 ‖ log key → nil
//	                      / s   snapshot key → Markdown
//	                      / m   current.md, its version and phases, the
//	                            version of the last snapshot, the last stamp
//
// Log keys are "log/<stamp>-<id>" and snapshot keys "snapshots/<stamp>.md",
// where a stamp is a fixed-width UTC timestamp with nanoseconds
// (StampLayout). Stamps are handed out per board, strictly increasing even
// within one nanosecond of the clock, so keys are unique and sort by time as
// plain bytes; every listing is a cursor walk.
var bucketChangelog = []byte("changelog")

func init() {
	topBuckets = append(topBuckets, bucketChangelog)
}

var (
	clEntries   = []byte("e")
	clByNote    = []byte("n")
	clByAction  = []byte("a")
	clSnapshots = []byte("s")
	clMeta      = []byte("m")

	clMetaCurrent         = []byte("current.md")
	clMetaCurrentVersion  = []byte("current.version")
	clMetaCurrentPhases   = []byte("current.phases")
	clMetaSnapshotVersion = []byte("snapshot.version")
	clMetaStamp           = []byte("stamp")
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
	// as the board's current.md (unless the stored one is newer). It returns
	// the stored entries without content.
	AppendLog(ctx context.Context, boardID string, entries []NewLogEntry, current *RenderedBoard) ([]LogEntry, error)
	// ListLog answers a query, newest first, without content.
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
	// PutSnapshot stores snap as a new point-in-time snapshot and as
	// current.md, remembers its version as the last snapshotted one, and
	// prunes the oldest snapshots beyond keep (keep <= 0 keeps all). It
	// returns the new snapshot and how many it pruned.
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

var _ ChangelogStore = (*DB)(nil)

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

// ValidSnapshotKey reports whether key has the shape "snapshots/<timestamp>.md"
// (see CanonicalSnapshotKey).
func ValidSnapshotKey(key string) bool {
	_, ok := CanonicalSnapshotKey(key)
	return ok
}

// logKeyStamp returns the stamp of a log key written by AppendLog.
func logKeyStamp(key []byte) string {
	return string(key[len(LogKeyPrefix) : len(LogKeyPrefix)+len(StampLayout)])
}

// entryMeta is the part of an entry record listings read.
type entryMeta struct {
	NoteID    string `json:"noteId"`
	Action    string `json:"action"`
	Timestamp string `json:"timestamp"`
}

// entryFormat is the first byte of an entry record, for later changes.
const entryFormat = 1

// encodeEntry makes an entry record: the format byte, the length of the
// metadata as a uvarint, the metadata as JSON, then the Markdown as is.
// Listings decode only the metadata, so a 100 KB note snapshot is never
// copied to list its entry.
func encodeEntry(m entryMeta, content []byte) ([]byte, error) {
	js, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	v := make([]byte, 0, 1+binary.MaxVarintLen64+len(js)+len(content))
	v = append(v, entryFormat)
	v = binary.AppendUvarint(v, uint64(len(js)))
	v = append(v, js...)
	return append(v, content...), nil
}

// decodeEntry splits an entry record; content aliases v.
func decodeEntry(v []byte) (entryMeta, []byte, error) {
	var m entryMeta
	if len(v) < 2 || v[0] != entryFormat {
		return m, nil, fmt.Errorf("entry record of %d bytes has an unknown format", len(v))
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return m, nil, fmt.Errorf("entry record has a bad metadata length")
	}
	start := 1 + w
	if err := json.Unmarshal(v[start:start+int(n)], &m); err != nil {
		return m, nil, fmt.Errorf("decode entry metadata: %w", err)
	}
	return m, v[start+int(n):], nil
}

func noteIndexPrefix(noteID string) []byte {
	k := make([]byte, 2, 2+len(noteID)+len(LogKeyPrefix)+len(StampLayout)+1+MaxKeyIDLen)
	binary.BigEndian.PutUint16(k, uint16(len(noteID)))
	return append(k, noteID...)
}

func actionIndexPrefix(action string) []byte {
	return append([]byte(action), 0)
}

// clBoard is one board's changelog buckets inside a transaction.
type clBoard struct {
	entries, byNote, byAction, snapshots, meta *bbolt.Bucket
}

// changelogBucket returns the board's changelog buckets, creating them when
// create is set; ok is false when they do not exist and create is not set.
// It answers ENOTFOUND for an unclaimed board.
func changelogBucket(tx *bbolt.Tx, boardID string, create bool) (clBoard, bool, error) {
	if tx.Bucket(bucketBoards).Get([]byte(boardID)) == nil {
		return clBoard{}, false, notFound("Board")
	}
	top := tx.Bucket(bucketChangelog)
	var b *bbolt.Bucket
	if create {
		var err error
		if b, err = top.CreateBucketIfNotExists([]byte(boardID)); err != nil {
			return clBoard{}, false, fmt.Errorf("create changelog bucket of board %s: %w", boardID, err)
		}
		for _, name := range [][]byte{clEntries, clByNote, clByAction, clSnapshots, clMeta} {
			if _, err := b.CreateBucketIfNotExists(name); err != nil {
				return clBoard{}, false, fmt.Errorf("create changelog %s bucket of board %s: %w", name, boardID, err)
			}
		}
	} else if b = top.Bucket([]byte(boardID)); b == nil {
		return clBoard{}, false, nil
	}
	return clBoard{
		entries:   b.Bucket(clEntries),
		byNote:    b.Bucket(clByNote),
		byAction:  b.Bucket(clByAction),
		snapshots: b.Bucket(clSnapshots),
		meta:      b.Bucket(clMeta),
	}, true, nil
}

// nextStamp hands out the board's next stamp: now, or one nanosecond after
// the last stamp when the clock has not moved past it (same nanosecond, a
// coarse clock, or a clock set back).
func (cb clBoard) nextStamp(now time.Time) (string, error) {
	t := now.UTC()
	if last, ok := ParseStamp(string(cb.meta.Get(clMetaStamp))); ok && !t.After(last) {
		t = last.Add(time.Nanosecond)
	}
	s := Stamp(t)
	return s, cb.meta.Put(clMetaStamp, []byte(s))
}

func clInt64(b *bbolt.Bucket, key []byte) (int64, bool) {
	v := b.Get(key)
	if len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// putCurrent stores cur as current.md unless the stored one shows a newer
// version (a slower writer must not roll it back).
func (cb clBoard) putCurrent(cur *RenderedBoard) error {
	if v, ok := clInt64(cb.meta, clMetaCurrentVersion); ok && v > cur.Version {
		return nil
	}
	phases, err := json.Marshal(cur.Phases)
	if err != nil {
		return fmt.Errorf("encode phases: %w", err)
	}
	if err := cb.meta.Put(clMetaCurrent, cur.Markdown); err != nil {
		return err
	}
	if err := cb.meta.Put(clMetaCurrentVersion, be64(uint64(cur.Version))); err != nil {
		return err
	}
	return cb.meta.Put(clMetaCurrentPhases, phases)
}

// currentFresh reports whether current.md shows b as it is.
func (cb clBoard) currentFresh(b *board.Board) (bool, error) {
	v, ok := clInt64(cb.meta, clMetaCurrentVersion)
	if !ok || v != b.Version {
		return false, nil
	}
	phases, err := json.Marshal(b.Phases)
	if err != nil {
		return false, fmt.Errorf("encode phases: %w", err)
	}
	return bytes.Equal(phases, cb.meta.Get(clMetaCurrentPhases)), nil
}

// clWrap wraps a storage failure for the logs; domain errors pass as they are.
func clWrap(err error, format string, args ...any) error {
	if err == nil || board.ErrorCode(err) != board.EINTERNAL {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// AppendLog stores entries and refreshes current.md (see ChangelogStore).
// Concurrent appends share one commit through bbolt's Batch.
func (db *DB) AppendLog(ctx context.Context, boardID string, entries []NewLogEntry, current *RenderedBoard) ([]LogEntry, error) {
	var out []LogEntry
	err := db.batch(ctx, func(tx *bbolt.Tx) error {
		// Batch may run this more than once: start from a clean slate.
		out = make([]LogEntry, 0, len(entries))
		cb, _, err := changelogBucket(tx, boardID, true)
		if err != nil {
			return err
		}
		now := db.now()
		for _, e := range entries {
			stamp, err := cb.nextStamp(now)
			if err != nil {
				return err
			}
			key := LogKeyPrefix + stamp + "-" + LogKeyID(e.NoteID)
			rec, err := encodeEntry(entryMeta{NoteID: e.NoteID, Action: e.Action, Timestamp: stamp}, e.Content)
			if err != nil {
				return fmt.Errorf("encode entry %s: %w", key, err)
			}
			if err := cb.entries.Put([]byte(key), rec); err != nil {
				return err
			}
			if e.NoteID != "" {
				if err := cb.byNote.Put(append(noteIndexPrefix(e.NoteID), key...), []byte(e.Action)); err != nil {
					return err
				}
			}
			if err := cb.byAction.Put(append(actionIndexPrefix(e.Action), key...), nil); err != nil {
				return err
			}
			out = append(out, LogEntry{Key: key, NoteID: e.NoteID, Action: e.Action, Timestamp: stamp})
		}
		if current != nil {
			return cb.putCurrent(current)
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "append %d changelog entries to board %s", len(entries), boardID)
	}
	return out, nil
}

// clScanBack walks c backwards over the keys that start with prefix and sort
// strictly before upper, calling fn until it returns false.
func clScanBack(c *bbolt.Cursor, prefix, upper []byte, fn func(k, v []byte) (bool, error)) error {
	var k, v []byte
	if k, _ = c.Seek(upper); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		more, err := fn(k, v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// logKeyBound is the key that log keys recorded strictly before before
// sort below: past every log key when before is nil.
func logKeyBound(before *time.Time) string {
	switch {
	case before == nil, before.UTC().Year() > 9999:
		// Keys after an index prefix all start with "log/"; "log0" sorts
		// right after every one of them ('0' follows '/').
		return "log0"
	case before.UTC().Year() < 0:
		// Stamps have four-digit years: nothing is older.
		return LogKeyPrefix
	}
	return LogKeyPrefix + Stamp(*before)
}

// ListLog answers q (see ChangelogStore). Each filter walks its own index,
// so a page costs about Limit reads whatever the log's size.
func (db *DB) ListLog(ctx context.Context, boardID string, q LogQuery) ([]LogEntry, error) {
	if q.Limit <= 0 {
		return nil, board.FieldErrorf("limit", "limit must be a positive integer.")
	}
	bound := logKeyBound(q.Before)
	out := []LogEntry{}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok {
			return err
		}
		add := func(key []byte) (bool, error) {
			m, _, err := decodeEntry(cb.entries.Get(key))
			if err != nil {
				return false, fmt.Errorf("entry %s: %w", key, err)
			}
			out = append(out, LogEntry{Key: string(key), NoteID: m.NoteID, Action: m.Action, Timestamp: m.Timestamp})
			return len(out) < q.Limit, nil
		}
		switch {
		case q.NoteID != "":
			prefix := noteIndexPrefix(q.NoteID)
			return clScanBack(cb.byNote.Cursor(), prefix, append(prefix, bound...), func(k, v []byte) (bool, error) {
				if q.Action != "" && string(v) != q.Action {
					return true, nil
				}
				key := k[len(prefix):]
				out = append(out, LogEntry{Key: string(key), NoteID: q.NoteID, Action: string(v), Timestamp: logKeyStamp(key)})
				return len(out) < q.Limit, nil
			})
		case q.Action != "":
			prefix := actionIndexPrefix(q.Action)
			return clScanBack(cb.byAction.Cursor(), prefix, append(prefix, bound...), func(k, _ []byte) (bool, error) {
				return add(k[len(prefix):])
			})
		default:
			return clScanBack(cb.entries.Cursor(), []byte(LogKeyPrefix), []byte(bound), func(k, _ []byte) (bool, error) {
				return add(k)
			})
		}
	})
	if err != nil {
		return nil, clWrap(err, "list changelog of board %s", boardID)
	}
	return out, nil
}

// readEntry copies the entry under key out of the transaction.
func readEntry(cb clBoard, key []byte) (*LogEntry, error) {
	v := cb.entries.Get(key)
	if v == nil {
		return nil, notFound("Changelog entry")
	}
	m, content, err := decodeEntry(v)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", key, err)
	}
	return &LogEntry{Key: string(key), NoteID: m.NoteID, Action: m.Action, Timestamp: m.Timestamp, Content: bytes.Clone(content)}, nil
}

// FindLogEntry returns one entry with its content (see ChangelogStore).
func (db *DB) FindLogEntry(ctx context.Context, boardID, key string) (*LogEntry, error) {
	var e *LogEntry
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil {
			return err
		} else if !ok {
			return notFound("Changelog entry")
		}
		e, err = readEntry(cb, []byte(key))
		return err
	})
	if err != nil {
		return nil, clWrap(err, "read changelog entry of board %s", boardID)
	}
	return e, nil
}

// LatestNoteEntry returns the newest entry about noteID (see ChangelogStore).
func (db *DB) LatestNoteEntry(ctx context.Context, boardID, noteID string) (*LogEntry, error) {
	var e *LogEntry
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil {
			return err
		} else if !ok {
			return notFound("Changelog entry")
		}
		prefix := noteIndexPrefix(noteID)
		if err := clScanBack(cb.byNote.Cursor(), prefix, append(prefix, "log0"...), func(k, _ []byte) (bool, error) {
			var err error
			e, err = readEntry(cb, k[len(prefix):])
			return false, err
		}); err != nil {
			return err
		}
		if e == nil {
			return notFound("Changelog entry")
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "read latest changelog entry of note %q on board %s", noteID, boardID)
	}
	return e, nil
}

// CurrentSnapshot returns current.md and whether it is fresh (see ChangelogStore).
func (db *DB) CurrentSnapshot(ctx context.Context, boardID string) ([]byte, bool, error) {
	var md []byte
	fresh := false
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok {
			return err
		}
		if v := cb.meta.Get(clMetaCurrent); v != nil {
			md = bytes.Clone(v)
			fresh, err = cb.currentFresh(b)
		}
		return err
	})
	if err != nil {
		return nil, false, clWrap(err, "read current snapshot of board %s", boardID)
	}
	return md, fresh, nil
}

// CurrentSnapshotFresh reports whether current.md shows the board as it is
// (see ChangelogStore).
func (db *DB) CurrentSnapshotFresh(ctx context.Context, boardID string) (bool, error) {
	fresh := false
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		b, err := getBoard(tx, boardID)
		if err != nil {
			return err
		}
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok || cb.meta.Get(clMetaCurrent) == nil {
			return err
		}
		fresh, err = cb.currentFresh(b)
		return err
	})
	if err != nil {
		return false, clWrap(err, "read current snapshot of board %s", boardID)
	}
	return fresh, nil
}

// PutSnapshot stores a point-in-time snapshot and prunes old ones (see
// ChangelogStore).
func (db *DB) PutSnapshot(ctx context.Context, boardID string, snap RenderedBoard, keep int) (SnapshotInfo, int, error) {
	var info SnapshotInfo
	pruned := 0
	err := db.update(ctx, func(tx *bbolt.Tx) error {
		cb, _, err := changelogBucket(tx, boardID, true)
		if err != nil {
			return err
		}
		stamp, err := cb.nextStamp(db.now())
		if err != nil {
			return err
		}
		info = SnapshotInfo{Key: SnapshotKeyPrefix + stamp + SnapshotKeySuffix, Timestamp: stamp}
		if err := cb.snapshots.Put([]byte(info.Key), snap.Markdown); err != nil {
			return err
		}
		if err := cb.meta.Put(clMetaSnapshotVersion, be64(uint64(snap.Version))); err != nil {
			return err
		}
		if err := cb.putCurrent(&snap); err != nil {
			return err
		}
		if keep <= 0 {
			return nil
		}
		// Counted with a cursor: Bucket.Stats does not see this
		// transaction's own writes. There are about keep+1 keys.
		var all [][]byte
		c := cb.snapshots.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			all = append(all, bytes.Clone(k))
		}
		if len(all) <= keep {
			return nil
		}
		old := all[:len(all)-keep]
		for _, k := range old {
			if err := cb.snapshots.Delete(k); err != nil {
				return err
			}
		}
		pruned = len(old)
		return nil
	})
	if err != nil {
		return SnapshotInfo{}, 0, clWrap(err, "store snapshot of board %s", boardID)
	}
	return info, pruned, nil
}

// ListSnapshots lists point-in-time snapshots, newest first (see ChangelogStore).
func (db *DB) ListSnapshots(ctx context.Context, boardID string) ([]SnapshotInfo, error) {
	out := []SnapshotInfo{}
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil || !ok {
			return err
		}
		c := cb.snapshots.Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			stamp := strings.TrimSuffix(strings.TrimPrefix(string(k), SnapshotKeyPrefix), SnapshotKeySuffix)
			out = append(out, SnapshotInfo{Key: string(k), Timestamp: stamp})
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "list snapshots of board %s", boardID)
	}
	return out, nil
}

// FindSnapshot returns a point-in-time snapshot (see ChangelogStore).
func (db *DB) FindSnapshot(ctx context.Context, boardID, key string) ([]byte, error) {
	var md []byte
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		cb, ok, err := changelogBucket(tx, boardID, false)
		if err != nil {
			return err
		}
		if ok {
			md = bytes.Clone(cb.snapshots.Get([]byte(key)))
		}
		if md == nil {
			return notFound("Snapshot")
		}
		return nil
	})
	if err != nil {
		return nil, clWrap(err, "read snapshot of board %s", boardID)
	}
	return md, nil
}

// BoardsToSnapshot lists boards changed since their last snapshot (see
// ChangelogStore).
func (db *DB) BoardsToSnapshot(ctx context.Context) ([]string, error) {
	var ids []string
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		top := tx.Bucket(bucketChangelog)
		return tx.Bucket(bucketBoards).ForEach(func(k, _ []byte) error {
			b, err := getBoard(tx, string(k))
			if err != nil {
				return err
			}
			var last int64
			if cl := top.Bucket(k); cl != nil {
				last, _ = clInt64(cl.Bucket(clMeta), clMetaSnapshotVersion)
			}
			if b.Version != last {
				ids = append(ids, b.ID)
			}
			return nil
		})
	})
	if err != nil {
		return nil, clWrap(err, "list boards to snapshot")
	}
	return ids, nil
}
