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
