package transport_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/transport"
)

func TestPullAndPushShapes(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")

	status, body := e.push(s, "b1", board.Push{
		ClientVersion: 0,
		Board:         &board.BoardPatch{Name: "Roadmap", UpdatedAt: "2026-11-22T10:00:00Z"},
		Notes:         board.NoteChanges{Upserted: []board.Note{{ID: "n1", Title: "Hi", Content: "**bold**", X: 1.5, Y: -2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T10:00:00Z"}}},
		TrackerItems:  board.ItemChanges{Upserted: []board.TrackerItem{{ID: "i1", Key: "CB-1", Type: "story", Summary: "Do it", UpdatedAt: "2026-11-22T10:00:00Z"}}},
	})
	if status != 200 || version(t, body) != 1 {
		t.Fatalf("push: %d %v, want 200 {serverVersion: 1}", status, body)
	}

	t.Run("Full", func(t *testing.T) { testFullPullShape(t, e, s) })
	t.Run("NoChange", func(t *testing.T) {
		r := e.do("GET", "/api/boards/b1/sync?since=1", s, nil)
		if r.status != 200 || strings.TrimSpace(string(r.body)) != `{"serverVersion":1}` {
			t.Fatalf("pull at the current version: %d %s, want exactly {\"serverVersion\":1}", r.status, r.body)
		}
	})
	t.Run("Deletions", func(t *testing.T) {
		status, body := e.push(s, "b1", board.Push{ClientVersion: 1, Notes: board.NoteChanges{Deleted: []string{"n1"}}, TrackerItems: board.ItemChanges{Deleted: []string{"i1"}}})
		if status != 200 || version(t, body) != 2 {
			t.Fatalf("delete push: %d %v", status, body)
		}
		ch := e.pull(s, "b1", 1)
		if !slices.Equal(ch.DeletedNoteIDs, []string{"n1"}) || !slices.Equal(ch.DeletedTrackerItemIDs, []string{"i1"}) || len(ch.Notes) != 0 || ch.ServerVersion != 2 {
			t.Fatalf("pull since 1: %+v, want n1 and i1 deleted at 2", ch)
		}
	})
	t.Run("RenameShowsInList", func(t *testing.T) {
		r := e.do("GET", "/api/boards", s, nil)
		if !strings.Contains(string(r.body), `"name":"Roadmap"`) {
			t.Fatalf("GET /api/boards = %s, want the pushed name", r.body)
		}
	})
}

// testFullPullShape: a full pull has exactly the spec's keys, the board header and the pushed note's fields.
func testFullPullShape(t *testing.T, e *env, s string) {
	r := e.do("GET", "/api/boards/b1/sync?since=0", s, nil)
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil || r.status != 200 {
		t.Fatalf("pull: %d %s", r.status, r.body)
	}
	want := []string{"board", "deletedNoteIds", "deletedTrackerItemIds", "notes", "serverVersion", "trackerItems"}
	if got := keys(body); !slices.Equal(got, want) {
		t.Fatalf("pull keys=%v, want %v", got, want)
	}
	b := body["board"].(map[string]any)
	if got := keys(b); !slices.Equal(got, []string{"id", "name", "updatedAt", "version"}) || b["name"] != "Roadmap" || b["version"] != 1.0 {
		t.Fatalf("board=%v, want id, name Roadmap, version 1, updatedAt", b)
	}
	n := body["notes"].([]any)[0].(map[string]any)
	for k, want := range map[string]any{"id": "n1", "title": "Hi", "content": "**bold**", "x": 1.5, "y": -2.0, "color": "yellow", "type": "sticky", "version": 1.0, "deletedAt": nil, "updatedAt": "2026-11-22T10:00:00Z"} {
		if v, ok := n[k]; !ok || v != want {
			t.Fatalf("note %s=%v (present %v), want %v", k, v, ok, want)
		}
	}
	if ids := body["deletedNoteIds"].([]any); len(ids) != 0 {
		t.Fatalf("deletedNoteIds=%v, want []", ids)
	}
}

// TestPullEmptyBoardFullSync: since=0 is a full sync even on a claimed
// board nothing was pushed to: the whole shape, the board header with
// version 0 and its claim time as updatedAt, and [] lists, not null.
func TestPullEmptyBoardFullSync(t *testing.T) {
	claimed := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	e := newEnv(t, withClock(claimed))
	s := e.claim("owner@example.com", "b1")
	for _, name := range []string{"First", "Again"} {
		t.Run(name, func(t *testing.T) {
			r := e.do("GET", "/api/boards/b1/sync?since=0", s, nil)
			want := map[string]any{
				"board":                 map[string]any{"id": "b1", "name": "", "version": 0.0, "updatedAt": claimed.Format(time.RFC3339Nano)},
				"notes":                 []any{},
				"deletedNoteIds":        []any{},
				"trackerItems":          []any{},
				"deletedTrackerItemIds": []any{},
				"serverVersion":         0.0,
			}
			r.wantExactObject(t, 200, want)
		})
	}
}

func TestPullSinceValidation(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	for _, tc := range []struct{ name, query string }{
		{"Missing", ""},
		{"Empty", "?since="},
		{"NotANumber", "?since=abc"},
		{"Negative", "?since=-1"},
		{"Fraction", "?since=1.5"},
		{"Overflow", "?since=99999999999999999999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", "/api/boards/b1/sync"+tc.query, s, nil)
			if r.status != 400 || !strings.Contains(string(r.body), `"field":"since"`) {
				t.Fatalf("%d %s, want 400 naming since", r.status, r.body)
			}
		})
	}
}

func TestPushLimits(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	notes := func(n int) []board.Note {
		out := make([]board.Note, n)
		for i := range out {
			out[i] = board.Note{ID: fmt.Sprintf("n%d", i)}
		}
		return out
	}
	items := func(n int) []board.TrackerItem {
		out := make([]board.TrackerItem, n)
		for i := range out {
			out[i] = board.TrackerItem{ID: fmt.Sprintf("i%d", i)}
		}
		return out
	}
	// Four-byte characters: the limit counts characters, not bytes.
	emoji := func(n int) string { return strings.Repeat("😀", n) }
	version := int64(0)
	for _, tc := range []struct {
		name  string
		push  board.Push
		field string // "" = accepted
	}{
		{"500Notes", board.Push{Notes: board.NoteChanges{Upserted: notes(500)}}, ""},
		{"501Notes", board.Push{Notes: board.NoteChanges{Upserted: notes(501)}}, "notes.upserted"},
		{"500Items", board.Push{TrackerItems: board.ItemChanges{Upserted: items(500)}}, ""},
		{"501Items", board.Push{TrackerItems: board.ItemChanges{Upserted: items(501)}}, "trackerItems.upserted"},
		{"Content30000", notePush(board.Note{ID: "big", Content: emoji(30000)}), ""},
		{"Content30001", notePush(board.Note{ID: "ok"}, board.Note{ID: "big", Content: emoji(30001)}), "notes.upserted[1].content"},
		{"EmptyID", notePush(board.Note{ID: ""}), "notes.upserted[0].id"},
		{"LongID", notePush(board.Note{ID: strings.Repeat("x", 129)}), "notes.upserted[0].id"},
		{"BadTimestamp", notePush(board.Note{ID: "a", UpdatedAt: "yesterday"}), "notes.upserted[0].updatedAt"},
		{"EmptyDeletedID", board.Push{TrackerItems: board.ItemChanges{Deleted: []string{"a", ""}}}, "trackerItems.deleted[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.push(s, "b1", tc.push)
			if tc.field == "" {
				if status != 200 {
					t.Fatalf("%d %v, want 200", status, body)
				}
				version++
				return
			}
			if status != 400 || body["field"] != tc.field || body["error"] == "" {
				t.Fatalf("%d %v, want 400 naming %s", status, body, tc.field)
			}
			if v := e.pull(s, "b1", 0).ServerVersion; v != version {
				t.Fatalf("version %d after a rejected push, want %d (nothing applied)", v, version)
			}
		})
	}
}

func TestPushDecodeErrors(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	for _, tc := range []struct{ name, body, field string }{
		{"StringForNumber", `{"notes":{"upserted":[{"id":"a","x":"left"}]}}`, "notes.upserted[0].x"},
		{"NumberForString", `{"notes":{"upserted":[{"id":5}]}}`, "notes.upserted[0].id"},
		{"StringClientVersion", `{"clientVersion":"3"}`, "clientVersion"},
		{"FractionClientVersion", `{"clientVersion":1.5}`, "clientVersion"},
		{"NegativeClientVersion", `{"clientVersion":-1}`, "clientVersion"},
		{"ExtraFieldShadowingByCase", `{"notes":{"upserted":[{"id":"a","Color":"red"}]}}`, "notes.upserted[0].Color"},
		{"DuplicateKey", `{"notes":{"upserted":[{"id":"a","id":"b"}]}}`, "notes.upserted[0].id"},
		{"ObjectForArray", `{"notes":{"deleted":{"a":1}}}`, "notes.deleted"},
		{"NullNotes", `{"notes":null}`, "notes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.push(s, "b1", tc.body)
			if status != 400 || body["field"] != tc.field {
				t.Fatalf("%d %v, want 400 naming %s", status, body, tc.field)
			}
		})
	}
	if v := e.pull(s, "b1", 0).ServerVersion; v != 0 {
		t.Fatalf("version %d after only rejected pushes, want 0", v)
	}
}

// TestLargestPushIsAccepted sends the spec's largest push: 500 notes of
// 30,000 four-byte characters (about 60 MB).
func TestLargestPushIsAccepted(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a 60 MB push takes minutes under the race detector; run without -race")
	}
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	content := strings.Repeat("😀", board.MaxNoteContent)
	p := board.Push{Notes: board.NoteChanges{Upserted: make([]board.Note, board.MaxUpsertedNotes)}}
	for i := range p.Notes.Upserted {
		p.Notes.Upserted[i] = board.Note{ID: fmt.Sprintf("n%d", i), Content: content}
	}
	if status, body := e.push(s, "b1", p); status != 200 || version(t, body) != 1 {
		t.Fatalf("%d %v, want 200 at version 1", status, body)
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	key := http.Header{"Idempotency-Key": {"0b4c1a9e-retry-me"}}
	r := e.do("POST", "/api/boards/b1/sync", s, notePush(board.Note{ID: "a", Content: "first"}), key)
	if r.status != 200 || strings.TrimSpace(string(r.body)) != `{"serverVersion":1}` || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/api/boards/b1/sync", s, notePush(board.Note{ID: "a", Content: "second"}), key)
	if r.status != 200 || strings.TrimSpace(string(r.body)) != `{"serverVersion":1}` || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s replayed=%q, want the original version, replayed", r.status, r.body, r.header.Get("Idempotent-Replayed"))
	}
	if ch := e.pull(s, "b1", 0); ch.ServerVersion != 1 || ch.Notes[0].Content != "first" {
		t.Fatalf("after retry: %+v, want version 1 with the first content", ch)
	}
	for _, bad := range []string{strings.Repeat("k", 129), "has space"} {
		status, body := e.push(s, "b1", notePush(board.Note{ID: "a"}), http.Header{"Idempotency-Key": {bad}})
		if status != 400 || body["field"] != "Idempotency-Key" {
			t.Fatalf("key %q: %d %v, want 400 naming Idempotency-Key", bad, status, body)
		}
	}
}

func TestViewerCanPullButNotPush(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	viewer := e.invite(owner, "b1", "viewer@example.com", "free")
	editor := e.invite(owner, "b1", "editor@example.com", "pro")
	if status, body := e.push(owner, "b1", notePush(board.Note{ID: "a"})); status != 200 {
		t.Fatalf("owner push: %d %v", status, body)
	}
	if status, body := e.push(viewer, "b1", notePush(board.Note{ID: "b"})); status != 403 {
		t.Fatalf("viewer push: %d %v, want 403", status, body)
	}
	// 403 comes before the body is looked at.
	if status, _ := e.push(viewer, "b1", `{"not":"a push"}`); status != 403 {
		t.Fatalf("viewer push of garbage: %d, want 403", status)
	}
	if ch := e.pull(viewer, "b1", 0); len(ch.Notes) != 1 || ch.ServerVersion != 1 {
		t.Fatalf("viewer pull: %+v, want the owner's note", ch)
	}
	if status, body := e.push(editor, "b1", notePush(board.Note{ID: "c"})); status != 200 || version(t, body) != 2 {
		t.Fatalf("editor push: %d %v, want 200 at 2", status, body)
	}
	stranger := e.login("stranger@example.com")
	if r := e.do("GET", "/api/boards/b1/sync?since=0", stranger, nil); r.status != 403 {
		t.Fatalf("stranger pull: %d, want 403", r.status)
	}
	if r := e.do("GET", "/api/boards/b1/sync?since=0", "", nil); r.status != 401 {
		t.Fatalf("pull without a session: %d, want 401", r.status)
	}
	if r := e.do("GET", "/api/boards/unclaimed/sync?since=0", owner, nil); r.status != 404 {
		t.Fatalf("pull of an unclaimed board: %d, want 404", r.status)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	for i := range 3 {
		if status, _ := e.push(s, "b1", notePush(board.Note{ID: fmt.Sprintf("n%d", i), Content: "é"})); status != 200 {
			t.Fatal(status)
		}
	}
	e.push(s, "b1", board.Push{Notes: board.NoteChanges{Deleted: []string{"n0"}}})
	before := e.pull(s, "b1", 0)

	e.restart()
	after := e.pull(s, "b1", 0) // the session survives too
	if b, a := mustJSON(t, before), mustJSON(t, after); b != a {
		t.Fatalf("state changed across restart:\nbefore %s\nafter  %s", b, a)
	}
	if ch := e.pull(s, "b1", 3); !slices.Equal(ch.DeletedNoteIDs, []string{"n0"}) {
		t.Fatalf("deletion lost across restart: %+v", ch)
	}
	if status, body := e.push(s, "b1", notePush(board.Note{ID: "n9"})); status != 200 || version(t, body) != 5 {
		t.Fatalf("push after restart: %d %v, want version 5", status, body)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// BenchmarkPullNoChangeHTTP is a whole up-to-date pull over HTTP: session,
// board guard, room, JSON answer.
func BenchmarkPullNoChangeHTTP(b *testing.B) {
	// Logs are discarded so that the numbers measure the request, not the
	// test's log buffer.
	e := newEnv(b, withLogger(slog.New(slog.DiscardHandler)))
	s := e.claim("owner@example.com", "b1")
	e.push(s, "b1", notePush(board.Note{ID: "a"}))
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/boards/b1/sync?since=1", nil)
	req.AddCookie(&http.Cookie{Name: transport.SessionCookie, Value: s})
	client := e.srv.Client()
	for b.Loop() {
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatal(res.Status)
		}
	}
}
