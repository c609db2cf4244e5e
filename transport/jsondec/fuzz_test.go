package jsondec_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"corkboard/board"
	"corkboard/transport/jsondec"
)

// FuzzDecoder feeds arbitrary bytes to Skip and Raw, from a reader one
// byte at a time and from memory. Both must agree; what they accept must be
// valid JSON and UTF-8 for encoding/json too, Raw must give back the exact
// value, and every refusal must be an EINVALID error, never a panic.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-1.5e+3`, `null`, `true`, `{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, "\"\xff\"", `"\ud800"`, `"\udc00\ud800"`, `1e400`, `01`, `1.`, `-`,
		`[[[[[[[[[[]]]]]]]]]]`, `{"notes":{"upserted":[{},{},{}]}}`, `{"x":"a\u0000b\n"}`, " \t\r\n{ \"k\" : [ ] } ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamed := jsondec.New(iotest.OneByteReader(bytes.NewReader(data)))
		errS := streamed.Skip()
		if errS == nil {
			errS = streamed.End()
		}
		inMemory := jsondec.NewBytes(data)
		raw, errM := inMemory.Raw(len(data))
		if errM == nil {
			errM = inMemory.End()
		}
		if (errS == nil) != (errM == nil) {
			t.Fatalf("streamed: %v; in memory: %v", errS, errM)
		}
		if errS != nil {
			if board.ErrorCode(errS) != board.EINVALID || board.ErrorCode(errM) != board.EINVALID {
				t.Fatalf("errors %v / %v, want EINVALID", errS, errM)
			}
			return
		}
		if !json.Valid(data) || !utf8.Valid(data) {
			t.Fatalf("accepted %q, which encoding/json or UTF-8 refuses", data)
		}
		if want := bytes.TrimSpace(data); !bytes.Equal(raw, want) {
			t.Fatalf("Raw=%q, want %q", raw, want)
		}
	})
}
