package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMarkerRoundTrip(t *testing.T) {
	ms := []marker{{0, 0, 1}, {3, 12345, 987654321012}, {99, 1 << 40, 1<<62 - 1}}
	var text []byte
	for _, m := range ms {
		text = appendMarker(text, m)
		text = append(text, " noise "...)
	}
	var got []marker
	if n := scanMarkers(text, func(m marker) { got = append(got, m) }); n != len(ms) {
		t.Fatalf("found %d markers, want %d", n, len(ms))
	}
	for i := range ms {
		if got[i] != ms[i] {
			t.Errorf("marker %d = %+v, want %+v", i, got[i], ms[i])
		}
	}
}

// A marker travels inside a note's content in the server's JSON; it needs
// no escaping, so it comes back verbatim.
func TestMarkerSurvivesJSON(t *testing.T) {
	m := marker{Writer: 2, Seq: 77, SentNs: 123456789}
	msg, err := json.Marshal(map[string]any{"type": "changes", "notes": []any{notePush(m).Notes.Upserted[0]}})
	if err != nil {
		t.Fatal(err)
	}
	var got []marker
	scanMarkers(msg, func(m marker) { got = append(got, m) })
	if len(got) != 1 || got[0] != m {
		t.Fatalf("markers in %s = %+v, want [%+v]", msg, got, m)
	}
}

func TestScanMarkersSkipsMalformed(t *testing.T) {
	tests := []string{
		"cbload:",
		"cbload:1.2@3",                    // no terminator
		"cbload:1.2;3;",                   // wrong separators
		"cbload:.2@3;",                    // empty writer
		"cbload:1.2@;",                    // empty time
		"cbload:a.2@3;",                   // not a number
		"cbload:1.2@9223372036854775808;", // does not fit an int64
	}
	for _, s := range tests {
		if n := scanMarkers([]byte(s), func(m marker) { t.Errorf("%q gave %+v", s, m) }); n != 0 {
			t.Errorf("%q: %d markers, want 0", s, n)
		}
	}
	// A malformed marker does not hide a good one after it.
	if n := scanMarkers([]byte("cbload:1.x cbload:1.2@3;"), func(marker) {}); n != 1 {
		t.Fatalf("found %d, want 1", n)
	}
}

func FuzzScanMarkers(f *testing.F) {
	f.Add([]byte("cbload:1.2@3;"))
	f.Add([]byte("cbload:cbload:9.9@9;"))
	f.Add([]byte("cbload:1.2@9223372036854775807;"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := scanMarkers(b, func(m marker) {
			if m.Seq < 0 || m.SentNs < 0 || m.Writer < 0 {
				t.Fatalf("negative field in %+v from %q", m, b)
			}
		})
		if n > bytes.Count(b, []byte(markerPrefix)) {
			t.Fatalf("%d markers from %d prefixes", n, bytes.Count(b, []byte(markerPrefix)))
		}
	})
}
