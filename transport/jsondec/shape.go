package jsondec

import "fmt"

// A Shape declares how a JSON object decodes into a T: each field once,
// with its JSON name, its bound and where its value goes in the T, and what
// is done with the keys it does not declare. It is built once, at package
// initialisation, and is safe for concurrent use: decoding with it keeps no
// state of its own. There is no reflection; a field's place is a function
// returning a pointer into the T, so the compiler checks every type.
type Shape[T any] struct {
	fields  map[string]func(*Decoder, *T) error
	unknown Unknown[T]
}

// A Field is one declared key of a Shape[T]: its JSON name and how its value
// is decoded into a T.
type Field[T any] struct {
	name   string
	decode func(*Decoder, *T) error
}

// Unknown is what a shape does with a key it does not declare: the decoder
// is at the key's value, which it must consume. Skip and Refuse are the
// usual two; a shape that keeps such keys (a row's extra fields) gives its
// own.
type Unknown[T any] func(d *Decoder, key []byte, v *T) error

// Skip ignores a key a shape does not declare, after checking its value as
// strictly as any other (Decoder.Skip).
func Skip[T any](d *Decoder, _ []byte, _ *T) error { return d.Skip() }

// Refuse answers a key a shape does not declare with an error naming it:
// `Unknown field "notes.upserted[0].foo".`.
func Refuse[T any](d *Decoder, _ []byte, _ *T) error { return d.Errorf("Unknown field %q.") }

// NewShape returns the shape of an object with fields, handling other keys
// with unknown. A name declared twice is a mistake in the program, not in
// a body: NewShape panics on it, as regexp.MustCompile does on a bad
// expression, when the package that declares the shape is initialised.
func NewShape[T any](unknown Unknown[T], fields ...Field[T]) *Shape[T] {
	s := &Shape[T]{fields: make(map[string]func(*Decoder, *T) error, len(fields)), unknown: unknown}
	for _, f := range fields {
		if _, dup := s.fields[f.name]; dup {
			panic(fmt.Sprintf("jsondec: field %q declared twice", f.name))
		}
		s.fields[f.name] = f.decode
	}
	return s
}

// Decode decodes an object of the shape into v. Values are decoded into
// v's fields as they come; a field the body leaves out keeps what v held.
func (s *Shape[T]) Decode(d *Decoder, v *T) error {
	return d.Object(func(key []byte) error {
		if decode, ok := s.fields[string(key)]; ok {
			return decode(d, v)
		}
		return s.unknown(d, key, v)
	})
}

// Into returns a function decoding one object of the shape into v, the
// form decodeBody-like helpers take.
func (s *Shape[T]) Into(v *T) func(*Decoder) error {
	return func(d *Decoder) error { return s.Decode(d, v) }
}

// Func declares a field decoded by decode, for a value no other
// constructor fits (a number with a rule of its own, a value only checked).
// decode must consume the value.
func Func[T any](name string, decode func(d *Decoder, v *T) error) Field[T] {
	return Field[T]{name: name, decode: decode}
}

// String declares a string field.
func String[T any](name string, at func(*T) *string) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return d.String(at(v)) })
}

// Bool declares a true-or-false field.
func Bool[T any](name string, at func(*T) *bool) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return d.Bool(at(v)) })
}

// Int declares an integer field that fits in an int.
func Int[T any](name string, at func(*T) *int) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return d.Int(at(v)) })
}

// Int64 declares an integer field that fits in 64 bits.
func Int64[T any](name string, at func(*T) *int64) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return d.Int64(at(v)) })
}

// Float64 declares a field of a finite number.
func Float64[T any](name string, at func(*T) *float64) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return d.Float64(at(v)) })
}

// OptString declares a string field that may be null: null is nil.
func OptString[T any](name string, at func(*T) **string) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return decodeOpt(d, at(v), (*Decoder).String) })
}

// OptFloat64 declares a number field that may be null: null is nil.
func OptFloat64[T any](name string, at func(*T) **float64) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return decodeOpt(d, at(v), (*Decoder).Float64) })
}

// Raw declares a field of any JSON value of at most max bytes, kept as
// sent (Decoder.Raw).
func Raw[T any, B ~[]byte](name string, max int, at func(*T) *B) Field[T] {
	return Func(name, func(d *Decoder, v *T) error {
		raw, err := d.Raw(max)
		*at(v) = raw
		return err
	})
}

// Object declares a field holding an object of shape s; null is refused.
func Object[T, E any](name string, at func(*T) *E, s *Shape[E]) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return s.Decode(d, at(v)) })
}

// OptObject declares a field holding an object of shape s or null: null is
// nil, an object a new E.
func OptObject[T, E any](name string, at func(*T) **E, s *Shape[E]) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return decodeOpt(d, at(v), s.Decode) })
}

// Array declares a field holding an array of at most max elements, each
// decoded by elem (a shape's Decode, or (*Decoder).String); the element
// max+1 is refused before it is read. null and [] both leave the slice nil:
// for lists that are only read, where the two mean the same.
func Array[T, E any](name string, max int, at func(*T) *[]E, elem func(*Decoder, *E) error) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return DecodeArray(d, max, at(v), elem, false) })
}

// ArrayKeepEmpty is Array for lists that are stored or sent on, where []
// and null differ: [] gives an empty slice, null nil.
func ArrayKeepEmpty[T, E any](name string, max int, at func(*T) *[]E, elem func(*Decoder, *E) error) Field[T] {
	return Func(name, func(d *Decoder, v *T) error { return DecodeArray(d, max, at(v), elem, true) })
}

// DecodeArray decodes an array of at most max elements, or null, into
// *dst, each element with elem; the bounded-array helper every Array field
// uses. null is nil; [] is nil, or an empty slice with keepEmpty. The
// element max+1 is refused before it is read, with an error naming the
// array.
func DecodeArray[E any](d *Decoder, max int, dst *[]E, elem func(*Decoder, *E) error, keepEmpty bool) error {
	*dst = nil
	if d.Null() {
		return nil
	}
	if keepEmpty {
		*dst = []E{}
	}
	return d.Array(max, func(int) error {
		var zero E
		*dst = append(*dst, zero)
		return elem(d, &(*dst)[len(*dst)-1])
	})
}

// decodeOpt decodes null as nil, or a value with decode into a new E.
func decodeOpt[E any](d *Decoder, dst **E, decode func(*Decoder, *E) error) error {
	if d.Null() {
		*dst = nil
		return nil
	}
	*dst = new(E)
	return decode(d, *dst)
}
