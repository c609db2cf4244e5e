package transport

import (
	"encoding/json"
	"strings"
	"testing"

	"corkboard/board"
)

type decodeInner struct {
	Name string  `json:"name"`
	N    int64   `json:"n"`
	F    float64 `json:"f"`
}

type decodeOuter struct {
	Items []decodeInner     `json:"items"`
	Ptr   *decodeInner      `json:"ptr"`
	Raw   json.RawMessage   `json:"raw"`
	M     map[string]string `json:"m"`
	Any   any               `json:"any"`
}

func TestUnmarshalStrict(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		lenient    bool
		field      string // "" = OK; "-" = error without a field
	}{
		{"OK", `{"items":[{"name":"a","n":1,"f":1.5}],"ptr":null,"raw":{"x":[1,{"y":2}]},"m":{"k":"v"},"any":[1,"2"]}`, false, ""},
		{"OK empty object", `{}`, false, ""},
		{"unknown field", `{"items":[{"name":"a"},{"nmae":"b"}]}`, false, "items[1].nmae"},
		{"OK unknown lenient", `{"items":[{"extra":{"deep":[1]}}],"other":1}`, true, ""},
		{"case differs", `{"Items":[]}`, false, "Items"},
		{"duplicate key", `{"ptr":{"name":"a","name":"b"}}`, false, "ptr.name"},
		{"duplicate key in raw", `{"raw":{"a":1,"a":2}}`, false, "raw.a"},
		{"duplicate in unknown lenient", `{"x":{"a":1,"a":2}}`, true, "x.a"},
		{"wrong type string", `{"items":[{"name":5}]}`, false, "items[0].name"},
		{"wrong type int", `{"items":[{"n":1.5}]}`, false, "items[0].n"},
		{"int overflow", `{"items":[{"n":99999999999999999999}]}`, false, "items[0].n"},
		{"float overflow", `{"items":[{"f":1e400}]}`, false, "items[0].f"},
		{"null string", `{"items":[{"name":null}]}`, false, "items[0].name"},
		{"array not object", `{"ptr":[1]}`, false, "ptr"},
		{"trailing garbage", `{} {}`, false, "-"},
		{"trailing text", `{}x`, false, "-"},
		{"truncated", `{"items":[`, false, "-"},
		{"empty", ``, false, "-"},
		{"not object", `[1]`, false, "body"},
		{"syntax", `{"items":[}`, false, "items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dst decodeOuter
			err := unmarshalStrict([]byte(tc.body), &dst, tc.lenient)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("err=%v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("err=nil, want error")
			}
			if board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("code=%s, want invalid", board.ErrorCode(err))
			}
			if tc.field != "-" {
				e, _ := err.(*board.Error)
				if e == nil || e.Field != tc.field {
					t.Fatalf("err=%v, want field %q", err, tc.field)
				}
			}
		})
	}
}

func TestUnmarshalStrictNesting(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"OK 90 levels in an unknown field", `{"x":` + nest(90) + `}`, true},
		{"101 levels", `{"x":` + nest(101) + `}`, false},
		{"deep in a known any field", `{"any":` + nest(200) + `}`, false},
		{"unterminated 30,000", `{"x":` + strings.Repeat("[", 30000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dst decodeOuter
			err := unmarshalStrict([]byte(tc.body), &dst, true)
			if tc.ok != (err == nil) {
				t.Fatalf("err=%v, want ok=%v", err, tc.ok)
			}
			if err != nil && board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("code=%s, want invalid", board.ErrorCode(err))
			}
		})
	}
}
