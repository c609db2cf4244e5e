package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"corkboard/board"
)

// Body size limits (decided in docs/api.md).
const (
	limitAuthBody = 64 << 10 // auth endpoints
	limitJSONBody = 1 << 20  // ordinary JSON bodies
	// limitPushBody admits the spec's largest valid push: 500 notes of 30,000
	// code points, each up to 4 bytes of UTF-8 (60 MB), plus the other fields.
	limitPushBody = 64 << 20
)

// maxLargeBodies is how many bodies over limitJSONBody (pushes and
// changelog writes of up to 64 MiB) are read and decoded at once; others
// wait for a slot. It bounds the memory a burst of large requests can pin.
const maxLargeBodies = 4

// largeBodyWait is how long a large body waits for a slot before 503.
const largeBodyWait = 30 * time.Second

// limitLargeBodies admits at most maxLargeBodies requests whose body may
// be larger than limitJSONBody (declared so, or of unknown length) at once.
// It belongs after the board guard, so strangers cannot take the slots.
func (s *Server) limitLargeBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength >= 0 && r.ContentLength <= limitJSONBody {
			next.ServeHTTP(w, r)
			return
		}
		t := time.NewTimer(largeBodyWait)
		defer t.Stop()
		select {
		case s.largeBodies <- struct{}{}:
			defer func() { <-s.largeBodies }()
			next.ServeHTTP(w, r)
		case <-t.C:
			s.writeError(w, r, &board.Error{Code: board.EUNAVAILABLE, Message: "Too many large requests at once; try again shortly.", RetryAfter: 5})
		case <-r.Context().Done():
		}
	})
}

// readBody reads at most limit bytes of r's body; past it the error is ETOOLARGE.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, board.Errorf(board.ETOOLARGE, "Request body is larger than %d bytes.", limit)
		}
		return nil, board.Errorf(board.EINVALID, "Could not read the request body.")
	}
	return data, nil
}

// decodeJSON reads a JSON body of at most limit bytes into dst (a pointer to
// a struct). It is strict: duplicate keys, fields dst does not have (matched
// case-sensitively), values of the wrong type, non-finite or out-of-range
// numbers and anything after the value are 400s naming the field.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	data, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return unmarshalStrict(data, dst, false)
}

// decodeJSONLenient is decodeJSON that ignores unknown fields, for bodies
// shaped by third-party clients (the AI SDK adds its own keys).
func decodeJSONLenient(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	data, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return unmarshalStrict(data, dst, true)
}

// unmarshalStrict checks data against dst's type, then unmarshals it.
func unmarshalStrict(data []byte, dst any, allowUnknown bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return board.Errorf(board.EINVALID, "Request body must be a JSON object.")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := shapeWalker{dec: dec, allowUnknown: allowUnknown}
	if err := w.value(reflect.TypeOf(dst).Elem(), ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return board.Errorf(board.EINVALID, "Request body has data after the JSON value.")
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return board.Errorf(board.EINVALID, "Request body is not valid: %s.", err)
	}
	return nil
}

// maxJSONDepth bounds how deeply a request body may nest arrays and
// objects. Corkboard's own shapes need fewer than ten levels; the rest is
// room for client-owned values (phase objects, tool inputs). Without a bound
// a small body of nested brackets costs time quadratic in its depth (the
// walker recurses and builds each level's field path): 100 KB of "[" took
// over 20 s of CPU, before any session or rate limit.
const maxJSONDepth = 100

type shapeWalker struct {
	dec          *json.Decoder
	allowUnknown bool
	depth        int // arrays and objects open at the current token
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

func fieldName(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func (w *shapeWalker) token(path string) (json.Token, error) {
	tok, err := w.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, board.FieldErrorf(fieldName(path), "Malformed JSON at byte %d: %s.", se.Offset, se.Error())
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, board.Errorf(board.EINVALID, "Request body is truncated JSON.")
		}
		return nil, board.FieldErrorf(fieldName(path), "Malformed JSON: %s.", err)
	}
	switch tok {
	case json.Delim('{'), json.Delim('['):
		if w.depth++; w.depth > maxJSONDepth {
			return nil, board.FieldErrorf(fieldName(path), "%s nests arrays and objects more than %d levels deep.", fieldName(path), maxJSONDepth)
		}
	case json.Delim('}'), json.Delim(']'):
		w.depth--
	}
	return tok, nil
}

// skip consumes one JSON value whose first token is tok.
func (w *shapeWalker) skip(tok json.Token, path string) error {
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if d == '{' {
		seen := map[string]bool{}
		for w.dec.More() {
			kt, err := w.token(path)
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			if seen[k] {
				return board.FieldErrorf(join(path, k), "Duplicate key %q.", join(path, k))
			}
			seen[k] = true
			vt, err := w.token(join(path, k))
			if err != nil {
				return err
			}
			if err := w.skip(vt, join(path, k)); err != nil {
				return err
			}
		}
	} else if d == '[' {
		for i := 0; w.dec.More(); i++ {
			vt, err := w.token(path)
			if err != nil {
				return err
			}
			if err := w.skip(vt, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	_, err := w.token(path) // closing delimiter
	return err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a value of another type"
}

// value checks one JSON value against t.
func (w *shapeWalker) value(t reflect.Type, path string) error {
	tok, err := w.token(path)
	if err != nil {
		return err
	}
	return w.check(tok, t, path)
}

func (w *shapeWalker) check(tok json.Token, t reflect.Type, path string) error {
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return w.skip(tok, path)
	}
	if tok == nil { // null
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			return nil
		}
		return board.FieldErrorf(fieldName(path), "%s must be %s, not null.", fieldName(path), kindName(t))
	}
	if t.Kind() == reflect.Pointer {
		return w.check(tok, t.Elem(), path)
	}
	wrong := func() error {
		if d, ok := tok.(json.Delim); ok {
			_ = w.skip(d, path)
		}
		return board.FieldErrorf(fieldName(path), "%s must be %s.", fieldName(path), kindName(t))
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return wrong()
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return wrong()
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := tok.(json.Number)
		if !ok {
			return wrong()
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return board.FieldErrorf(path, "%s must be an integer.", path)
		}
	case reflect.Float64, reflect.Float32:
		n, ok := tok.(json.Number)
		if !ok {
			return wrong()
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsInf(f, 0) {
			return board.FieldErrorf(path, "%s must be a finite number.", path)
		}
	case reflect.Slice:
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return wrong()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := w.token(path)
		return err
	case reflect.Map:
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return wrong()
		}
		seen := map[string]bool{}
		for w.dec.More() {
			kt, err := w.token(path)
			if err != nil {
				return err
			}
			k := kt.(string)
			if seen[k] {
				return board.FieldErrorf(join(path, k), "Duplicate key %q.", join(path, k))
			}
			seen[k] = true
			if err := w.value(t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
		_, err := w.token(path)
		return err
	case reflect.Struct:
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return wrong()
		}
		fields := jsonFields(t)
		seen := map[string]bool{}
		for w.dec.More() {
			kt, err := w.token(path)
			if err != nil {
				return err
			}
			k := kt.(string)
			p := join(path, k)
			if seen[k] {
				return board.FieldErrorf(p, "Duplicate key %q.", p)
			}
			seen[k] = true
			ft, ok := fields[k]
			if !ok {
				if !w.allowUnknown {
					return board.FieldErrorf(p, "Unknown field %q.", p)
				}
				vt, err := w.token(p)
				if err != nil {
					return err
				}
				if err := w.skip(vt, p); err != nil {
					return err
				}
				continue
			}
			if err := w.value(ft, p); err != nil {
				return err
			}
		}
		_, err := w.token(path)
		return err
	default:
		return w.skip(tok, path)
	}
	return nil
}

// jsonFields maps a struct's JSON names to their types, following embedded
// structs as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
