package jsondec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"corkboard/board"
	"corkboard/transport/jsondec"
)

type inner struct {
	Name string
	N    int64
	F    float64
	B    bool
}

type outer struct {
	Items []inner
	Ptr   *inner
	Raw   []byte
	IDs   []string
}

// decodeOuter is a decode function as transport writes them; strict
// refuses unknown keys, otherwise they are skipped.
func decodeOuter(d *jsondec.Decoder, o *outer, strict bool) error {
	unknown := func() error {
		if strict {
			return d.Errorf("Unknown field %q.")
		}
		return d.Skip()
	}
	decodeInner := func(in *inner) error {
		return d.Object(func(key []byte) error {
			switch string(key) {
			case "name":
				return d.String(&in.Name)
			case "n":
				return d.Int64(&in.N)
			case "f":
				return d.Float64(&in.F)
			case "b":
				return d.Bool(&in.B)
			}
			return unknown()
		})
	}
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "items":
			return d.Array(3, func(int) error {
				o.Items = append(o.Items, inner{})
				return decodeInner(&o.Items[len(o.Items)-1])
			})
		case "ptr":
			if d.Null() {
				return nil
			}
			o.Ptr = &inner{}
			return decodeInner(o.Ptr)
		case "raw":
			raw, err := d.Raw(64)
			o.Raw = raw
			return err
		case "ids":
			return d.Array(2, func(int) error {
				o.IDs = append(o.IDs, "")
				return d.String(&o.IDs[len(o.IDs)-1])
			})
		}
		return unknown()
	})
}

func decode(data []byte, strict bool) (outer, error) {
	var o outer
	d := jsondec.New(bytes.NewReader(data))
	err := decodeOuter(d, &o, strict)
	if err == nil {
		err = d.End()
	}
	return o, err
}

func TestDecoder(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		lenient    bool
		field      string // "" = OK; "-" = error without a field
	}{
		{"OK", `{"items":[{"name":"a","n":1,"f":1.5,"b":true}],"ptr":null,"raw":{"x":[1,{"y":2}]},"ids":["a","b"]}`, false, ""},
		{"OK empty object", ` {} `, false, ""},
		{"OK escapes", `{"ptr":{"name":"\u00e9\ud83d\ude00\n\"\\\/"}}`, false, ""},
		{"unknown field", `{"items":[{"name":"a"},{"nmae":"b"}]}`, false, "items[1].nmae"},
		{"OK unknown lenient", `{"items":[{"extra":{"deep":[1]}}],"other":1}`, true, ""},
		{"case differs", `{"Items":[]}`, false, "Items"},
		{"duplicate key", `{"ptr":{"name":"a","name":"b"}}`, false, "ptr.name"},
		{"duplicate key escaped", `{"ptr":{"name":"a","n\u0061me":"b"}}`, false, "ptr.name"},
		{"duplicate key in raw", `{"raw":{"a":1,"a":2}}`, false, "raw.a"},
		{"duplicate in unknown lenient", `{"x":{"a":1,"a":2}}`, true, "x.a"},
		{"duplicate among many keys", `{"x":{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1,"q":1,"r":1,"c":2}}`, true, "x.c"},
		{"wrong type string", `{"items":[{"name":5}]}`, false, "items[0].name"},
		{"wrong type int", `{"items":[{"n":1.5}]}`, false, "items[0].n"},
		{"wrong type bool", `{"items":[{"b":"true"}]}`, false, "items[0].b"},
		{"int overflow", `{"items":[{"n":99999999999999999999}]}`, false, "items[0].n"},
		{"float overflow", `{"items":[{"f":1e400}]}`, false, "items[0].f"},
		{"overflow in skipped value", `{"x":[1e400]}`, true, "x[0]"},
		{"null string", `{"items":[{"name":null}]}`, false, "items[0].name"},
		{"array not object", `{"ptr":[1]}`, false, "ptr"},
		{"OK 3 elements", `{"items":[{},{},{}]}`, false, ""},
		{"4th element", `{"items":[{},{},{},{}]}`, false, "items"},
		{"3rd id", `{"ids":["a","b","c"]}`, false, "ids"},
		{"raw too large", `{"raw":"` + strings.Repeat("a", 80) + `"}`, false, "raw"},
		{"invalid UTF-8", "{\"ptr\":{\"name\":\"a\xffb\"}}", false, "ptr.name"},
		{"invalid UTF-8 skipped", "{\"x\":[\"\xc3\"]}", true, "x[0]"},
		{"invalid UTF-8 key", "{\"x\":{\"a\xff\":1}}", true, "x"},
		{"lone surrogate", `{"ptr":{"name":"\ud800"}}`, false, "ptr.name"},
		{"reversed surrogates", `{"ptr":{"name":"\udc00\ud800"}}`, false, "ptr.name"},
		{"control character", "{\"ptr\":{\"name\":\"a\nb\"}}", false, "ptr.name"},
		{"bad escape", `{"ptr":{"name":"\x"}}`, false, "ptr.name"},
		{"bad number", `{"x":01}`, true, "-"},
		{"bad number minus", `{"x":-}`, true, "x"},
		{"bad fraction", `{"x":1.}`, true, "x"},
		{"trailing garbage", `{} {}`, false, "-"},
		{"trailing text", `{}x`, false, "-"},
		{"truncated", `{"items":[`, false, "-"},
		{"truncated string", `{"ptr":{"name":"ab`, false, "-"},
		{"empty", ``, false, "-"},
		{"not object", `[1]`, false, "body"},
		{"syntax", `{"items":[}`, false, "items[0]"},
		{"missing colon", `{"a" 1}`, true, "a"},
		{"trailing comma", `{"a":1,}`, true, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte(tc.body), !tc.lenient)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("err=%v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("err=nil, want error")
			}
			if got := board.ErrorCode(err); got != board.EINVALID {
				t.Fatalf("code=%s, want invalid (%v)", got, err)
			}
			if tc.field != "-" {
				var e *board.Error
				if !errors.As(err, &e) || e.Field != tc.field {
					t.Fatalf("err=%v, want field %q", err, tc.field)
				}
			}
		})
	}
}

func TestDecoderValues(t *testing.T) {
	body := `{"items":[{"name":"a\u00e9\ud83d\ude00","n":-42,"f":-1.5e3,"b":true}],"raw": { "x" : [ 1 , "a b" ] },"ids":[]}`
	// One byte at a time: every value crosses reads.
	var o outer
	d := jsondec.New(iotest.OneByteReader(strings.NewReader(body)))
	if err := decodeOuter(d, &o, true); err != nil {
		t.Fatal(err)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	if got, want := o.Items[0], (inner{Name: "aé😀", N: -42, F: -1500, B: true}); got != want {
		t.Fatalf("item=%+v, want %+v", got, want)
	}
	if got, want := string(o.Raw), `{ "x" : [ 1 , "a b" ] }`; got != want {
		t.Fatalf("raw=%s, want %s (as sent)", got, want)
	}
}

func TestDecoderNesting(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"OK 99 levels in an unknown field", `{"x":` + nest(99) + `}`, true},
		{"101 levels", `{"x":` + nest(100) + `}`, false},
		{"unterminated 30,000", `{"x":` + strings.Repeat("[", 30000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte(tc.body), false)
			if tc.ok != (err == nil) {
				t.Fatalf("err=%v, want ok=%v", err, tc.ok)
			}
			if err != nil && board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("code=%s, want invalid", board.ErrorCode(err))
			}
		})
	}
}

// TestDecoderReadError: an error of the reader is returned as it is, so
// transport can tell a body over its limit (413) from a bad one.
func TestDecoderReadError(t *testing.T) {
	boom := errors.New("boom")
	d := jsondec.New(io.MultiReader(strings.NewReader(`{"items":[`), iotest.ErrReader(boom)))
	var o outer
	if err := decodeOuter(d, &o, true); !errors.Is(err, boom) {
		t.Fatalf("err=%v, want the reader's", err)
	}
}

// TestDecoderStopsEarly: the element past an array's limit is refused
// before the rest of the body is read.
func TestDecoderStopsEarly(t *testing.T) {
	body := `{"items":[` + strings.Repeat(`{},`, 1<<20) + `{}]}`
	r := strings.NewReader(body)
	var o outer
	err := decodeOuter(jsondec.New(r), &o, true)
	var e *board.Error
	if !errors.As(err, &e) || e.Field != "items" {
		t.Fatalf("err=%v, want one naming items", err)
	}
	if read := int(r.Size()) - r.Len(); read > 64<<10 {
		t.Fatalf("read %d bytes of %d before refusing, want at most 64 KiB", read, len(body))
	}
}

// TestRawMatchesEncodingJSON: a value the decoder accepts is one
// encoding/json accepts, and Raw gives its exact bytes.
func TestRawMatchesEncodingJSON(t *testing.T) {
	for _, v := range []string{`0`, `-0.5e-3`, `"\u0000\t"`, `[true,false,null]`, `{"a":{"b":[{}]}}`, `"é😀"`} {
		d := jsondec.NewBytes([]byte(" " + v + " "))
		raw, err := d.Raw(1 << 10)
		if err != nil || d.End() != nil {
			t.Fatalf("Raw(%s): %v", v, err)
		}
		if string(raw) != v || !json.Valid(raw) {
			t.Fatalf("Raw=%s, want %s", raw, v)
		}
	}
}
