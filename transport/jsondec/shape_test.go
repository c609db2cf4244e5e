package jsondec_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"testing/iotest"

	"corkboard/board"
	"corkboard/transport/jsondec"
)

type leaf struct {
	Name  string
	N     int64
	I     int
	F     float64
	B     bool
	Opt   *string
	OptF  *float64
	Raw   []byte
	Extra []string // keys the lenient shape kept
}

type root struct {
	Leaves []leaf
	Kept   []leaf
	IDs    []string
	One    leaf
	Ptr    *leaf
}

var (
	leafFields = []jsondec.Field[leaf]{
		jsondec.String("name", func(l *leaf) *string { return &l.Name }),
		jsondec.Int64("n", func(l *leaf) *int64 { return &l.N }),
		jsondec.Int("i", func(l *leaf) *int { return &l.I }),
		jsondec.Float64("f", func(l *leaf) *float64 { return &l.F }),
		jsondec.Bool("b", func(l *leaf) *bool { return &l.B }),
		jsondec.OptString("opt", func(l *leaf) **string { return &l.Opt }),
		jsondec.OptFloat64("optf", func(l *leaf) **float64 { return &l.OptF }),
		jsondec.Raw("raw", 16, func(l *leaf) *[]byte { return &l.Raw }),
	}
	strictLeaf  = jsondec.NewShape(jsondec.Refuse[leaf], leafFields...)
	keepingLeaf = jsondec.NewShape(func(d *jsondec.Decoder, key []byte, l *leaf) error {
		l.Extra = append(l.Extra, string(key))
		return d.Skip()
	}, leafFields...)
	rootShape = jsondec.NewShape(jsondec.Skip[root],
		jsondec.Array("leaves", 2, func(r *root) *[]leaf { return &r.Leaves }, strictLeaf.Decode),
		jsondec.ArrayKeepEmpty("kept", 2, func(r *root) *[]leaf { return &r.Kept }, keepingLeaf.Decode),
		jsondec.ArrayKeepEmpty("ids", 3, func(r *root) *[]string { return &r.IDs }, (*jsondec.Decoder).String),
		jsondec.Object("one", func(r *root) *leaf { return &r.One }, strictLeaf),
		jsondec.OptObject("ptr", func(r *root) **leaf { return &r.Ptr }, strictLeaf),
	)
)

func decodeRoot(data []byte) (root, error) {
	var r root
	d := jsondec.New(bytes.NewReader(data))
	err := rootShape.Decode(d, &r)
	if err == nil {
		err = d.End()
	}
	return r, err
}

func ptr[T any](v T) *T { return &v }

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       root
	}{
		{"OK values", `{"one":{"name":"a","n":-4,"i":7,"f":1.5,"b":true,"opt":"o","optf":2,"raw":{"x":[1]}}}`,
			root{One: leaf{Name: "a", N: -4, I: 7, F: 1.5, B: true, Opt: ptr("o"), OptF: ptr(2.0), Raw: []byte(`{"x":[1]}`)}}},
		{"OK optional null", `{"one":{"opt":null,"optf":null},"ptr":null}`, root{}},
		{"OK optional object", `{"ptr":{"name":"p"}}`, root{Ptr: &leaf{Name: "p"}}},
		{"OK array null and empty stay nil", `{"leaves":null}`, root{}},
		{"OK array empty stays nil", `{"leaves":[]}`, root{}},
		{"OK keep-empty array null", `{"kept":null,"ids":null}`, root{}},
		{"OK keep-empty array empty", `{"kept":[],"ids":[]}`, root{Kept: []leaf{}, IDs: []string{}}},
		{"OK elements", `{"leaves":[{"name":"a"},{"n":1}],"ids":["x","y","z"]}`, root{Leaves: []leaf{{Name: "a"}, {N: 1}}, IDs: []string{"x", "y", "z"}}},
		{"OK unknown keys skipped at the root, kept by a custom rule", `{"other":[1,{"a":2}],"kept":[{"zz":1,"name":"k"}]}`,
			root{Kept: []leaf{{Name: "k", Extra: []string{"zz"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeRoot([]byte(tc.body))
			if err != nil {
				t.Fatalf("err=%v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestShapeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body, field, message string
	}{
		{"unknown field refused", `{"one":{"nmae":"a"}}`, "one.nmae", `Unknown field "one.nmae".`},
		{"unknown field in an element", `{"leaves":[{},{"x":1}]}`, "leaves[1].x", `Unknown field "leaves[1].x".`},
		{"past the bound", `{"leaves":[{},{},{}]}`, "leaves", "leaves may hold at most 2 elements."},
		{"past the bound of strings", `{"ids":["a","b","c","d"]}`, "ids", "ids may hold at most 3 elements."},
		{"object null", `{"one":null}`, "one", "one must be an object, not null."},
		{"string null", `{"one":{"name":null}}`, "one.name", "one.name must be a string, not null."},
		{"int too large for an int64", `{"one":{"n":99999999999999999999}}`, "one.n", "one.n must be an integer."},
		{"float not an int", `{"one":{"i":1.5}}`, "one.i", "one.i must be an integer."},
		{"bool wrong type", `{"one":{"b":"true"}}`, "one.b", "one.b must be a boolean, not a string."},
		{"raw too large", `{"one":{"raw":"0123456789abcdefghij"}}`, "one.raw", "one.raw is too large: at most 16 bytes of JSON."},
		{"optional wrong type", `{"one":{"opt":1}}`, "one.opt", "one.opt must be a string, not a number."},
		{"duplicate declared key", `{"one":{"name":"a","name":"b"}}`, "one.name", `Duplicate key "one.name".`},
		{"array not array", `{"leaves":{}}`, "leaves", "leaves must be an array, not an object."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeRoot([]byte(tc.body))
			var e *board.Error
			if !errors.As(err, &e) {
				t.Fatalf("err=%v, want a *board.Error", err)
			}
			if e.Code != board.EINVALID || e.Field != tc.field || e.Message != tc.message {
				t.Fatalf("err=%s %q %q, want invalid %q %q", e.Code, e.Field, e.Message, tc.field, tc.message)
			}
		})
	}
}

// TestShapeStopsAtTheBound: the element past an array's bound is refused
// before it is read, so a huge body behind it is not read.
func TestShapeStopsAtTheBound(t *testing.T) {
	body := append([]byte(`{"ids":["a","b","c",`), bytes.Repeat([]byte(`"x",`), 1<<20)...)
	r := bytes.NewReader(body)
	var v root
	err := rootShape.Decode(jsondec.New(r), &v)
	if board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("err=%v, want invalid", err)
	}
	if read := len(body) - r.Len(); read > 64<<10 {
		t.Fatalf("read %d bytes of %d, want at most 64 KiB", read, len(body))
	}
}

func TestNewShapeRefusesATwiceDeclaredName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewShape accepted a name declared twice")
		}
	}()
	jsondec.NewShape(jsondec.Skip[leaf],
		jsondec.String("name", func(l *leaf) *string { return &l.Name }),
		jsondec.String("name", func(l *leaf) *string { return &l.Name }),
	)
}

// FuzzShape decodes arbitrary bodies with a shape, streamed one byte at a
// time and from memory: both must agree on the value and the error, and a
// refusal is always EINVALID.
func FuzzShape(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"leaves":[{"name":"a"}],"ids":["x"]}`, `{"one":{"opt":null,"raw":[1]}}`, `{"ptr":null}`,
		`{"kept":[{"q":1}]}`, `{"leaves":[{},{},{}]}`, `{"one":{"nmae":1}}`, `{"ids":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var streamed, inMemory root
		ds := jsondec.New(iotest.OneByteReader(bytes.NewReader(data)))
		errS := rootShape.Decode(ds, &streamed)
		if errS == nil {
			errS = ds.End()
		}
		dm := jsondec.NewBytes(data)
		errM := rootShape.Decode(dm, &inMemory)
		if errM == nil {
			errM = dm.End()
		}
		if (errS == nil) != (errM == nil) || errS != nil && errS.Error() != errM.Error() {
			t.Fatalf("streamed: %v; in memory: %v", errS, errM)
		}
		if errS != nil {
			if board.ErrorCode(errS) != board.EINVALID {
				t.Fatalf("error %v, want EINVALID", errS)
			}
			return
		}
		if !reflect.DeepEqual(streamed, inMemory) {
			t.Fatalf("streamed %+v, in memory %+v", streamed, inMemory)
		}
	})
}
