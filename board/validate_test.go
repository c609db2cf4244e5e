package board_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"corkboard/board"
)

func TestValidBoardID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"a", true},
		{"Team-Board_01", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"", false},
		{"has space", false},
		{"dot.dot", false},
		{"../etc", false},
		{"é", false},
	} {
		if got := board.ValidBoardID(tc.id); got != tc.want {
			t.Errorf("ValidBoardID(%q)=%v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"  Alice@Example.COM ", "alice@example.com", true},
		{"bob@localhost", "bob@localhost", true},
		{"a.b+tag@sub.example.org", "a.b+tag@sub.example.org", true},
		{"", "", false},
		{"no-at-sign", "", false},
		{"a@b", "", false},
		{"Alice <alice@example.com>", "", false},
		{"alice@example.com\r\nBcc: evil@example.com", "", false},
		{"alice@example.com\nX: y", "", false},
		{"alice@exa mple.com", "", false},
		{"a,b@example.com", "", false},
		{"@example.com", "", false},
		{strings.Repeat("a", 250) + "@example.com", "", false},
	} {
		got, err := board.NormalizeEmail("email", tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("NormalizeEmail(%q)=%q,%v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && board.ErrorCode(err) != board.EINVALID {
			t.Errorf("NormalizeEmail(%q) code=%s, want invalid", tc.in, board.ErrorCode(err))
		}
	}
}

func fieldOf(err error) string {
	if e, ok := err.(*board.Error); ok {
		return e.Field
	}
	return ""
}

func notes(n int) []board.Note {
	out := make([]board.Note, n)
	for i := range out {
		out[i] = board.Note{ID: fmt.Sprintf("n%04d", i)}
	}
	return out
}

func TestPushValidate(t *testing.T) {
	big := strings.Repeat("é", board.MaxNoteContent) // 2 bytes each: counts code points
	for _, tc := range []struct {
		name  string
		push  board.Push
		field string // "" = valid
	}{
		{"OK empty", board.Push{}, ""},
		{"OK 500 notes", board.Push{Notes: board.NoteChanges{Upserted: notes(500)}}, ""},
		{"501 notes", board.Push{Notes: board.NoteChanges{Upserted: notes(501)}}, "notes.upserted"},
		{"501 items", board.Push{TrackerItems: board.ItemChanges{Upserted: make([]board.TrackerItem, 501)}}, "trackerItems.upserted"},
		{"OK content at limit", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", Content: big}}}}, ""},
		{"content over limit", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a"}, {ID: "b", Content: big + "x"}}}}, "notes.upserted[1].content"},
		{"empty id", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: ""}}}}, "notes.upserted[0].id"},
		{"OK id 128", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: strings.Repeat("i", 128)}}}}, ""},
		{"id 129", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: strings.Repeat("i", 129)}}}}, "notes.upserted[0].id"},
		{"NaN x", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", X: math.NaN()}}}}, "notes.upserted[0].x"},
		{"huge y", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", Y: 1e12}}}}, "notes.upserted[0].y"},
		{"OK no size", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: 0, H: 0}}}}, ""},
		{"OK smallest size", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: board.MinNoteWidth, H: board.MinNoteHeight}}}}, ""},
		{"OK largest size", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: board.MaxNoteSize, H: board.MaxNoteSize}}}}, ""},
		{"w below its minimum", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: board.MinNoteWidth - 0.5, H: 160}}}}, "notes.upserted[0].w"},
		{"h below its minimum", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: 220, H: board.MinNoteHeight - 0.5}}}}, "notes.upserted[0].h"},
		{"w past the maximum", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: board.MaxNoteSize + 0.5, H: 160}}}}, "notes.upserted[0].w"},
		{"h past the maximum", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: 220, H: board.MaxNoteSize + 0.5}}}}, "notes.upserted[0].h"},
		{"w without h", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: 220, H: 0}}}}, "notes.upserted[0].h"},
		{"h without w", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: 0, H: 160}}}}, "notes.upserted[0].w"},
		{"NaN w", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: math.NaN(), H: 160}}}}, "notes.upserted[0].w"},
		{"infinite h", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: 220, H: math.Inf(1)}}}}, "notes.upserted[0].h"},
		{"negative w", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", W: -220, H: 160}}}}, "notes.upserted[0].w"},
		{"bad updatedAt", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", UpdatedAt: "yesterday"}}}}, "notes.upserted[0].updatedAt"},
		{"OK updatedAt", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", UpdatedAt: "2026-11-22T10:00:00.123Z"}}}}, ""},
		{"empty deleted id", board.Push{Notes: board.NoteChanges{Deleted: []string{"ok", ""}}}, "notes.deleted[1]"},
		{"item summary", board.Push{TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{{ID: "t", Summary: strings.Repeat("s", 1001)}}}}, "trackerItems.upserted[0].summary"},
		{"negative clientVersion", board.Push{ClientVersion: -1}, "clientVersion"},
		{"long board name", board.Push{Board: &board.BoardPatch{Name: strings.Repeat("n", 201)}}, "board.name"},
		{"invalid utf8", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "a", Title: "\xff"}}}}, "notes.upserted[0].title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.push.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate()=%v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate()=nil, want error on %s", tc.field)
			}
			if got := fieldOf(err); got != tc.field {
				t.Fatalf("field=%q, want %q (err %v)", got, tc.field, err)
			}
			if board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("code=%s, want invalid", board.ErrorCode(err))
			}
		})
	}
}

func TestPhasesValidate(t *testing.T) {
	raw := func(s ...string) []json.RawMessage {
		out := make([]json.RawMessage, len(s))
		for i := range s {
			out[i] = json.RawMessage(s[i])
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		ph    board.Phases
		field string
	}{
		{"OK", board.Phases{Phases: raw(`{"id":"a","name":"Discover"}`, `{"id":"b"}`), CurrentPhaseID: "b"}, ""},
		{"OK empty current", board.Phases{Phases: raw(`{"id":"a"}`)}, ""},
		{"OK no phases", board.Phases{Phases: raw()}, ""},
		{"not object", board.Phases{Phases: raw(`"a"`)}, "phases.phases[0]"},
		{"missing id", board.Phases{Phases: raw(`{"name":"x"}`)}, "phases.phases[0].id"},
		{"numeric id", board.Phases{Phases: raw(`{"id":1}`)}, "phases.phases[0].id"},
		{"duplicate id", board.Phases{Phases: raw(`{"id":"a"}`, `{"id":"a"}`)}, "phases.phases[1].id"},
		{"unknown current", board.Phases{Phases: raw(`{"id":"a"}`), CurrentPhaseID: "z"}, "phases.currentPhaseId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ph.Validate()
			if got := fieldOf(err); got != tc.field || (tc.field == "") != (err == nil) {
				t.Fatalf("Validate()=%v (field %q), want field %q", err, got, tc.field)
			}
		})
	}
}

// TestLimitsAtTheirEdges checks every limit in validate.go at its edge: the
// maximum passes, one more fails naming the field. Text is counted in code
// points, so it is made of "é" (two bytes each).
func TestLimitsAtTheirEdges(t *testing.T) {
	text := func(n int) string { return strings.Repeat("é", n) }
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("d%d", i)
		}
		return out
	}
	items := func(n int) []board.TrackerItem {
		out := make([]board.TrackerItem, n)
		for i := range out {
			out[i] = board.TrackerItem{ID: fmt.Sprintf("t%04d", i)}
		}
		return out
	}
	note := func(set func(*board.Note)) error {
		n := board.Note{ID: "n"}
		set(&n)
		p := board.Push{Notes: board.NoteChanges{Upserted: []board.Note{n}}}
		return p.Validate()
	}
	item := func(set func(*board.TrackerItem)) error {
		it := board.TrackerItem{ID: "t"}
		set(&it)
		p := board.Push{TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{it}}}
		return p.Validate()
	}
	// phase is one phase object of exactly n bytes of JSON.
	phase := func(n int) json.RawMessage {
		const open, end = `{"id":"p","pad":"`, `"}`
		return json.RawMessage(open + strings.Repeat("x", n-len(open)-len(end)) + end)
	}
	phases := func(n int) []json.RawMessage {
		out := make([]json.RawMessage, n)
		for i := range out {
			out[i] = json.RawMessage(fmt.Sprintf(`{"id":"p%d"}`, i))
		}
		return out
	}
	for _, tc := range []struct {
		field string
		max   int
		with  func(n int) error // validates a value of size n in field
	}{
		{"notes.upserted[0].id", board.MaxIDLen, func(n int) error { return note(func(x *board.Note) { x.ID = text(n) }) }},
		{"notes.upserted[0].title", board.MaxTitleLen, func(n int) error { return note(func(x *board.Note) { x.Title = text(n) }) }},
		{"notes.upserted[0].content", board.MaxNoteContent, func(n int) error { return note(func(x *board.Note) { x.Content = text(n) }) }},
		{"notes.upserted[0].color", board.MaxShortField, func(n int) error { return note(func(x *board.Note) { x.Color = text(n) }) }},
		{"notes.upserted[0].type", board.MaxShortField, func(n int) error { return note(func(x *board.Note) { x.Type = text(n) }) }},
		{"trackerItems.upserted[0].id", board.MaxIDLen, func(n int) error { return item(func(x *board.TrackerItem) { x.ID = text(n) }) }},
		{"trackerItems.upserted[0].key", board.MaxShortField, func(n int) error { return item(func(x *board.TrackerItem) { x.Key = text(n) }) }},
		{"trackerItems.upserted[0].type", board.MaxShortField, func(n int) error { return item(func(x *board.TrackerItem) { x.Type = text(n) }) }},
		{"trackerItems.upserted[0].summary", board.MaxItemSummaryLen, func(n int) error { return item(func(x *board.TrackerItem) { x.Summary = text(n) }) }},
		{"trackerItems.upserted[0].description", board.MaxItemDescription, func(n int) error { return item(func(x *board.TrackerItem) { x.Description = text(n) }) }},
		{"trackerItems.upserted[0].status", board.MaxShortField, func(n int) error { return item(func(x *board.TrackerItem) { x.Status = text(n) }) }},
		{"trackerItems.upserted[0].parentId", board.MaxIDLen, func(n int) error { return item(func(x *board.TrackerItem) { x.ParentID = text(n) }) }},
		{"notes.upserted", board.MaxUpsertedNotes, func(n int) error {
			return (&board.Push{Notes: board.NoteChanges{Upserted: notes(n)}}).Validate()
		}},
		{"trackerItems.upserted", board.MaxUpsertedItems, func(n int) error {
			return (&board.Push{TrackerItems: board.ItemChanges{Upserted: items(n)}}).Validate()
		}},
		{"notes.deleted", board.MaxDeletedPerPush, func(n int) error {
			return (&board.Push{Notes: board.NoteChanges{Deleted: ids(n)}}).Validate()
		}},
		{"trackerItems.deleted", board.MaxDeletedPerPush, func(n int) error {
			return (&board.Push{TrackerItems: board.ItemChanges{Deleted: ids(n)}}).Validate()
		}},
		{"notes.deleted[0]", board.MaxIDLen, func(n int) error {
			return (&board.Push{Notes: board.NoteChanges{Deleted: []string{text(n)}}}).Validate()
		}},
		{"trackerItems.deleted[0]", board.MaxIDLen, func(n int) error {
			return (&board.Push{TrackerItems: board.ItemChanges{Deleted: []string{text(n)}}}).Validate()
		}},
		{"board.name", board.MaxBoardNameLen, func(n int) error {
			return (&board.Push{Board: &board.BoardPatch{Name: text(n)}}).Validate()
		}},
		{"phases.phases", board.MaxPhases, func(n int) error { return (&board.Phases{Phases: phases(n)}).Validate() }},
		{"phases.phases[0]", board.MaxPhaseBytes, func(n int) error {
			return (&board.Phases{Phases: []json.RawMessage{phase(n)}}).Validate()
		}},
		{"phases.phases[0].id", board.MaxIDLen, func(n int) error {
			id, _ := json.Marshal(text(n))
			return (&board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":` + string(id) + `}`)}}).Validate()
		}},
		{"boardId", board.MaxBoardIDLen, func(n int) error { return board.ValidateBoardID("boardId", strings.Repeat("b", n)) }},
		{"email", board.MaxEmailLen, func(n int) error {
			const domain = "@example.com"
			_, err := board.NormalizeEmail("email", strings.Repeat("a", n-len(domain))+domain)
			return err
		}},
		{"notes.upserted[0].updatedAt", 64, func(n int) error { // a timestamp of n characters: long fractions parse
			return note(func(x *board.Note) { x.UpdatedAt = "2026-11-22T10:00:00." + strings.Repeat("1", n-21) + "Z" })
		}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			if err := tc.with(tc.max); err != nil {
				t.Fatalf("at the limit (%d): %v", tc.max, err)
			}
			err := tc.with(tc.max + 1)
			if board.ErrorCode(err) != board.EINVALID || fieldOf(err) != tc.field {
				t.Fatalf("one over the limit (%d): err=%v, want EINVALID naming %s", tc.max+1, err, tc.field)
			}
		})
	}
}

// TestCoordinateLimit: |x| and |y| up to MaxCoordinate pass; the next
// float64 beyond fails naming the coordinate.
func TestCoordinateLimit(t *testing.T) {
	over := math.Nextafter(board.MaxCoordinate, math.Inf(1))
	for _, tc := range []struct {
		x, y  float64
		field string
	}{
		{board.MaxCoordinate, -board.MaxCoordinate, ""},
		{-board.MaxCoordinate, board.MaxCoordinate, ""},
		{over, 0, "notes.upserted[0].x"},
		{-over, 0, "notes.upserted[0].x"},
		{0, over, "notes.upserted[0].y"},
		{0, -over, "notes.upserted[0].y"},
	} {
		p := board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n", X: tc.x, Y: tc.y}}}}
		if err := p.Validate(); fieldOf(err) != tc.field || (err == nil) != (tc.field == "") {
			t.Errorf("x=%v y=%v: err=%v, want field %q", tc.x, tc.y, err, tc.field)
		}
	}
}
