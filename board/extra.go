package board

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Limits of the fields a row carries beyond the ones Corkboard knows
// (docs/sync.md, "Extra fields").
const (
	// MaxExtraFields is how many extra fields one note or tracker item may
	// carry.
	MaxExtraFields = 32
	// MaxExtraBytes bounds the extra fields of one row: the names plus the
	// values as compact JSON.
	MaxExtraBytes = 16 << 10
)

// Field is one field of a note or tracker item that Corkboard does not know
// (a client's width, z-order, priority, assignee …). The server keeps it as
// the client sent it and gives it back on pull, in live messages and in the
// Markdown formats.
type Field struct {
	Name string
	// Value is the field's JSON value, compact (no whitespace outside
	// strings).
	Value json.RawMessage
}

// NoteFields are the JSON names of Note's own fields (baseVersion is read
// from pushes only, and is never an extra field).
var NoteFields = []string{"id", "title", "content", "x", "y", "w", "h", "color", "type", "updatedAt", "version", "deletedAt", "baseVersion", "locked", "createdBy"}

// ItemFields are the JSON names of TrackerItem's own fields.
var ItemFields = []string{"id", "key", "type", "summary", "description", "status", "parentId", "updatedAt", "version", "deletedAt", "baseVersion"}

// ShadowsField reports whether an extra field called name would be taken
// for one of known: the same name, or the same but for case (encoding/json
// matches keys case-insensitively, so "Title" would land on Title).
func ShadowsField(known []string, name string) bool {
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// ExtraSize is what fields count against MaxExtraBytes.
func ExtraSize(fields []Field) int {
	n := 0
	for _, f := range fields {
		n += len(f.Name) + len(f.Value)
	}
	return n
}

// validateExtra checks a row's extra fields; path is the row's place in the
// request.
func validateExtra(path string, known []string, fields []Field) error {
	if len(fields) > MaxExtraFields {
		f := path + "." + fields[MaxExtraFields].Name
		return FieldErrorf(f, "%s: a row may carry at most %d fields besides its own.", f, MaxExtraFields)
	}
	size := 0
	for i, f := range fields {
		p := path + "." + f.Name
		if !utf8.ValidString(f.Name) {
			return FieldErrorf(path, "%s has a field name that is not valid UTF-8.", path)
		}
		if ShadowsField(known, f.Name) {
			return FieldErrorf(p, "Unknown field %q: it differs from a known field only in case, or repeats it.", p)
		}
		for _, g := range fields[:i] {
			if g.Name == f.Name {
				return FieldErrorf(p, "Duplicate key %q.", p)
			}
		}
		if !json.Valid(f.Value) || !utf8.Valid(f.Value) {
			return FieldErrorf(p, "%s must be valid JSON.", p)
		}
		if size += len(f.Name) + len(f.Value); size > MaxExtraBytes {
			return FieldErrorf(p, "%s: the extra fields of a row may hold at most %d bytes of JSON.", p, MaxExtraBytes)
		}
	}
	return nil
}

// appendExtra writes fields into obj, a JSON object encoded by
// encoding/json, before its closing brace. Fields that would shadow a known
// one are left out: they can only come from a caller that skipped
// validation, and the known field must win.
func appendExtra(obj []byte, known []string, fields []Field) ([]byte, error) {
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return nil, errors.New("board: encoded row is not an object")
	}
	out := make([]byte, 0, len(obj)+ExtraSize(fields)+8*len(fields))
	out = append(out, obj[:len(obj)-1]...)
	for _, f := range fields {
		if ShadowsField(known, f.Name) {
			continue
		}
		name, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, name...)
		out = append(out, ':')
		out = append(out, f.Value...)
	}
	return append(out, '}'), nil
}

// ExtraObject writes fields as one JSON object, in order: the form the
// Markdown formats keep them in.
func ExtraObject(fields []Field) []byte {
	b, err := appendExtra([]byte("{}"), nil, fields)
	if err != nil {
		panic(err) // "{}" is an object
	}
	return b
}

// ParseExtraObject reads a JSON object written by ExtraObject back into
// fields, values compact, in order. A repeated name is an error.
func ParseExtraObject(data []byte) ([]Field, error) {
	fields, err := splitFields(data, nil, nil)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, errors.New("board: extra fields must be a JSON object")
	}
	for i, f := range fields {
		for _, g := range fields[:i] {
			if g.Name == f.Name {
				return nil, fmt.Errorf("board: extra field %q appears twice", f.Name)
			}
		}
	}
	return fields, nil
}

// marshalRow encodes a row's own fields (own: the row as a type without its
// methods), then its extra fields in the order the client sent them.
func marshalRow(own any, known []string, extra []Field) ([]byte, error) {
	b, err := json.Marshal(own)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	return appendExtra(b, known, extra)
}

// unmarshalRow reads a row whose own fields are all plain JSON values:
// fields maps each key to where its value goes, and the keys that are not
// the row's own are returned as its extra fields. null reports null and
// changes nothing, encoding/json's convention.
func unmarshalRow(data []byte, known []string, fields map[string]any) (extra []Field, null bool, err error) {
	extra, err = splitFields(data, known, func(key string, v []byte) error {
		if p, ok := fields[key]; ok {
			return json.Unmarshal(v, p)
		}
		return nil
	})
	return extra, err == nil && bytes.Equal(bytes.TrimSpace(data), []byte("null")), err
}

// splitFields reads the JSON object data: each known key's value goes to
// set, every other key becomes an extra field, in order. Keys match
// exactly, unlike encoding/json's case-insensitive match, so an extra field
// named "Title" never overwrites Title.
func splitFields(data []byte, known []string, set func(key string, value []byte) error) ([]Field, error) {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil // encoding/json's convention: null changes nothing
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("board: row is not a JSON object")
	}
	var extra []Field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		isKnown := false
		for _, k := range known {
			if k == key {
				isKnown = true
				break
			}
		}
		if isKnown {
			if err := set(key, v); err != nil {
				return nil, fmt.Errorf("board: field %s: %w", key, err)
			}
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		extra = append(extra, Field{Name: key, Value: c.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("board: data after the row's JSON object")
	}
	return extra, nil
}

// noteJSON is Note without its methods, for encoding/json.
type noteJSON Note

// MarshalJSON writes the note's own fields, then its extra fields in the
// order the client sent them.
func (n Note) MarshalJSON() ([]byte, error) {
	return marshalRow(noteJSON(n), NoteFields, n.Extra)
}

// UnmarshalJSON reads a note written by MarshalJSON: keys that are not the
// note's own become Extra.
func (n *Note) UnmarshalJSON(data []byte) error {
	var f noteJSON
	extra, null, err := unmarshalRow(data, NoteFields, map[string]any{"id": &f.ID, "title": &f.Title, "content": &f.Content,
		"x": &f.X, "y": &f.Y, "w": (*lenientSize)(&f.W), "h": (*lenientSize)(&f.H), "color": &f.Color, "type": &f.Type,
		"updatedAt": &f.UpdatedAt, "version": &f.Version, "deletedAt": &f.DeletedAt,
		"locked": &f.Locked, "createdBy": &f.CreatedBy})
	if err != nil || null {
		return err
	}
	if checkNoteSize("", f.W, f.H) != nil {
		// Only a stored extra field from before w and h were the note's
		// own can be out of bounds, or one without the other: it reads as
		// no size rather than as a size no push could set.
		f.W, f.H = 0, 0
	}
	f.Extra = extra
	*n = Note(f)
	return nil
}

// itemJSON is TrackerItem without its methods, for encoding/json.
type itemJSON TrackerItem

// MarshalJSON writes the item's own fields, then its extra fields in the
// order the client sent them.
func (it TrackerItem) MarshalJSON() ([]byte, error) {
	return marshalRow(itemJSON(it), ItemFields, it.Extra)
}

// UnmarshalJSON reads an item written by MarshalJSON: keys that are not the
// item's own become Extra.
func (it *TrackerItem) UnmarshalJSON(data []byte) error {
	var f itemJSON
	extra, null, err := unmarshalRow(data, ItemFields, map[string]any{"id": &f.ID, "key": &f.Key, "type": &f.Type,
		"summary": &f.Summary, "description": &f.Description, "status": &f.Status, "parentId": &f.ParentID,
		"updatedAt": &f.UpdatedAt, "version": &f.Version, "deletedAt": &f.DeletedAt})
	if err != nil || null {
		return err
	}
	f.Extra = extra
	*it = TrackerItem(f)
	return nil
}

// lenientSize is a note's w or h as read from storage. null is 0 (no
// size), and so is a value that is not a number: before w and h were the
// note's own fields a client could have stored anything under those names
// as extra fields, and a stored row must stay readable (docs/sync.md, "Note
// size"). UnmarshalJSON then drops a pair that is not a valid size.
type lenientSize float64

// UnmarshalJSON reads a number, and anything else as 0.
func (s *lenientSize) UnmarshalJSON(v []byte) error {
	if json.Unmarshal(v, (*float64)(s)) != nil {
		*s = 0
	}
	return nil
}
