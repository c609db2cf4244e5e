package rowmerge

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"corkboard/board"
)

// decode reads a stored row as the row's own UnmarshalJSON does, which
// keeps extra fields (in order) and matches keys exactly. Most rows have
// no extra fields, and for them a single pass over the JSON (decodeNote,
// decodeItem) is several times cheaper than encoding/json, which scans a
// value twice (once to check it, once to decode it) and goes through
// reflection. The single pass reads exactly what the stores write
// (encoding/json's output for the row's own fields); it gives up on
// anything else (an extra field, a null where a string belongs, an escape
// encoding/json does not write, invalid UTF-8, a number it cannot read),
// and the row is then read the full way, so the result is the same either
// way: FuzzDecode checks it against UnmarshalJSON.
func decode[T any](data []byte, v *T) error {
	var zero T
	*v = zero
	switch p := any(v).(type) {
	case *board.Note:
		if decodeNote(data, p) {
			return nil
		}
	case *board.TrackerItem:
		if decodeItem(data, p) {
			return nil
		}
	}
	*v = zero
	return json.Unmarshal(data, v)
}

// decodeNote reads data into *n, which must be zero, in one pass; false
// when data is not a note the single pass reads (see decode).
func decodeNote(data []byte, n *board.Note) bool {
	s := newScanner(data)
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.str(&n.ID)
		case "title":
			return s.str(&n.Title)
		case "content":
			return s.str(&n.Content)
		case "x":
			return s.float(&n.X)
		case "y":
			return s.float(&n.Y)
		case "color":
			return s.str(&n.Color)
		case "type":
			return s.str(&n.Type)
		case "updatedAt":
			return s.str(&n.UpdatedAt)
		case "version":
			return s.int(&n.Version)
		case "deletedAt":
			return s.nullableStr(&n.DeletedAt)
		case "locked":
			s.space()
			n.Locked = s.literal("true")
			return n.Locked || s.literal("false")
		case "createdBy":
			return s.str(&n.CreatedBy)
		}
		return false
	})
}

// decodeItem is decodeNote for a tracker item.
func decodeItem(data []byte, it *board.TrackerItem) bool {
	s := newScanner(data)
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.str(&it.ID)
		case "key":
			return s.str(&it.Key)
		case "type":
			return s.str(&it.Type)
		case "summary":
			return s.str(&it.Summary)
		case "description":
			return s.str(&it.Description)
		case "status":
			return s.str(&it.Status)
		case "parentId":
			return s.str(&it.ParentID)
		case "updatedAt":
			return s.str(&it.UpdatedAt)
		case "version":
			return s.int(&it.Version)
		case "deletedAt":
			return s.nullableStr(&it.DeletedAt)
		}
		return false
	})
}

// scanner is the single pass of decodeNote and decodeItem over one JSON
// object. Each method reports false for anything it does not read, and
// the caller then gives up.
//
// The strings it reads are written one after the other into one buffer,
// as long as the JSON (which holds them, escaped), and assigned when the
// whole object has been read: a row's strings take one allocation between
// them instead of one each, on every merged push. They keep the buffer
// alive together, which is the row's size.
type scanner struct {
	data []byte
	pos  int
	out  strings.Builder
	// strs are the strings read so far: where each goes, and its bytes in
	// out. A row has fewer strings than this; past it, a string takes an
	// allocation of its own.
	strs  [12]pendingStr
	nstrs int
}

type pendingStr struct {
	dst        *string
	start, end int
}

func newScanner(data []byte) *scanner {
	s := &scanner{data: data}
	s.out.Grow(len(data))
	return s
}

// keep records that the string written to out from start goes to *dst.
func (s *scanner) keep(dst *string, start int) {
	if s.nstrs == len(s.strs) {
		*dst = s.out.String()[start:]
		return
	}
	s.strs[s.nstrs] = pendingStr{dst, start, s.out.Len()}
	s.nstrs++
}

// finish assigns the strings read, once the object has been read whole.
func (s *scanner) finish() {
	all := s.out.String()
	for _, p := range s.strs[:s.nstrs] {
		*p.dst = all[p.start:p.end]
	}
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// next consumes c, after any white space.
func (s *scanner) next(c byte) bool {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// object reads a whole JSON object, calling field for each key with the
// scanner at its value, which field must read. Nothing may follow the
// object but white space.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if !s.next('}') {
		for {
			key, ok := s.plainString()
			if !ok || !s.next(':') || !field(key) {
				return false
			}
			if s.next(',') {
				continue
			}
			if !s.next('}') {
				return false
			}
			break
		}
	}
	s.space()
	if s.pos != len(s.data) {
		return false
	}
	s.finish()
	return true
}

// plainString reads a string without escapes or bytes past ASCII (a key
// of the row's own fields), returning its bytes in data.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start := s.pos
	for ; s.pos < len(s.data); s.pos++ {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return s.data[start : s.pos-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a JSON string into *dst. It takes the escapes encoding/json
// writes (\" \\ \/ \b \f \n \r \t and \u of anything but a surrogate) and
// valid UTF-8.
func (s *scanner) str(dst *string) bool {
	if !s.next('"') {
		return false
	}
	start := s.pos
	// Most of a string is copied as it is: runs of plain bytes.
	for i := s.pos; i < len(s.data); {
		i += plainPrefix(s.data[i:])
		if i == len(s.data) {
			break
		}
		switch c := s.data[i]; {
		case c == '"':
			at := s.out.Len()
			s.out.Write(s.data[start:i])
			s.keep(dst, at)
			s.pos = i + 1
			return true
		case c == '\\':
			return s.escaped(dst, start, i)
		case c < 0x20:
			return false
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		}
	}
	return false
}

// escaped finishes str for a string that started at start and has its
// first escape at i, unescaping it into out.
func (s *scanner) escaped(dst *string, start, i int) bool {
	b := &s.out
	at := b.Len()
	b.Write(s.data[start:i])
	for i < len(s.data) {
		j := i + plainPrefix(s.data[i:])
		b.Write(s.data[i:j])
		if i = j; i == len(s.data) {
			break
		}
		c := s.data[i]
		switch {
		case c == '"':
			s.keep(dst, at)
			s.pos = i + 1
			return true
		case c == '\\':
			if i+1 >= len(s.data) {
				return false
			}
			switch e := s.data[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := hex4(s.data[i+2:])
				if !ok || utf16.IsSurrogate(r) {
					return false
				}
				b.WriteRune(r)
				i += 4
			default:
				return false
			}
			i += 2
		case c < 0x20:
			return false
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			b.Write(s.data[i : i+size])
			i += size
		}
	}
	return false
}

// plainPrefix returns how many bytes at the start of p are plain in a JSON
// string: ASCII, printable, neither '"' nor '\\'. It tests eight bytes at
// a time (a word that may hold another byte is then read byte by byte).
func plainPrefix(p []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// hasLess(w, n) is nonzero when a byte of w is below n (n <= 0x80),
	// for words without a byte past 0x7f.
	hasLess := func(w, n uint64) uint64 { return (w - ones*n) &^ w & highs }
	i := 0
	for ; i+8 <= len(p); i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		if w&highs != 0 || hasLess(w, 0x20) != 0 || hasLess(w^(ones*'"'), 1) != 0 || hasLess(w^(ones*'\\'), 1) != 0 {
			break
		}
	}
	for ; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// hex4 reads the four hex digits of a \u escape.
func hex4(p []byte) (rune, bool) {
	if len(p) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// nullableStr reads null (nil) or a string into *dst.
func (s *scanner) nullableStr(dst **string) bool {
	s.space()
	if s.literal("null") {
		*dst = nil
		return true
	}
	var v string
	if !s.str(&v) {
		return false
	}
	*dst = &v
	return true
}

func (s *scanner) literal(word string) bool {
	if len(s.data)-s.pos >= len(word) && string(s.data[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	return false
}

// number reads a JSON number (RFC 8259's grammar, which strconv's is
// wider than) and returns its text.
func (s *scanner) number() ([]byte, bool) {
	s.space()
	d, start, i := s.data, s.pos, s.pos
	digits := func() bool {
		j := i
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	s.pos = i
	return d[start:i], true
}

// float reads a number as encoding/json reads one into a float64.
func (s *scanner) float(dst *float64) bool {
	lit, ok := s.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return false
	}
	*dst = f
	return true
}

// int reads a number as encoding/json reads one into an int64.
func (s *scanner) int(dst *int64) bool {
	lit, ok := s.number()
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(string(lit), 10, 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}
