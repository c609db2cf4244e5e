package board

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits. "Characters" are Unicode code points throughout.
const (
	MaxUpsertedNotes   = 500   // spec: notes.upserted per push
	MaxUpsertedItems   = 500   // spec: trackerItems.upserted per push
	MaxNoteContent     = 30000 // spec: note content
	MaxDeletedPerPush  = 5000  // Corkboard: deleted IDs per list per push
	MaxIDLen           = 128   // note and tracker item IDs
	MaxBoardIDLen      = 64
	MaxTitleLen        = 1000
	MaxShortField      = 64 // color, type, status, item key
	MaxBoardNameLen    = 200
	MaxItemSummaryLen  = 1000
	MaxItemDescription = 30000
	MaxCoordinate      = 1e9 // |x| and |y|
	MinNoteWidth       = 120 // a note's w, when set
	MinNoteHeight      = 80  // a note's h, when set
	MaxNoteSize        = 4000
	MaxEmailLen        = 254
	MaxPhases          = 100
	MaxPhaseBytes      = 4096 // one phase object, as JSON
	MaxInvites         = 1000 // collaborators per board
)

// ValidBoardID reports whether id is 1 to 64 characters of A-Za-z0-9_-.
func ValidBoardID(id string) bool {
	if len(id) == 0 || len(id) > MaxBoardIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidateBoardID returns an EINVALID error naming field unless id is a valid
// board ID (see ValidBoardID), so every entry point words the rule the same.
func ValidateBoardID(field, id string) error {
	if !ValidBoardID(id) {
		return FieldErrorf(field, "%s must be 1 to %d characters of A-Z, a-z, 0-9, _ and -.", field, MaxBoardIDLen)
	}
	return nil
}

// NormalizeEmail trims and lower-cases an address and checks it is one bare
// address (no display name, no CR/LF or other control characters). field
// names the request field in the error.
func NormalizeEmail(field, s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", FieldErrorf(field, "%s is required.", field)
	}
	if utf8.RuneCountInString(s) > MaxEmailLen {
		return "", FieldErrorf(field, "%s must be at most %d characters.", field, MaxEmailLen)
	}
	for _, r := range s {
		if r < 0x21 || r == 0x7f || r == ',' || r == ';' || r == '<' || r == '>' || r == '"' {
			return "", FieldErrorf(field, "%s is not a valid e-mail address.", field)
		}
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return "", FieldErrorf(field, "%s is not a valid e-mail address.", field)
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at == len(s)-1 || !strings.Contains(s[at+1:], ".") && s[at+1:] != "localhost" {
		return "", FieldErrorf(field, "%s is not a valid e-mail address.", field)
	}
	return s, nil
}

// ValidateTimestamp checks an optional ISO 8601 (RFC 3339) timestamp.
func ValidateTimestamp(field, s string) error {
	if s == "" {
		return nil
	}
	if len(s) > 64 {
		return FieldErrorf(field, "%s must be an ISO 8601 timestamp.", field)
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return FieldErrorf(field, "%s must be an ISO 8601 timestamp such as 2026-11-22T10:00:00Z.", field)
	}
	return nil
}

func checkLen(field, s string, max int, required bool) error {
	if required && s == "" {
		return FieldErrorf(field, "%s is required.", field)
	}
	if !utf8.ValidString(s) {
		return FieldErrorf(field, "%s must be valid UTF-8.", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return FieldErrorf(field, "%s must be at most %d characters (got %d).", field, max, n)
	}
	return nil
}

func checkCoord(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxCoordinate {
		return FieldErrorf(field, "%s must be a finite number between -%g and %g.", field, float64(MaxCoordinate), float64(MaxCoordinate))
	}
	return nil
}

// checkNoteSize checks a note's w and h: both 0 (no size), or both set
// within their bounds. Bounds keep a note grabbable and a board's layout
// sane; the client's default, 220×160, sits well inside them.
func checkNoteSize(path string, w, h float64) error {
	if w == 0 && h == 0 {
		return nil
	}
	for _, c := range []struct {
		name      string
		v, other  float64
		min       float64
		otherName string
	}{
		{"w", w, h, MinNoteWidth, "h"},
		{"h", h, w, MinNoteHeight, "w"},
	} {
		f := path + "." + c.name
		if c.v == 0 {
			return FieldErrorf(f, "%s is required when %s is set: a note's size is both or neither.", f, c.otherName)
		}
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < c.min || c.v > MaxNoteSize {
			return FieldErrorf(f, "%s must be a number from %g to %g.", f, c.min, float64(MaxNoteSize))
		}
	}
	return nil
}

// Validate checks a note as upserted by a client; path is its place in the
// request, e.g. "notes.upserted[17]".
func (n *Note) Validate(path string) error {
	if err := checkLens(path, []lenCheck{
		{"id", n.ID, MaxIDLen, true},
		{"title", n.Title, MaxTitleLen, false},
		{"content", n.Content, MaxNoteContent, false},
		{"color", n.Color, MaxShortField, false},
		{"type", n.Type, MaxShortField, false},
	}); err != nil {
		return err
	}
	if err := checkCoord(path+".x", n.X); err != nil {
		return err
	}
	if err := checkCoord(path+".y", n.Y); err != nil {
		return err
	}
	if err := checkNoteSize(path, n.W, n.H); err != nil {
		return err
	}
	return checkRowTail(path, n.UpdatedAt, n.BaseVersion, NoteFields, n.Extra)
}

// Validate checks a tracker item as upserted by a client.
func (it *TrackerItem) Validate(path string) error {
	if err := checkLens(path, []lenCheck{
		{"id", it.ID, MaxIDLen, true},
		{"key", it.Key, MaxShortField, false},
		{"type", it.Type, MaxShortField, false},
		{"summary", it.Summary, MaxItemSummaryLen, false},
		{"description", it.Description, MaxItemDescription, false},
		{"status", it.Status, MaxShortField, false},
		{"parentId", it.ParentID, MaxIDLen, false},
	}); err != nil {
		return err
	}
	return checkRowTail(path, it.UpdatedAt, it.BaseVersion, ItemFields, it.Extra)
}

// lenCheck is one string field of a row for checkLens.
type lenCheck struct {
	name string
	v    string
	max  int
	req  bool
}

// checkLens checks each field's length, in order; path is the row's place
// in the request.
func checkLens(path string, fields []lenCheck) error {
	for _, c := range fields {
		if err := checkLen(path+"."+c.name, c.v, c.max, c.req); err != nil {
			return err
		}
	}
	return nil
}

// checkRowTail checks what every kind of row carries after its own fields:
// updatedAt, baseVersion and the extra fields (known: the row's own names).
func checkRowTail(path, updatedAt string, baseVersion int64, known []string, extra []Field) error {
	if err := ValidateTimestamp(path+".updatedAt", updatedAt); err != nil {
		return err
	}
	if baseVersion < 0 {
		return FieldErrorf(path+".baseVersion", "%s.baseVersion must be a non-negative integer.", path)
	}
	return validateExtra(path, known, extra)
}

// checkListLen refuses a push list (key, e.g. "notes.upserted") of more
// than max rows, noun naming them in the message.
func checkListLen(key, noun string, n, max int) error {
	if n > max {
		return FieldErrorf(key, "%s may hold at most %d %s (got %d).", key, max, noun, n)
	}
	return nil
}

// firstError is the first of checks that failed, in order.
func firstError(checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// validateEach validates each upserted row of the push list key.
func validateEach[T any, P interface {
	*T
	Validate(path string) error
}](key string, rows []T) error {
	for i := range rows {
		if err := P(&rows[i]).Validate(fmt.Sprintf("%s[%d]", key, i)); err != nil {
			return err
		}
	}
	return nil
}

func validateIDs(path string, ids []string) error {
	if len(ids) > MaxDeletedPerPush {
		return FieldErrorf(path, "%s may list at most %d IDs (got %d).", path, MaxDeletedPerPush, len(ids))
	}
	for i, id := range ids {
		if err := checkLen(fmt.Sprintf("%s[%d]", path, i), id, MaxIDLen, true); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a whole push; the first problem is returned as an EINVALID
// error naming its field. Nothing is applied when it fails.
func (p *Push) Validate() error {
	if p.ClientVersion < 0 {
		return FieldErrorf("clientVersion", "clientVersion must be a non-negative integer.")
	}
	if p.Board != nil {
		if err := checkLen("board.name", p.Board.Name, MaxBoardNameLen, false); err != nil {
			return err
		}
		if err := ValidateTimestamp("board.updatedAt", p.Board.UpdatedAt); err != nil {
			return err
		}
	}
	// The list limits first (as decoding does), then each row, then the
	// deleted IDs; connectors and frames after notes and items. The checks
	// are cheap and bounded, so all run and the first failure is answered.
	return firstError(
		checkListLen("notes.upserted", "notes", len(p.Notes.Upserted), MaxUpsertedNotes),
		checkListLen("trackerItems.upserted", "items", len(p.TrackerItems.Upserted), MaxUpsertedItems),
		validateEach("notes.upserted", p.Notes.Upserted),
		validateEach("trackerItems.upserted", p.TrackerItems.Upserted),
		validateIDs("notes.deleted", p.Notes.Deleted),
		validateIDs("trackerItems.deleted", p.TrackerItems.Deleted),
		p.validateTimer(),
		p.validateVote(),
		p.validateStructure(),
	)
}

// Validate checks a phase configuration: an array of objects each with a
// non-empty, unique string id, and currentPhaseId one of them or empty.
func (ph *Phases) Validate() error {
	if len(ph.Phases) > MaxPhases {
		return FieldErrorf("phases.phases", "phases.phases may hold at most %d phases.", MaxPhases)
	}
	seen := make(map[string]bool, len(ph.Phases))
	for i, raw := range ph.Phases {
		field := fmt.Sprintf("phases.phases[%d]", i)
		if len(raw) > MaxPhaseBytes {
			return FieldErrorf(field, "%s must be at most %d bytes of JSON.", field, MaxPhaseBytes)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return FieldErrorf(field, "%s must be an object.", field)
		}
		var id string
		if err := json.Unmarshal(obj["id"], &id); err != nil || id == "" {
			return FieldErrorf(field+".id", "%s.id must be a non-empty string.", field)
		}
		if err := checkLen(field+".id", id, MaxIDLen, true); err != nil {
			return err
		}
		if seen[id] {
			return FieldErrorf(field+".id", "%s.id %q is used by an earlier phase.", field, id)
		}
		seen[id] = true
	}
	if ph.CurrentPhaseID != "" && !seen[ph.CurrentPhaseID] {
		return FieldErrorf("phases.currentPhaseId", "phases.currentPhaseId must be the id of one of the phases, or empty.")
	}
	return nil
}

// validateTimer checks the timer action a push carries (only the server's
// timer endpoint sets one: a sync push never decodes it).
func (p *Push) validateTimer() error {
	if p.Timer == nil {
		return nil
	}
	return p.Timer.Validate()
}
