// Package jsondec decodes JSON request bodies in one streaming pass, with
// bounds: arrays are counted while they are read and refused at their
// limit plus one, objects and arrays nest at most MaxDepth levels, strings
// must be valid UTF-8, keys may not repeat, numbers must be finite. It reads
// from an io.Reader through a fixed buffer, so a body that breaks a rule is
// refused after reading only as far as the break, and a body that keeps
// them costs memory in proportion to what it holds.
//
// It has no reflection: a caller declares each type's Shape once (shape.go),
// a field per JSON name with its bound and a function giving its place in
// the type, and what is done with other keys (Skip, Refuse, or a rule of
// its own); Shape.Decode then calls Object, Array with the element limit,
// and String, Int64, Float64, Bool, Raw or Skip for the values. The
// primitives stay public for what a shape cannot say (docs/api.md,
// "Request bodies", has the design).
//
// Every error a body causes is a *board.Error with code EINVALID whose
// Field is the path of the offending value (notes.upserted[3].x); errors
// of the underlying reader are returned wrapped, as they are.
package jsondec

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"corkboard/board"
)

// MaxDepth bounds how deeply arrays and objects may nest. Corkboard's own
// shapes need fewer than ten levels; the rest is room for client-owned
// values (extra fields, phases, tool inputs).
const MaxDepth = 100

// bufSize is the read buffer: large enough that reads are few, small
// enough not to matter next to a body.
const bufSize = 32 << 10

// Decoder reads one JSON value. The zero value is not usable; see New and
// NewBytes. Its first error sticks: every later call returns it.
type Decoder struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool  // r has nothing more; buf[pos:end] is the rest
	consumed int64 // bytes dropped from the front of buf before
	err      error

	depth int
	path  []seg
	// keys are the keys of the objects open now, for duplicate checks, as
	// places in arena (8 bytes a key, not a 24-byte slice: an object of
	// many short keys must not cost many times its size); each object's
	// start in keys is on the Go stack of its Object call.
	keys  []keyRef
	arena []byte // the bytes of keys

	scratch []byte // string and number being decoded

	capturing bool
	capStart  int    // start in buf of what is being captured
	capBuf    []byte // captured bytes already moved out of buf
	capMax    int
}

// doubling returns s with room for n more elements, doubling its capacity
// when it must grow. append grows large slices by a quarter, which for a
// slice grown from nothing allocates five times its final size in all;
// doubling allocates twice.
func doubling[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	out := make([]T, len(s), max(2*cap(s), len(s)+n, 64))
	copy(out, s)
	return out
}

// keyRef is a key's place in the arena.
type keyRef struct{ off, n uint32 }

func (d *Decoder) key(k keyRef) []byte { return d.arena[k.off : k.off+k.n] }

// seg is one step of a value's path: a key, or an index when key is nil.
type seg struct {
	key []byte
	idx int
}

// New returns a decoder reading from r.
func New(r io.Reader) *Decoder {
	return &Decoder{r: r, buf: make([]byte, bufSize)}
}

// NewBytes returns a decoder of data, which it never modifies and reads
// without copying.
func NewBytes(data []byte) *Decoder {
	return &Decoder{buf: data, end: len(data), eof: true}
}

// Offset is how many bytes of the input have been consumed.
func (d *Decoder) Offset() int64 { return d.consumed + int64(d.pos) }

// Err returns the first error the decoder met.
func (d *Decoder) Err() error { return d.err }

// Path renders the path of the value being decoded ("body" at the top).
func (d *Decoder) Path() string {
	if len(d.path) == 0 {
		return "body"
	}
	var b []byte
	for _, s := range d.path {
		if s.key == nil {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.idx), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, s.key...)
	}
	return string(b)
}

// Errorf records and returns an EINVALID error naming the current path;
// "%[1]s" in format is that path.
func (d *Decoder) Errorf(format string, args ...any) error {
	if d.err != nil {
		return d.err
	}
	p := d.Path()
	d.err = board.FieldErrorf(p, format, append([]any{p}, args...)...)
	return d.err
}

func (d *Decoder) fail(err error) error {
	if d.err == nil {
		d.err = err
	}
	return d.err
}

// fill reads more input, keeping buf[pos:end]; false when there is none
// (d.err is set for a read error).
func (d *Decoder) fill() bool {
	if d.eof || d.err != nil {
		return false
	}
	if d.capturing {
		d.capBuf = append(d.capBuf, d.buf[d.capStart:d.pos]...)
		d.capStart = 0
		if len(d.capBuf) > d.capMax {
			d.Errorf("%s is too large: at most %d bytes of JSON.", d.capMax)
			return false
		}
	}
	n := copy(d.buf, d.buf[d.pos:d.end])
	d.consumed += int64(d.pos)
	d.pos, d.end = 0, n
	for d.end < len(d.buf) {
		m, err := d.r.Read(d.buf[d.end:])
		d.end += m
		if err == io.EOF {
			d.eof = true
			break
		}
		if err != nil {
			d.fail(fmt.Errorf("read body: %w", err))
			return false
		}
		if m > 0 {
			break
		}
	}
	return d.end > d.pos || !d.eof
}

// ensure tries to make n bytes available at pos; false at the end of input.
func (d *Decoder) ensure(n int) bool {
	for d.end-d.pos < n {
		if !d.fill() {
			return false
		}
	}
	return true
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (d *Decoder) peek() byte {
	for {
		for d.pos < d.end {
			switch c := d.buf[d.pos]; c {
			case ' ', '\t', '\n', '\r':
				d.pos++
			default:
				return c
			}
		}
		if !d.fill() {
			return 0
		}
	}
}

// truncated is the error for input that ends inside a value.
func (d *Decoder) truncated() error {
	if d.err != nil {
		return d.err
	}
	return d.fail(board.Errorf(board.EINVALID, "Request body is truncated JSON."))
}

// syntax is the error for a byte that cannot start or continue a value.
func (d *Decoder) syntax(c byte, what string) error {
	if c == 0 && d.pos >= d.end {
		return d.truncated()
	}
	return d.Errorf("Malformed JSON at byte %[2]d: %[3]q where %[4]s was expected.", d.Offset(), rune(c), what)
}

// Null consumes a null and reports true, or reports false and consumes
// nothing.
func (d *Decoder) Null() bool {
	if d.err != nil || d.peek() != 'n' {
		return false
	}
	return d.literal("null") == nil
}

func (d *Decoder) literal(lit string) error {
	if !d.ensure(len(lit)) {
		if d.err != nil {
			return d.err
		}
		return d.truncated()
	}
	if string(d.buf[d.pos:d.pos+len(lit)]) != lit {
		return d.syntax(d.buf[d.pos], "a value")
	}
	d.pos += len(lit)
	return nil
}

// kind names the JSON type starting with c, for wrong-type errors.
func kind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// wrongType reports that the value at the current path, starting with c,
// is not want.
func (d *Decoder) wrongType(c byte, want string) error {
	switch c {
	case '{', '[', '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if c == 'n' {
			return d.Errorf("%s must be %s, not null.", want)
		}
		return d.Errorf("%s must be %s, not %s.", want, kind(c))
	}
	return d.syntax(c, "a value")
}

func (d *Decoder) enter() error {
	if d.depth++; d.depth > MaxDepth {
		return d.Errorf("%s nests arrays and objects more than %d levels deep.", MaxDepth)
	}
	return nil
}

// maxLinearKeys is how many keys an object may have before duplicates are
// looked for by sorting at its end rather than by comparing each new key
// with the earlier ones.
const maxLinearKeys = 16

// Object decodes an object, calling field for each key with the decoder
// at the key's value; field must consume that value (Skip for keys it does
// not want). key is valid only during the call.
func (d *Decoder) Object(field func(key []byte) error) error {
	if d.err != nil {
		return d.err
	}
	c := d.peek()
	if c != '{' {
		return d.wrongType(c, "an object")
	}
	d.pos++
	if err := d.enter(); err != nil {
		return err
	}
	keysStart, arenaStart := len(d.keys), len(d.arena)
	defer func() {
		d.keys = d.keys[:keysStart]
		d.arena = d.arena[:arenaStart]
	}()
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		c := d.peek()
		if c != '"' {
			return d.syntax(c, "a key string")
		}
		d.pos++
		start := len(d.arena)
		d.arena = doubling(d.arena, 16)
		var err error
		if d.arena, err = d.appendString(d.arena, true); err != nil {
			return err
		}
		if len(d.arena) > math.MaxUint32 {
			return d.Errorf("%s: too many keys.")
		}
		key := d.arena[start:len(d.arena):len(d.arena)]
		d.path = append(d.path, seg{key: key})
		open := d.keys[keysStart:]
		if len(open) < maxLinearKeys {
			for _, k := range open {
				if bytes.Equal(d.key(k), key) {
					return d.Errorf("Duplicate key %q.")
				}
			}
		}
		d.keys = append(doubling(d.keys, 1), keyRef{uint32(start), uint32(len(key))})
		if c := d.peek(); c != ':' {
			return d.syntax(c, "':'")
		}
		d.pos++
		if err := field(key); err != nil {
			return d.fail(err)
		}
		d.path = d.path[:len(d.path)-1]
		switch c := d.peek(); c {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
			d.depth--
			return d.checkDuplicates(keysStart)
		default:
			return d.syntax(c, "',' or '}'")
		}
	}
}

// checkDuplicates looks for a repeated key among the keys of a large object
// that just closed, by sorting them.
func (d *Decoder) checkDuplicates(start int) error {
	open := d.keys[start:]
	if len(open) <= maxLinearKeys {
		return nil
	}
	slices.SortFunc(open, func(a, b keyRef) int { return bytes.Compare(d.key(a), d.key(b)) })
	for i := 1; i < len(open); i++ {
		if bytes.Equal(d.key(open[i-1]), d.key(open[i])) {
			d.path = append(d.path, seg{key: d.key(open[i])})
			return d.Errorf("Duplicate key %q.")
		}
	}
	return nil
}

// Array decodes an array of at most max elements, calling elem for each
// with the decoder at the element; the element max+1 is refused before it
// is read, with an error naming the array.
func (d *Decoder) Array(max int, elem func(i int) error) error {
	if d.err != nil {
		return d.err
	}
	c := d.peek()
	if c != '[' {
		return d.wrongType(c, "an array")
	}
	d.pos++
	if err := d.enter(); err != nil {
		return err
	}
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for i := 0; ; i++ {
		if i == max {
			return d.Errorf("%s may hold at most %d elements.", max)
		}
		d.path = append(d.path, seg{idx: i})
		if err := elem(i); err != nil {
			return d.fail(err)
		}
		d.path = d.path[:len(d.path)-1]
		switch c := d.peek(); c {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntax(c, "',' or ']'")
		}
	}
}

// String decodes a string into dst.
func (d *Decoder) String(dst *string) error {
	if d.err != nil {
		return d.err
	}
	c := d.peek()
	if c != '"' {
		return d.wrongType(c, "a string")
	}
	d.pos++
	var err error
	if d.scratch, err = d.appendString(d.scratch[:0], true); err != nil {
		return err
	}
	*dst = string(d.scratch)
	return nil
}

// Bool decodes true or false into dst.
func (d *Decoder) Bool(dst *bool) error {
	if d.err != nil {
		return d.err
	}
	switch c := d.peek(); c {
	case 't':
		*dst = true
		return d.literal("true")
	case 'f':
		*dst = false
		return d.literal("false")
	default:
		return d.wrongType(c, "a boolean")
	}
}

// Int64 decodes an integer that fits in 64 bits into dst.
func (d *Decoder) Int64(dst *int64) error {
	num, err := d.number("an integer")
	if err != nil {
		return err
	}
	n, perr := strconv.ParseInt(string(num), 10, 64)
	if perr != nil {
		return d.Errorf("%s must be an integer.")
	}
	*dst = n
	return nil
}

// Int decodes an integer that fits in an int into dst.
func (d *Decoder) Int(dst *int) error {
	var n int64
	if err := d.Int64(&n); err != nil {
		return err
	}
	if int64(int(n)) != n {
		return d.Errorf("%s must be an integer.")
	}
	*dst = int(n)
	return nil
}

// Float64 decodes a finite number into dst.
func (d *Decoder) Float64(dst *float64) error {
	num, err := d.number("a number")
	if err != nil {
		return err
	}
	f, perr := strconv.ParseFloat(string(num), 64)
	if perr != nil || math.IsInf(f, 0) {
		return d.Errorf("%s must be a finite number.")
	}
	*dst = f
	return nil
}

// number reads a number's text into scratch; want names the field's type
// for a value of another type.
func (d *Decoder) number(want string) ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	c := d.peek()
	if c != '-' && (c < '0' || c > '9') {
		return nil, d.wrongType(c, want)
	}
	var err error
	d.scratch, err = d.scanNumber(d.scratch[:0])
	return d.scratch, err
}

// Skip consumes one value of any type, checking it as strictly as any
// other: nesting depth, duplicate keys, UTF-8, finite numbers.
func (d *Decoder) Skip() error {
	if d.err != nil {
		return d.err
	}
	switch c := d.peek(); c {
	case '{':
		return d.Object(func([]byte) error { return d.Skip() })
	case '[':
		return d.Array(math.MaxInt, func(int) error { return d.Skip() })
	case '"':
		d.pos++
		_, err := d.appendString(nil, false)
		return err
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var err error
		d.scratch, err = d.scanNumber(d.scratch[:0])
		return err
	default:
		return d.syntax(c, "a value")
	}
}

// Raw consumes one value, checked as Skip checks it, and returns its bytes
// as sent, in memory of its own. A value longer than max bytes is refused,
// at most one read buffer after its limit.
func (d *Decoder) Raw(max int) ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.capturing {
		return nil, d.Skip() // nested capture: the outer one has the bytes
	}
	d.peek()
	d.capturing, d.capStart, d.capBuf, d.capMax = true, d.pos, d.capBuf[:0], max
	err := d.Skip()
	d.capturing = false
	if err != nil {
		return nil, err
	}
	d.capBuf = append(d.capBuf, d.buf[d.capStart:d.pos]...)
	if len(d.capBuf) > max {
		return nil, d.Errorf("%s is too large: at most %d bytes of JSON.", max)
	}
	return bytes.Clone(d.capBuf), nil
}

// End checks that nothing but whitespace follows the value.
func (d *Decoder) End() error {
	if d.err != nil {
		return d.err
	}
	if c := d.peek(); c != 0 || d.pos < d.end {
		return d.fail(board.Errorf(board.EINVALID, "Request body has data after the JSON value."))
	}
	return d.err
}

// appendString reads the rest of a string whose opening quote is consumed,
// appending its decoded bytes to dst when keep is set.
func (d *Decoder) appendString(dst []byte, keep bool) ([]byte, error) {
	for {
		// The run of bytes that need no decoding.
		start := d.pos
		for d.pos < d.end {
			c := d.buf[d.pos]
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
			d.pos++
		}
		if keep {
			dst = append(dst, d.buf[start:d.pos]...)
		}
		if d.pos == d.end {
			if !d.fill() {
				return dst, d.truncated()
			}
			continue
		}
		switch c := d.buf[d.pos]; {
		case c == '"':
			d.pos++
			return dst, nil
		case c == '\\':
			var err error
			if dst, err = d.escape(dst, keep); err != nil {
				return dst, err
			}
		case c < 0x20:
			return dst, d.Errorf("%s: a string may not hold control character %#02x unescaped.", c)
		default:
			d.ensure(utf8.UTFMax)
			r, size := utf8.DecodeRune(d.buf[d.pos:d.end])
			if r == utf8.RuneError && size <= 1 {
				if d.err != nil {
					return dst, d.err
				}
				return dst, d.Errorf("%s must be valid UTF-8.")
			}
			if keep {
				dst = append(dst, d.buf[d.pos:d.pos+size]...)
			}
			d.pos += size
		}
	}
}

// escape decodes the escape sequence at pos.
func (d *Decoder) escape(dst []byte, keep bool) ([]byte, error) {
	if !d.ensure(2) {
		return dst, d.truncated()
	}
	c := d.buf[d.pos+1]
	var b byte
	switch c {
	case '"', '\\', '/':
		b = c
	case 'b':
		b = '\b'
	case 'f':
		b = '\f'
	case 'n':
		b = '\n'
	case 'r':
		b = '\r'
	case 't':
		b = '\t'
	case 'u':
		r, err := d.hex4()
		if err != nil {
			return dst, err
		}
		if utf16.IsSurrogate(r) {
			// A pair is two escapes; a lone half is not a character and
			// has no UTF-8 form, so it is refused, not replaced.
			r2 := rune(-1)
			if d.ensure(2) && d.buf[d.pos] == '\\' && d.buf[d.pos+1] == 'u' {
				if r2, err = d.hex4(); err != nil {
					return dst, err
				}
			}
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				if d.err != nil {
					return dst, d.err
				}
				return dst, d.Errorf("%s must be valid UTF-8: it holds an unpaired surrogate escape.")
			}
		}
		if keep {
			dst = utf8.AppendRune(dst, r)
		}
		return dst, nil
	default:
		return dst, d.syntax(c, "an escape sequence")
	}
	d.pos += 2
	if keep {
		dst = append(dst, b)
	}
	return dst, nil
}

// hex4 reads a \uXXXX escape at pos.
func (d *Decoder) hex4() (rune, error) {
	if !d.ensure(6) {
		return 0, d.truncated()
	}
	var r rune
	for _, c := range d.buf[d.pos+2 : d.pos+6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, d.syntax(c, "a hexadecimal digit")
		}
		r = r<<4 | rune(c)
	}
	d.pos += 6
	return r, nil
}

// scanNumber reads a number and appends its text to dst. The characters
// a number may hold are collected first and the grammar is checked on
// them: a stray character after a number is the next token's problem.
// Numbers that could overflow a float64 (written with an exponent, or with
// more than 300 characters) are checked to be finite.
func (d *Decoder) scanNumber(dst []byte) ([]byte, error) {
	start := len(dst)
	for {
		begin := d.pos
		for d.pos < d.end && isNumberByte(d.buf[d.pos]) {
			d.pos++
		}
		dst = append(dst, d.buf[begin:d.pos]...)
		if d.pos < d.end || !d.fill() {
			break
		}
	}
	if d.err != nil {
		return dst, d.err
	}
	num := dst[start:]
	if !validNumber(num) {
		return dst, d.Errorf("%s: malformed number %q.", clip(num))
	}
	if len(num) > 300 || bytes.ContainsAny(num, "eE") {
		if f, err := strconv.ParseFloat(string(num), 64); err != nil || math.IsInf(f, 0) {
			return dst, d.Errorf("%s must be a finite number.")
		}
	}
	return dst, nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber reports whether b is a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// clip shortens b for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
