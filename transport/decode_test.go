package transport_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/transport"
	"corkboard/transport/livewire"
)

// extraNote is a note with fields Corkboard does not know, as another
// client would send it (raw JSON keeps their exact spelling and order).
const extraNote = `{"id":"n1","title":"Hi","width":240,"height":120.5,"z":{"layer":"top","order":[3,1]},"tags":["a","é"],"x":5}`

// extraItem is a tracker item with a client's own fields.
const extraItem = `{"id":"i1","key":"CB-1","summary":"Ship","priority":"high","assignee":null,"estimate":3,"labels":["ops"]}`

func wantNoteExtra() []board.Field {
	return []board.Field{
		{Name: "width", Value: []byte(`240`)},
		{Name: "height", Value: []byte(`120.5`)},
		{Name: "z", Value: []byte(`{"layer":"top","order":[3,1]}`)},
		{Name: "tags", Value: []byte(`["a","é"]`)},
	}
}

func wantItemExtra() []board.Field {
	return []board.Field{
		{Name: "priority", Value: []byte(`"high"`)},
		{Name: "assignee", Value: []byte(`null`)},
		{Name: "estimate", Value: []byte(`3`)},
		{Name: "labels", Value: []byte(`["ops"]`)},
	}
}

func checkExtras(tb testing.TB, where string, notes []board.Note, items []board.TrackerItem) {
	tb.Helper()
	if len(notes) != 1 || !reflect.DeepEqual(notes[0].Extra, wantNoteExtra()) || notes[0].X != 5 || notes[0].Title != "Hi" {
		tb.Fatalf("%s: notes %+v, want n1 with its extra fields in order", where, notes)
	}
	if len(items) != 1 || !reflect.DeepEqual(items[0].Extra, wantItemExtra()) || items[0].Key != "CB-1" {
		tb.Fatalf("%s: items %+v, want i1 with its extra fields in order", where, items)
	}
}

// TestExtraFieldsRoundTrip: fields a row carries beyond Corkboard's come
// back on pull, in live messages and after a restart, as sent.
func TestExtraFieldsRoundTrip(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	c, _ := e.connect(s, "b1", "")

	// Unknown keys of the envelope and of board are ignored.
	body := `{"clientVersion":0,"client":{"name":"other","v":[1]},"board":{"name":"B","theme":"dark"},` +
		`"notes":{"upserted":[` + extraNote + `],"deleted":[],"cursor":7},` +
		`"trackerItems":{"upserted":[` + extraItem + `]}}`
	if status, res := e.push(s, "b1", body); status != 200 {
		t.Fatalf("push: %d %v", status, res)
	}
	m := readType(t, c, livewire.TypeChanges)
	checkExtras(t, "live message", m.Notes, m.Items)

	ch := e.pull(s, "b1", 0)
	checkExtras(t, "pull", ch.Notes, ch.TrackerItems)
	if ch.Board.Name != "B" {
		t.Fatalf("board name %q, want B", ch.Board.Name)
	}
	// The raw answer has the extra fields after the note's own.
	raw := e.do("GET", "/api/boards/b1/sync?since=0", s, nil)
	if !strings.Contains(string(raw.body), `"deletedAt":null,"createdBy":"owner@example.com","width":240,"height":120.5,"z":{"layer":"top","order":[3,1]},"tags":["a","é"]}`) {
		t.Fatalf("pull answer %s: extra fields not after the known ones", raw.body)
	}

	e.restart()
	ch = e.pull(s, "b1", 0)
	checkExtras(t, "pull after restart", ch.Notes, ch.TrackerItems)

	// The live channel keeps them too.
	c, _ = e.connect(s, "b1", "")
	send(t, c, map[string]any{"type": "push", "id": "p1", "push": map[string]any{"notes": map[string]any{"upserted": []any{map[string]any{"id": "n2", "rank": "b"}}}}})
	if m := readType(t, c, livewire.TypeAck); m.ID != "p1" {
		t.Fatalf("got %+v, want ack p1", m)
	}
	if ch := e.pull(s, "b1", 1); len(ch.Notes) != 1 || len(ch.Notes[0].Extra) != 1 || string(ch.Notes[0].Extra[0].Value) != `"b"` {
		t.Fatalf("live push: %+v, want n2 with rank", ch.Notes)
	}
}

// TestPushBounds: every limit of a push is checked while decoding, and a
// refusal names the field.
func TestPushBounds(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	notes := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"id":"n%d"}`, i)
		}
		return `{"notes":{"upserted":[` + strings.Join(parts, ",") + `]}}`
	}
	ids := func(n int) string {
		return `{"trackerItems":{"deleted":[` + strings.TrimSuffix(strings.Repeat(`"x",`, n), ",") + `]}}`
	}
	fields := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"notes":{"upserted":[{"id":"a"`)
		for i := range n {
			fmt.Fprintf(&b, `,"f%d":%d`, i, i)
		}
		b.WriteString(`}]}}`)
		return b.String()
	}
	size := func(w, h string) string {
		return `{"notes":{"upserted":[{"id":"a","w":` + w + `,"h":` + h + `}]}}`
	}
	big := func(n int) string {
		return `{"trackerItems":{"upserted":[{"id":"a","blob":"` + strings.Repeat("x", n) + `"}]}}`
	}
	for _, tc := range []struct{ name, body, field string }{
		{"OK 500 notes", notes(500), ""},
		{"501 notes", notes(501), "notes.upserted"},
		{"OK 5000 deleted", ids(5000), ""},
		{"5001 deleted", ids(5001), "trackerItems.deleted"},
		{"OK 32 extra fields", fields(32), ""},
		{"33 extra fields", fields(33), "notes.upserted[0].f32"},
		{"OK 16 KiB of extra JSON", big(16<<10 - len(`blob`) - 2), ""},
		{"over 16 KiB of extra JSON", big(16<<10 - len(`blob`) - 1), "trackerItems.upserted[0].blob"},
		{"extra shadowing a field by case", `{"trackerItems":{"upserted":[{"id":"a","Summary":"x"}]}}`, "trackerItems.upserted[0].Summary"},
		{"invalid UTF-8", "{\"notes\":{\"upserted\":[{\"id\":\"a\",\"title\":\"\xff\"}]}}", "notes.upserted[0].title"},
		{"invalid UTF-8 in an extra field", "{\"notes\":{\"upserted\":[{\"id\":\"a\",\"width\":[\"\xc3\"]}]}}", "notes.upserted[0].width[0]"},
		{"lone surrogate", `{"board":{"name":"\ud800"}}`, "board.name"},
		{"duplicate key", `{"notes":{"upserted":[{"id":"a","width":1,"width":2}]}}`, "notes.upserted[0].width"},
		{"duplicate envelope key", `{"board":{"name":"a"},"board":{"name":"b"}}`, "board"},
		{"wrong type", `{"notes":{"upserted":[{"id":"a","y":true}]}}`, "notes.upserted[0].y"},
		{"too deep", `{"notes":{"upserted":[{"id":"a","width":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]}}`, "notes.upserted[0].width" + strings.Repeat("[0]", 96)},
		{"OK smallest note size", size(`120`, `80`), ""},
		{"w under its minimum", size(`119.999`, `80`), "notes.upserted[0].w"},
		{"h under its minimum", size(`120`, `79.999`), "notes.upserted[0].h"},
		{"OK largest note size", size(`4000`, `4000`), ""},
		{"w past the maximum", size(`4000.001`, `4000`), "notes.upserted[0].w"},
		{"h past the maximum", size(`4000`, `4000.001`), "notes.upserted[0].h"},
		{"w sent as 0", size(`0`, `0`), "notes.upserted[0].w"},
		{"OK null size is no size", size(`null`, `null`), ""},
		{"w without h", `{"notes":{"upserted":[{"id":"a","w":220}]}}`, "notes.upserted[0].h"},
		{"w not a number", size(`"220"`, `160`), "notes.upserted[0].w"},
		{"w shadowed by case", `{"notes":{"upserted":[{"id":"a","W":220}]}}`, "notes.upserted[0].W"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, res := e.push(s, "b1", tc.body)
			if tc.field == "" {
				if status != 200 {
					t.Fatalf("%d %v, want 200", status, res)
				}
				return
			}
			if status != 400 || res["field"] != tc.field {
				t.Fatalf("%d %v, want 400 naming %s", status, res, tc.field)
			}
		})
	}
}

// TestBodyLimitFromHeader: a body whose Content-Length is over its limit
// is answered 413 without a byte of it being sent.
func TestBodyLimitFromHeader(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	for _, tc := range []struct {
		path  string
		limit int64
	}{
		{"/api/boards/b1/sync", 64 << 20},
		{"/api/boards/b1/log", 64 << 20},
		{"/api/boards/b1/invite", 1 << 20},
		{"/api/auth/send-otp", 64 << 10},
	} {
		t.Run(tc.path, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nCookie: %s=%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", tc.path, transport.SessionCookie, s, tc.limit+1)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer before the body was sent: %v", err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", res.StatusCode)
			}
		})
	}
}

// TestDecodeBaseVersion: a row's baseVersion is read as the merge's base,
// never kept as an extra field, and refused naming it when it is not a
// non-negative integer.
func TestDecodeBaseVersion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		row   string
		want  int64
		field string
	}{
		{"OK", `{"id":"n1","baseVersion":7}`, 7, ""},
		{"Null", `{"id":"n1","baseVersion":null}`, 0, ""},
		{"Zero", `{"id":"n1","baseVersion":0}`, 0, ""},
		{"ErrNegative", `{"id":"n1","baseVersion":-1}`, 0, "notes.upserted[0].baseVersion"},
		{"ErrString", `{"id":"n1","baseVersion":"7"}`, 0, "notes.upserted[0].baseVersion"},
		{"ErrFraction", `{"id":"n1","baseVersion":7.5}`, 0, "notes.upserted[0].baseVersion"},
		{"ErrShadow", `{"id":"n1","BaseVersion":7}`, 0, "notes.upserted[0].BaseVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := transport.DecodePushForTest(strings.NewReader(`{"notes":{"upserted":[` + tc.row + `]}}`))
			if err == nil {
				err = p.Validate()
			}
			if tc.field != "" {
				var be *board.Error
				if !errors.As(err, &be) || be.Field != tc.field {
					t.Fatalf("err=%v, want a refusal naming %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := p.Notes.Upserted[0]; n.BaseVersion != tc.want || len(n.Extra) != 0 {
				t.Fatalf("note %+v, want baseVersion %d and no extra field", n, tc.want)
			}
		})
	}
	// Items read it the same way.
	p, err := transport.DecodePushForTest(strings.NewReader(`{"trackerItems":{"upserted":[{"id":"i1","baseVersion":3}]}}`))
	if err != nil || p.TrackerItems.Upserted[0].BaseVersion != 3 || len(p.TrackerItems.Upserted[0].Extra) != 0 {
		t.Fatalf("item %+v err=%v, want baseVersion 3", p.TrackerItems.Upserted, err)
	}
}
