package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
)

// clT0 is where the changelog tests' storage clock stands still: every
// entry of a test is recorded "in the same millisecond" unless it moves.
var clT0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// newClEnv is the server as the changelog tests need it: storage's clock
// stopped at clT0, and three snapshots kept per board.
func newClEnv(tb testing.TB) *env {
	tb.Helper()
	return newEnv(tb, withClock(clT0), withChangelog(changelog.Options{Keep: 3}))
}

type clEntry struct {
	NoteID  string `json:"noteId"`
	Action  string `json:"action"`
	Content string `json:"content"`
}

type clListed struct {
	Key       string `json:"key"`
	NoteID    string `json:"noteId"`
	Action    string `json:"action"`
	Timestamp string `json:"timestamp"`
}

// appendLog posts entries (with a boardState) and returns the keys.
func (e *env) appendLog(session, boardID string, entries ...clEntry) []string {
	e.tb.Helper()
	var out struct {
		OK   bool     `json:"ok"`
		Keys []string `json:"keys"`
	}
	e.do("POST", "/api/boards/"+boardID+"/log", session, map[string]any{"entries": entries, "boardState": map[string]any{"anything": []int{1, 2}}}, beacon).want(e.tb, 200, &out)
	if !out.OK || len(out.Keys) != len(entries) {
		e.tb.Fatalf("POST /log answered %+v for %d entries", out, len(entries))
	}
	return out.Keys
}

func (e *env) list(session, boardID, query string) []clListed {
	e.tb.Helper()
	var out struct {
		Entries []clListed `json:"entries"`
	}
	e.do("GET", "/api/boards/"+boardID+"/log"+query, session, nil).want(e.tb, 200, &out)
	if out.Entries == nil {
		e.tb.Fatalf("GET /log%s answered no entries list", query)
	}
	return out.Entries
}

func noteSnapshot(n board.Note) string { return string(changelog.RenderNote(n)) }

// TestChangelogRestoresDeletedNote is the end-to-end story: a note
// created and deleted by pushes, each logged, comes back to life with the
// same content from its delete_note entry.
func TestChangelogRestoresDeletedNote(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	note := board.Note{ID: "n1", Title: "Retro", Content: "# Wins\n\n- `make test` is green\n---\n<!-- not a fence -->\n", X: 120.5, Y: -40, Color: "yellow", Type: "sticky", UpdatedAt: "2026-03-01T09:00:00Z"}

	// Create by push, log create_note.
	e.pushOK(s, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note}}})
	e.appendLog(s, "b1", clEntry{NoteID: "n1", Action: "create_note", Content: noteSnapshot(note)})

	// Delete by push, log delete_note with the pre-deletion snapshot.
	e.clock.Advance(time.Minute)
	e.pushOK(s, "b1", board.Push{Notes: board.NoteChanges{Deleted: []string{"n1"}}})
	e.appendLog(s, "b1", clEntry{NoteID: "n1", Action: "delete_note", Content: noteSnapshot(note)})
	if got := e.pull(s, "b1", 0); len(got.Notes) != 0 {
		t.Fatalf("after the delete the board has notes %v", got.Notes)
	}

	// List the note's history, newest first, and fetch the deletion.
	hist := e.list(s, "b1", "?noteId=n1")
	if len(hist) != 2 || hist[0].Action != "delete_note" || hist[1].Action != "create_note" {
		t.Fatalf("history of n1: %+v, want delete_note then create_note", hist)
	}
	res := e.do("GET", "/api/boards/b1/log/"+hist[0].Key, s, nil)
	res.want(t, 200, nil)
	if got, err := changelog.ParseNote(res.body); err != nil || got.Content != note.Content {
		t.Fatalf("fetched entry parses to %+v (%v), want the pre-deletion note", got, err)
	}

	// Restore it: the answer is the note, and nothing changed yet.
	var restored board.Note
	e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": hist[0].Key, "type": "note"}).want(t, 200, &restored)
	if restored.ID != "n1" || restored.Content != note.Content || restored.Title != note.Title || restored.X != note.X {
		t.Fatalf("restored %+v, want %+v", restored, note)
	}
	if got := e.pull(s, "b1", 0); len(got.Notes) != 0 {
		t.Fatal("restore changed the board by itself")
	}

	// Push it back and pull: live again with the same content.
	e.pushOK(s, "b1", board.Push{ClientVersion: 2, Notes: board.NoteChanges{Upserted: []board.Note{restored}}})
	got := e.pull(s, "b1", 0)
	if len(got.Notes) != 1 || got.Notes[0].Content != note.Content || got.Notes[0].Title != note.Title || got.Notes[0].DeletedAt != nil {
		t.Fatalf("after restore and push the board has %+v, want n1 live with its content", got.Notes)
	}
}

// TestChangelogPlainMarkdownEntry: a note entry whose content is plain
// Markdown is accepted; its note is the server's copy with that text, and
// restoring it gives a note a push accepts.
func TestChangelogPlainMarkdownEntry(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	note := board.Note{ID: "n1", Title: "Retro", X: 120.5, Y: -40, Color: "yellow", Type: "sticky", UpdatedAt: "2026-03-01T09:00:00Z"}
	e.pushOK(s, "b1", notePush(note))
	keys := e.appendLog(s, "b1",
		clEntry{NoteID: "n1", Action: "update_note", Content: "# Wins\n\n- shipped"},
		clEntry{NoteID: "brand-new", Action: "create_note", Content: "just text"},
	)
	var restored board.Note
	e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": keys[0], "type": "note"}).want(t, 200, &restored)
	want := note
	want.Content, want.Version = "# Wins\n\n- shipped", 1
	if !jsonEqual(restored, want) {
		t.Fatalf("restored %+v, want %+v", restored, want)
	}
	var fresh board.Note
	e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": keys[1], "type": "note"}).want(t, 200, &fresh)
	if !jsonEqual(fresh, board.Note{ID: "brand-new", Content: "just text"}) {
		t.Fatalf("restored %+v, want brand-new with only its text", fresh)
	}
	e.pushOK(s, "b1", notePush(restored, fresh))
	if got := e.pull(s, "b1", 1); len(got.Notes) != 2 || got.Notes[1].ID != "n1" || got.Notes[1].Content != "# Wins\n\n- shipped" {
		t.Fatalf("after pushing the restored notes: %+v", got.Notes)
	}
}

func TestChangelogAccess(t *testing.T) {
	e := newClEnv(t)
	owner := e.claim("owner@example.com", "b1")
	viewer := e.invite(owner, "b1", "viewer@example.com", "free")
	editor := e.invite(owner, "b1", "editor@example.com", "pro")
	stranger := e.login("stranger@example.com")
	keys := e.appendLog(owner, "b1", clEntry{NoteID: "n1", Action: "create_note", Content: noteSnapshot(board.Note{ID: "n1"})})
	entry := clEntry{Action: "rename_board", Content: "Renamed"}
	logBody := map[string]any{"entries": []clEntry{entry}}
	restore := map[string]string{"logKey": keys[0], "type": "note"}

	type call struct {
		name, method, path string
		body               any
	}
	calls := []call{
		{"Append", "POST", "/api/boards/b1/log", logBody},
		{"List", "GET", "/api/boards/b1/log", nil},
		{"Entry", "GET", "/api/boards/b1/log/" + keys[0], nil},
		{"Restore", "POST", "/api/boards/b1/log/restore", restore},
		{"Snapshot", "GET", "/api/boards/b1/snapshot", nil},
		{"SnapshotList", "GET", "/api/boards/b1/snapshot?list=true", nil},
		{"TakeSnapshot", "POST", "/api/boards/b1/snapshot", nil},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			e.do(c.method, c.path, "", c.body).wantError(t, 401, "")
			e.do(c.method, c.path, "forged-session", c.body).wantError(t, 401, "")
			e.do(c.method, c.path, stranger, c.body).wantError(t, 403, "")
			unclaimed := strings.Replace(c.path, "/b1/", "/ghost/", 1)
			e.do(c.method, unclaimed, owner, c.body).wantError(t, 404, "")
			e.do(c.method, strings.Replace(c.path, "/b1/", "/bad.id/", 1), owner, c.body).wantError(t, 400, "boardId")
			e.do(c.method, c.path, editor, c.body).want(t, 200, nil)
			e.do(c.method, c.path, owner, c.body).want(t, 200, nil)
			if c.method == "POST" && c.name != "Restore" {
				// Writing the log or snapshots needs canEdit.
				e.do(c.method, c.path, viewer, c.body).wantError(t, 403, "")
			} else {
				e.do(c.method, c.path, viewer, c.body).want(t, 200, nil)
			}
		})
	}
	// The viewer's refused POSTs stored nothing.
	for _, le := range e.list(owner, "b1", "?limit=500") {
		if le.Action == "rename_board" && le.NoteID != "" {
			t.Fatalf("rename entry %+v about a note", le)
		}
	}
	if got := len(e.list(owner, "b1", "?action=rename_board")); got != 2 {
		t.Fatalf("%d rename entries, want 2 (editor and owner)", got)
	}
}

func TestChangelogAppendValidation(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	good := clEntry{NoteID: "n1", Action: "create_note", Content: noteSnapshot(board.Note{ID: "n1", Title: "ok"})}
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"UnknownAction", map[string]any{"entries": []clEntry{good, {NoteID: "n1", Action: "archive_note", Content: good.Content}}}, "entries[1].action"},
		{"MissingNoteID", map[string]any{"entries": []clEntry{good, good, {Action: "update_note", Content: good.Content}}}, "entries[2].noteId"},
		{"PlainMarkdownOver30000", map[string]any{"entries": []clEntry{{NoteID: "n1", Action: "update_note", Content: strings.Repeat("é", 30001)}}}, "entries[0].content"},
		{"ContentOfOtherNote", map[string]any{"entries": []clEntry{{NoteID: "n2", Action: "update_note", Content: good.Content}}}, "entries[0].content"},
		{"ContentOver30000", map[string]any{"entries": []clEntry{{NoteID: "n1", Action: "update_note", Content: noteSnapshot(board.Note{ID: "n1", Content: strings.Repeat("é", 30001)})}}}, "entries[0].content"},
		{"EmptyRename", map[string]any{"entries": []clEntry{{Action: "rename_board"}}}, "entries[0].content"},
		{"EntriesMissing", map[string]any{"boardState": map[string]any{}}, "entries"},
		{"EntriesNotArray", `{"entries": {}}`, "entries"},
		{"UnknownEntryField", `{"entries": [{"noteId": "n1", "action": "create_note", "content": "", "extra": 1}]}`, "entries[0].extra"},
		{"ContentNotString", `{"entries": [{"noteId": "n1", "action": "create_note", "content": 5}]}`, "entries[0].content"},
		{"BoardStateNotObject", map[string]any{"entries": []clEntry{good}, "boardState": []int{1}}, "boardState"},
		{"TooManyEntries", map[string]any{"entries": slices.Repeat([]clEntry{good}, 501)}, "entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do("POST", "/api/boards/b1/log", s, tc.body, beacon).wantError(t, 400, tc.field)
		})
	}
	if got := e.list(s, "b1", ""); len(got) != 0 {
		t.Fatalf("refused requests stored %v", got)
	}
	t.Run("OK", func(t *testing.T) {
		// 500 entries, a boardState of any shape, no Content-Type (beacon).
		var out struct {
			OK   bool     `json:"ok"`
			Keys []string `json:"keys"`
		}
		body := map[string]any{"entries": slices.Repeat([]clEntry{good}, 500), "boardState": map[string]any{"notes": []any{map[string]any{"weird": true}}}}
		e.do("POST", "/api/boards/b1/log", s, body, beacon).want(t, 200, &out)
		if !out.OK || len(out.Keys) != 500 || !strings.HasPrefix(out.Keys[0], "log/2026-03-01T09:30:00.000000000Z-n1") {
			t.Fatalf("answer ok=%v with %d keys, first %q", out.OK, len(out.Keys), out.Keys[0])
		}
		e.do("POST", "/api/boards/b1/log", s, `{"entries": [], "boardState": null}`, beacon).want(t, 200, nil)
	})
}

// checkListed checks that a GET of the log with query listed exactly the
// keys want, each entry matching query's filters, newest first.
func checkListed(t *testing.T, got []clListed, want []string, query string) {
	t.Helper()
	var gotKeys []string
	for _, le := range got {
		gotKeys = append(gotKeys, le.Key)
	}
	if !slices.Equal(gotKeys, want) {
		t.Fatalf("%d entries, want these %d: got %v", len(got), len(want), gotKeys)
	}
	q, _ := url.ParseQuery(strings.TrimPrefix(query, "?"))
	for i, le := range got {
		if q.Get("noteId") != "" && le.NoteID != q.Get("noteId") || q.Get("action") != "" && le.Action != q.Get("action") {
			t.Fatalf("entry %+v does not match %s", le, query)
		}
		if i > 0 && got[i-1].Timestamp <= le.Timestamp {
			t.Fatalf("entries not newest first at %d: %v then %v", i, got[i-1], le)
		}
	}
}

// listAllPages pages through the log with filter (a query string part
// starting with "&", or ""), size entries a page, each page asked before
// the last entry of the one before, and returns every key seen in order.
func (e *env) listAllPages(t *testing.T, session, boardID, filter string, size int) []string {
	t.Helper()
	var seen []string
	query := fmt.Sprintf("?limit=%d%s", size, filter)
	for page := 0; ; page++ {
		if page > 200 {
			t.Fatal("paging does not end")
		}
		got := e.list(session, boardID, query)
		for _, le := range got {
			seen = append(seen, le.Key)
		}
		if len(got) < size {
			return seen
		}
		query = fmt.Sprintf("?limit=%d%s&before=%s", size, filter, url.QueryEscape(got[len(got)-1].Timestamp))
	}
}

func TestChangelogListQuery(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	var entries []clEntry
	for i := range 520 {
		id := fmt.Sprintf("n%d", i%4)
		action := []string{"create_note", "update_note", "delete_note"}[i%3]
		entries = append(entries, clEntry{NoteID: id, Action: action, Content: noteSnapshot(board.Note{ID: id})})
	}
	// Two requests, all in the same instant of the server's clock.
	keys := e.appendLog(s, "b1", entries[:260]...)
	keys = append(keys, e.appendLog(s, "b1", entries[260:]...)...)

	// matching lists the keys the filters of query select, newest first.
	matching := func(query string) []string {
		q, _ := url.ParseQuery(strings.TrimPrefix(query, "?"))
		var out []string
		for i := len(keys) - 1; i >= 0; i-- {
			if q.Get("noteId") != "" && entries[i].NoteID != q.Get("noteId") || q.Get("action") != "" && entries[i].Action != q.Get("action") {
				continue
			}
			out = append(out, keys[i])
		}
		return out
	}
	for _, tc := range []struct {
		query string
		limit int
	}{
		{"", 50},
		{"?limit=1", 1},
		{"?limit=500", 500},
		{"?noteId=n3", 50},
		{"?noteId=n3&limit=500", 500},
		{"?action=delete_note&limit=500", 500},
		{"?noteId=n1&action=create_note&limit=500", 500},
		{"?noteId=nobody", 50},
		{"?action=rename_board", 50},
	} {
		t.Run("OK"+tc.query, func(t *testing.T) {
			want := matching(tc.query)
			checkListed(t, e.list(s, "b1", tc.query), want[:min(len(want), tc.limit)], tc.query)
		})
	}
	if got := e.list(s, "b1", "?limit=1"); got[0].Key != keys[len(keys)-1] {
		t.Fatalf("newest entry %v, want %s", got[0], keys[len(keys)-1])
	}

	t.Run("PagingReturnsEachEntryOnce", func(t *testing.T) {
		for _, filter := range []string{"", "&noteId=n2", "&action=update_note"} {
			seen := e.listAllPages(t, s, "b1", filter, 7)
			if want := matching(filter); !slices.Equal(seen, want) {
				t.Fatalf("paging%s saw %d keys, want each of %d exactly once, newest first", filter, len(seen), len(matching(filter)))
			}
		}
	})
	t.Run("BeforeAnyISOTimestamp", func(t *testing.T) {
		if got := e.list(s, "b1", "?before=2026-03-01T09:30:00Z"); len(got) != 0 {
			t.Fatalf("before the first entry: %d entries", len(got))
		}
		if got := e.list(s, "b1", "?limit=500&before="+url.QueryEscape("2026-03-01T11:30:00+01:00")); len(got) != 500 {
			t.Fatalf("before a later time with an offset: %d entries, want 500", len(got))
		}
	})
	t.Run("BeforeTheEdgesOfTime", func(t *testing.T) {
		for _, tc := range []struct {
			before string
			want   int
		}{
			{"0001-01-01T00:00:00Z", 0}, // Go's zero time is a time like any other
			{"0000-01-01T00:00:00+01:00", 0},
			{"9999-12-31T23:59:59-01:00", 500},
		} {
			if got := e.list(s, "b1", "?limit=500&before="+url.QueryEscape(tc.before)); len(got) != tc.want {
				t.Fatalf("before %s: %d entries, want %d", tc.before, len(got), tc.want)
			}
		}
	})
	for _, tc := range []struct {
		query, field string
	}{
		{"?limit=0", "limit"},
		{"?limit=501", "limit"},
		{"?limit=-1", "limit"},
		{"?limit=ten", "limit"},
		{"?limit=1.5", "limit"},
		{"?limit=", "limit"},
		{"?action=create", "action"},
		{"?action=", "action"},
		{"?action=CREATE_NOTE", "action"},
		{"?before=yesterday", "before"},
		{"?before=2026-03-01", "before"},
		{"?noteId=" + strings.Repeat("n", 129), "noteId"},
	} {
		t.Run("Err"+tc.query, func(t *testing.T) {
			e.do("GET", "/api/boards/b1/log"+tc.query, s, nil).wantError(t, 400, tc.field)
		})
	}
}

func TestChangelogGetEntry(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	s2 := e.claim("other@example.com", "b2")
	note := board.Note{ID: "weird/../id ✓", Title: "<script>alert(1)</script>", Content: "# Title\n\n<b>not html</b>\n"}
	keys := e.appendLog(s, "b1",
		clEntry{NoteID: note.ID, Action: "create_note", Content: noteSnapshot(note)},
		clEntry{Action: "rename_board", Content: "Sprint 12"},
	)
	other := e.appendLog(s2, "b2", clEntry{NoteID: "n1", Action: "create_note", Content: noteSnapshot(board.Note{ID: "n1"})})
	if strings.Contains(keys[0], "..") || strings.Count(keys[0], "/") != 1 {
		t.Fatalf("key %q of an odd note ID is not one safe segment", keys[0])
	}
	listed := e.list(s, "b1", "?action=create_note")
	if listed[0].NoteID != note.ID {
		t.Fatalf("listed noteId %q, want the exact %q", listed[0].NoteID, note.ID)
	}

	// The first entry was recorded at clT0 exactly: keys with a timestamp of
	// another precision name it too.
	idPart := keys[0][strings.Index(keys[0], "Z-")+2:]
	for _, tc := range []struct{ name, path, want string }{
		{"Plain", "/api/boards/b1/log/" + keys[0], noteSnapshot(note)},
		{"Escaped", "/api/boards/b1/log/" + url.PathEscape(keys[0]), noteSnapshot(note)},
		{"Rename", "/api/boards/b1/log/" + keys[1], string(changelog.RenderRename("Sprint 12"))},
		{"Milliseconds", "/api/boards/b1/log/log/2026-03-01T09:30:00.000Z-" + idPart, noteSnapshot(note)},
		{"Seconds", "/api/boards/b1/log/log/2026-03-01T09:30:00Z-" + idPart, noteSnapshot(note)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.do("GET", tc.path, s, nil)
			res.want(t, 200, nil)
			if got := res.header.Get("Content-Type"); got != "text/markdown; charset=utf-8" {
				t.Fatalf("Content-Type %q", got)
			}
			if res.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatal("Markdown answered without nosniff")
			}
			if string(res.body) != tc.want {
				t.Fatalf("body:\n%s\nwant:\n%s", res.body, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"UnknownKey", "/api/boards/b1/log/log/2020-01-01T00:00:00.000000000Z-n1", 404},
		{"OtherBoardsKey", "/api/boards/b1/log/" + other[0], 404},
		{"OtherBoardsKeyByPath", "/api/boards/b1/log/../b2/log/" + other[0], 400},
		{"DotDot", "/api/boards/b1/log/log/2026-03-01T09:30:00.000000000Z-..", 400},
		{"DotDotEscaped", "/api/boards/b1/log/log%2F..%2F..%2Fb2%2F" + url.PathEscape(other[0]), 400},
		{"DoubleEscaped", "/api/boards/b1/log/" + url.PathEscape(url.PathEscape(keys[1])), 400},
		{"Garbage", "/api/boards/b1/log/garbage", 400},
		{"Empty", "/api/boards/b1/log/", 400},
		{"SnapshotKey", "/api/boards/b1/log/snapshots/2026-03-01T09:30:00.000000000Z.md", 400},
		{"CurrentMD", "/api/boards/b1/log/current.md", 400},
		{"UnknownMillisecondKey", "/api/boards/b1/log/log/2026-03-01T09:30:00.123Z-n1", 404},
		{"UnknownSecondKey", "/api/boards/b1/log/log/2026-03-01T09:30:00Z-n1", 404},
		{"UnknownMicrosecondKeyWithOffset", "/api/boards/b1/log/log/2026-03-01T09:30:00.123456+00:00-n1", 404},
		{"TenFractionalDigits", "/api/boards/b1/log/log/2026-03-01T09:30:00.1234567890Z-n1", 400},
		{"NotUTC", "/api/boards/b1/log/log/2026-03-01T09:30:00+01:00-n1", 400},
		{"NoZone", "/api/boards/b1/log/log/2026-03-01T09:30:00-n1", 400},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			field := ""
			if tc.status == 400 {
				field = "logKey"
			}
			e.do("GET", tc.path, s, nil).wantError(t, tc.status, field)
		})
	}
}

func TestChangelogRestoreEndpoint(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	note := board.Note{ID: "n1", Title: "T", Content: "body", X: 1, Y: 2, Color: "blue", Type: "sticky", UpdatedAt: "2026-03-01T09:00:00Z"}
	e.pushOK(s, "b1", board.Push{Board: &board.BoardPatch{Name: "Roadmap"}, Notes: board.NoteChanges{Upserted: []board.Note{note}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{{ID: "i1", Key: "CB-1", Type: "story", Summary: "Ship"}}}})
	keys := e.appendLog(s, "b1", clEntry{NoteID: "n1", Action: "update_note", Content: noteSnapshot(note)}, clEntry{Action: "rename_board", Content: "Roadmap"})
	var snap struct {
		OK  bool   `json:"ok"`
		Key string `json:"key"`
	}
	e.do("POST", "/api/boards/b1/snapshot", s, nil).want(t, 200, &snap)

	t.Run("Note", func(t *testing.T) {
		var got map[string]any
		e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": keys[0], "type": "note"}).want(t, 200, &got)
		for k, want := range map[string]any{"id": "n1", "title": "T", "content": "body", "x": 1.0, "y": 2.0, "color": "blue", "type": "sticky", "updatedAt": "2026-03-01T09:00:00Z", "deletedAt": nil} {
			if v, ok := got[k]; !ok || v != want {
				t.Fatalf("restored note %s=%v (present %v), want %v; body %v", k, v, ok, want, got)
			}
		}
	})
	for _, key := range []string{snap.Key, "current.md"} {
		t.Run("Board "+key, func(t *testing.T) {
			var got map[string]json.RawMessage
			e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": key, "type": "board"}).want(t, 200, &got)
			var st board.State
			raw, _ := json.Marshal(got)
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			if _, ok := got["board"]; !ok || st.Board.Name != "Roadmap" || len(st.Notes) != 1 || st.Notes[0].Content != "body" || len(st.TrackerItems) != 1 || st.TrackerItems[0].Summary != "Ship" {
				t.Fatalf("restored board %s", raw)
			}
		})
	}
	t.Run("BoardFromRename", func(t *testing.T) { testRestoreBoardFromRename(t, e, s) })
	// The refusals agree on which type restores which entry.
	for _, tc := range []struct{ name, logKey, typ, hint string }{
		{"NoteFromRename", keys[1], "note", `type "board"`},
		{"BoardFromNoteEntry", keys[0], "board", `type "note"`},
	} {
		t.Run("Hint"+tc.name, func(t *testing.T) {
			msg := e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": tc.logKey, "type": tc.typ}).wantError(t, 400, "logKey")
			if !strings.Contains(msg, tc.hint) {
				t.Fatalf("error %q, want it to point at %s", msg, tc.hint)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"NoteFromSnapshotKey", map[string]string{"logKey": snap.Key, "type": "note"}, 400, "logKey"},
		{"NoteFromRename", map[string]string{"logKey": keys[1], "type": "note"}, 400, "logKey"},
		{"BoardFromEntry", map[string]string{"logKey": keys[0], "type": "board"}, 400, "logKey"},
		{"UnknownType", map[string]string{"logKey": keys[0], "type": "item"}, 400, "type"},
		{"MissingType", map[string]string{"logKey": keys[0]}, 400, "type"},
		{"MissingKey", map[string]string{"type": "note"}, 400, "logKey"},
		{"GarbageKey", map[string]string{"logKey": "../../etc/passwd", "type": "note"}, 400, "logKey"},
		{"UnknownNote", map[string]string{"logKey": "log/2020-01-01T00:00:00.000000000Z-n1", "type": "note"}, 404, ""},
		{"UnknownMillisecondNote", map[string]string{"logKey": "log/2026-03-01T09:30:00.123Z-n1", "type": "note"}, 404, ""},
		{"UnknownMillisecondSnapshot", map[string]string{"logKey": "snapshots/2026-03-01T09:30:00.123Z.md", "type": "board"}, 404, ""},
		{"UnknownSnapshot", map[string]string{"logKey": "snapshots/2020-01-01T00:00:00.000000000Z.md", "type": "board"}, 404, ""},
		{"UnknownField", map[string]string{"logKey": keys[0], "type": "note", "extra": "x"}, 400, "extra"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			e.do("POST", "/api/boards/b1/log/restore", s, tc.body).wantError(t, tc.status, tc.field)
		})
	}
}

// testRestoreBoardFromRename: restoring a rename gives the board as it is now, named as the entry says.
func testRestoreBoardFromRename(t *testing.T, e *env, s string) {
	old := e.appendLog(s, "b1", clEntry{Action: "rename_board", Content: "Old name"})[0]
	var got map[string]json.RawMessage
	e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": old, "type": "board"}).want(t, 200, &got)
	if got, want := slices.Sorted(maps.Keys(got)), []string{"board", "notes", "trackerItems"}; !slices.Equal(got, want) {
		t.Fatalf("restored keys %v, want %v", got, want)
	}
	var st board.State
	raw, _ := json.Marshal(got)
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	// The board as it is now, named as the entry says.
	if st.Board.ID != "b1" || st.Board.Name != "Old name" || st.Board.Version != 1 || len(st.Notes) != 1 || st.Notes[0].Content != "body" || len(st.TrackerItems) != 1 {
		t.Fatalf("restored rename %s", raw)
	}
}

func TestChangelogSnapshots(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")

	t.Run("EmptyBoard", func(t *testing.T) { testSnapshotsOfEmptyBoard(t, e, s) })

	// Take four snapshots, an hour apart, each after a change; keep is 3.
	var keys []string
	for i := range 4 {
		e.pushOK(s, "b1", board.Push{Board: &board.BoardPatch{Name: "Sprint “12” / Q1"}, Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1", Content: fmt.Sprint("v", i)}}}})
		var out map[string]any
		e.do("POST", "/api/boards/b1/snapshot", s, nil).want(t, 200, &out)
		want := "snapshots/" + persist.Stamp(e.clock.Now()) + ".md"
		if len(out) != 2 || out["ok"] != true || out["key"] != want {
			t.Fatalf("POST /snapshot answered %v, want {ok: true, key: %s}", out, want)
		}
		keys = append(keys, want)
		e.clock.Advance(time.Hour)
	}
	t.Run("ListNewestFirstPruned", func(t *testing.T) { testSnapshotListPruned(t, e, s, keys) })
	t.Run("ByKey", func(t *testing.T) { testSnapshotByKey(t, e, s, keys) })
	t.Run("Download", func(t *testing.T) {
		res := e.do("GET", "/api/boards/b1/snapshot?download=1", s, nil)
		res.want(t, 200, nil)
		want := `attachment; filename="Sprint -12- - Q1.md"; filename*=UTF-8''Sprint%20%E2%80%9C12%E2%80%9D%20%2F%20Q1.md`
		if got := res.header.Get("Content-Disposition"); got != want {
			t.Fatalf("Content-Disposition %q, want %q", got, want)
		}
		if st, err := changelog.ParseBoard(res.body); err != nil || st.Notes[0].Content != "v3" || st.Board.Name != "Sprint “12” / Q1" {
			t.Fatalf("download holds %+v (%v)", st, err)
		}
	})
	t.Run("CurrentFollowsPushes", func(t *testing.T) {
		e.pushOK(s, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n2", Content: "after"}}}})
		res := e.do("GET", "/api/boards/b1/snapshot", s, nil)
		if st, err := changelog.ParseBoard(res.body); err != nil || len(st.Notes) != 2 {
			t.Fatalf("current snapshot after a push: %+v (%v), want both notes", st, err)
		}
	})
	t.Run("Scheduled", func(t *testing.T) { testScheduledSnapshot(t, e, s) })
	for _, q := range []string{"?list=maybe", "?download=yes"} {
		t.Run("Err"+q, func(t *testing.T) {
			e.do("GET", "/api/boards/b1/snapshot"+q, s, nil).wantError(t, 400, strings.Split(q[1:], "=")[0])
		})
	}
}

// testSnapshotListPruned: the list is newest first and keeps the last three of keys.
func testSnapshotListPruned(t *testing.T, e *env, s string, keys []string) {
	var list struct {
		Snapshots []persist.SnapshotInfo `json:"snapshots"`
	}
	e.do("GET", "/api/boards/b1/snapshot?list=true", s, nil).want(t, 200, &list)
	var got []string
	for _, sn := range list.Snapshots {
		got = append(got, sn.Key)
		if sn.Key != "snapshots/"+sn.Timestamp+".md" {
			t.Fatalf("snapshot %+v: timestamp does not match key", sn)
		}
	}
	if want := []string{keys[3], keys[2], keys[1]}; !slices.Equal(got, want) {
		t.Fatalf("snapshots %v, want %v", got, want)
	}
}

// testSnapshotByKey: a kept snapshot is read by its key; a pruned one is gone; a bad key is refused.
func testSnapshotByKey(t *testing.T, e *env, s string, keys []string) {
	res := e.do("GET", "/api/boards/b1/snapshot?key="+url.QueryEscape(keys[1]), s, nil)
	res.want(t, 200, nil)
	if st, err := changelog.ParseBoard(res.body); err != nil || st.Notes[0].Content != "v1" {
		t.Fatalf("snapshot %s holds %+v (%v)", keys[1], st, err)
	}
	e.do("GET", "/api/boards/b1/snapshot?key="+url.QueryEscape(keys[0]), s, nil).wantError(t, 404, "")
	e.do("GET", "/api/boards/b1/snapshot?key=..%2Fsecret", s, nil).wantError(t, 400, "key")
}

// testSnapshotsOfEmptyBoard: a new board's snapshot is its empty state, and its list of snapshots is empty, not null.
func testSnapshotsOfEmptyBoard(t *testing.T, e *env, s string) {
	res := e.do("GET", "/api/boards/b1/snapshot", s, nil)
	res.want(t, 200, nil)
	if res.header.Get("Content-Type") != "text/markdown; charset=utf-8" || res.header.Get("Content-Disposition") != "" {
		t.Fatalf("headers %v", res.header)
	}
	st, err := changelog.ParseBoard(res.body)
	if err != nil || st.Board.ID != "b1" || len(st.Notes) != 0 {
		t.Fatalf("empty board snapshot parses to %+v (%v):\n%s", st, err, res.body)
	}
	var list struct {
		Snapshots []persist.SnapshotInfo `json:"snapshots"`
	}
	e.do("GET", "/api/boards/b1/snapshot?list=true", s, nil).want(t, 200, &list)
	if list.Snapshots == nil || len(list.Snapshots) != 0 {
		t.Fatalf("list of a new board %s, want an empty list", e.do("GET", "/api/boards/b1/snapshot?list=true", s, nil).body)
	}
}

// testScheduledSnapshot: a tick of the scheduler snapshots the changed board, kept within the limit.
func testScheduledSnapshot(t *testing.T, e *env, s string) {
	tick := make(chan time.Time)
	runs := make(chan int, 1)
	sch := changelog.NewScheduler(e.cl, changelog.SchedulerOptions{Tick: tick, Logger: e.log, AfterRun: func(n int, err error) {
		if err != nil {
			t.Errorf("scheduled run: %v", err)
		}
		runs <- n
	}})
	sch.Start(context.Background())
	defer sch.Stop()
	tick <- e.clock.Now()
	if n := <-runs; n != 1 {
		t.Fatalf("scheduled run snapshotted %d boards, want 1", n)
	}
	var list struct {
		Snapshots []persist.SnapshotInfo `json:"snapshots"`
	}
	e.do("GET", "/api/boards/b1/snapshot?list=true", s, nil).want(t, 200, &list)
	if len(list.Snapshots) != 3 || list.Snapshots[0].Timestamp != persist.Stamp(e.clock.Now()) {
		t.Fatalf("after the scheduled run: %+v, want the new one first of 3", list.Snapshots)
	}
}

func TestChangelogSurvivesRestart(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	keys := e.appendLog(s, "b1", clEntry{NoteID: "n1", Action: "create_note", Content: noteSnapshot(board.Note{ID: "n1", Content: "durable"})})
	e.restart()
	// Sessions are stored too: the same cookie still works.
	if got := e.list(s, "b1", ""); len(got) != 1 || got[0].Key != keys[0] {
		t.Fatalf("after restart the log lists %v, want %s", got, keys[0])
	}
	res := e.do("GET", "/api/boards/b1/log/"+keys[0], s, nil)
	res.want(t, 200, nil)
	if n, err := changelog.ParseNote(res.body); err != nil || n.Content != "durable" {
		t.Fatalf("after restart the entry is %q (%v)", res.body, err)
	}
	more := e.appendLog(s, "b1", clEntry{NoteID: "n1", Action: "update_note", Content: noteSnapshot(board.Note{ID: "n1"})})
	if more[0] <= keys[0] {
		t.Fatalf("key after restart %s does not sort after %s", more[0], keys[0])
	}
}
