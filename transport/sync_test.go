package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/auth/authtest"
	"corkboard/board"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/transport"
)

// publicURL is the configured public origin in these tests; the test
// server itself listens elsewhere (127.0.0.1:port).
const publicURL = "https://board.example.com"

// env is a whole server: real bbolt in a temp folder, real auth mailing
// codes to an in-process SMTP sink, the hub, and the HTTP API on a real
// listener.
type env struct {
	tb   testing.TB
	dir  string
	sink *authtest.Sink
	log  *slog.Logger

	db   *persist.DB
	auth *auth.Service
	hub  *hub.Hub
	srv  *httptest.Server
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := &env{tb: tb, dir: tb.TempDir(), sink: authtest.NewSink(tb), log: slog.New(slog.DiscardHandler)}
	e.start()
	tb.Cleanup(e.stop)
	return e
}

func (e *env) start() {
	e.tb.Helper()
	db, err := persist.Open(e.dir)
	if err != nil {
		e.tb.Fatal(err)
	}
	mailer, err := auth.NewMailer(e.sink.URL(), "", "", e.log)
	if err != nil {
		e.tb.Fatal(err)
	}
	lots := auth.Rate{Count: 10000, Window: time.Minute}
	e.db = db
	e.auth = auth.New(db, mailer, auth.Config{EmailRate: lots, IPRate: lots, VerifyIPRate: lots}, e.log)
	e.auth.Start(context.Background())
	e.hub = hub.New(db, hub.Options{SweepEvery: -1, Logger: e.log})
	e.srv = httptest.NewServer(transport.New(
		transport.Config{PublicURL: publicURL, DefaultPlan: "free"},
		transport.Deps{DB: db, Auth: e.auth, Hub: e.hub},
		e.log,
	))
}

// stop shuts down in cmd's order: HTTP, hub (sockets), auth, storage.
func (e *env) stop() {
	if e.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.srv.Close()
	if err := e.hub.Close(ctx); err != nil {
		e.tb.Errorf("hub Close: %v", err)
	}
	e.auth.Close(ctx)
	e.db.Close()
	e.srv = nil
}

// restart stops everything and opens the same data folder again.
func (e *env) restart() {
	e.stop()
	e.start()
}

// login logs email in through the real endpoints (the code comes by SMTP)
// and returns the session cookie's value.
func (e *env) login(email string) string {
	e.tb.Helper()
	if res, body := e.do("POST", "/api/auth/send-otp", "", map[string]string{"email": email}, nil); res.StatusCode != 200 {
		e.tb.Fatalf("send-otp: %d %s", res.StatusCode, body)
	}
	code := e.sink.WaitCode(e.tb, email)
	res, body := e.do("POST", "/api/auth/verify-otp", "", map[string]string{"email": email, "code": code}, nil)
	if res.StatusCode != 200 {
		e.tb.Fatalf("verify-otp: %d %s", res.StatusCode, body)
	}
	for _, c := range res.Cookies() {
		if c.Name == transport.SessionCookie && c.Value != "" {
			return c.Value
		}
	}
	e.tb.Fatal("verify-otp set no session cookie")
	return ""
}

// do sends a request with the session cookie; body is JSON-encoded unless
// it is already a []byte or string.
func (e *env) do(method, path, session string, body any, header http.Header) (*http.Response, []byte) {
	e.tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			e.tb.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.tb.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: transport.SessionCookie, Value: session})
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		e.tb.Fatal(err)
	}
	return res, out
}

// claim logs owner in and claims board id.
func (e *env) claim(owner, id string) string {
	e.tb.Helper()
	s := e.login(owner)
	if res, body := e.do("POST", "/api/boards/"+id+"/access", s, nil, nil); res.StatusCode != 200 {
		e.tb.Fatalf("claim: %d %s", res.StatusCode, body)
	}
	return s
}

// invite adds email to the board, on plan (which decides canEdit), and
// logs it in.
func (e *env) invite(ownerSession, id, email, plan string) string {
	e.tb.Helper()
	if _, err := e.db.EnsureUser(context.Background(), email, plan); err != nil {
		e.tb.Fatal(err)
	}
	if res, body := e.do("POST", "/api/boards/"+id+"/invite", ownerSession, map[string]string{"email": email}, nil); res.StatusCode != 200 {
		e.tb.Fatalf("invite: %d %s", res.StatusCode, body)
	}
	return e.login(email)
}

func (e *env) push(session, id string, p any, header http.Header) (int, map[string]any) {
	e.tb.Helper()
	res, body := e.do("POST", "/api/boards/"+id+"/sync", session, p, header)
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		e.tb.Fatalf("push answer %q: %v", body, err)
	}
	return res.StatusCode, out
}

func (e *env) pull(session, id string, since int64) *board.Changes {
	e.tb.Helper()
	res, body := e.do("GET", fmt.Sprintf("/api/boards/%s/sync?since=%d", id, since), session, nil, nil)
	if res.StatusCode != 200 {
		e.tb.Fatalf("pull: %d %s", res.StatusCode, body)
	}
	var ch board.Changes
	if err := json.Unmarshal(body, &ch); err != nil {
		e.tb.Fatal(err)
	}
	return &ch
}

func version(tb testing.TB, body map[string]any) int64 {
	tb.Helper()
	v, ok := body["serverVersion"].(float64)
	if !ok || len(body) != 1 {
		tb.Fatalf("answer %v, want exactly {serverVersion}", body)
	}
	return int64(v)
}

func keys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func notePush(notes ...board.Note) board.Push {
	return board.Push{Notes: board.NoteChanges{Upserted: notes}}
}

func TestPullAndPushShapes(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")

	status, body := e.push(s, "b1", board.Push{
		ClientVersion: 0,
		Board:         &board.BoardPatch{Name: "Roadmap", UpdatedAt: "2026-11-22T10:00:00Z"},
		Notes:         board.NoteChanges{Upserted: []board.Note{{ID: "n1", Title: "Hi", Content: "**bold**", X: 1.5, Y: -2, Color: "yellow", Type: "sticky", UpdatedAt: "2026-11-22T10:00:00Z"}}},
		TrackerItems:  board.ItemChanges{Upserted: []board.TrackerItem{{ID: "i1", Key: "CB-1", Type: "story", Summary: "Do it", UpdatedAt: "2026-11-22T10:00:00Z"}}},
	}, nil)
	if status != 200 || version(t, body) != 1 {
		t.Fatalf("push: %d %v, want 200 {serverVersion: 1}", status, body)
	}

	t.Run("Full", func(t *testing.T) {
		res, raw := e.do("GET", "/api/boards/b1/sync?since=0", s, nil, nil)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil || res.StatusCode != 200 {
			t.Fatalf("pull: %d %s", res.StatusCode, raw)
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
	})
	t.Run("NoChange", func(t *testing.T) {
		res, raw := e.do("GET", "/api/boards/b1/sync?since=1", s, nil, nil)
		if res.StatusCode != 200 || strings.TrimSpace(string(raw)) != `{"serverVersion":1}` {
			t.Fatalf("pull at the current version: %d %s, want exactly {\"serverVersion\":1}", res.StatusCode, raw)
		}
	})
	t.Run("Deletions", func(t *testing.T) {
		status, body := e.push(s, "b1", board.Push{ClientVersion: 1, Notes: board.NoteChanges{Deleted: []string{"n1"}}, TrackerItems: board.ItemChanges{Deleted: []string{"i1"}}}, nil)
		if status != 200 || version(t, body) != 2 {
			t.Fatalf("delete push: %d %v", status, body)
		}
		ch := e.pull(s, "b1", 1)
		if !slices.Equal(ch.DeletedNoteIDs, []string{"n1"}) || !slices.Equal(ch.DeletedTrackerItemIDs, []string{"i1"}) || len(ch.Notes) != 0 || ch.ServerVersion != 2 {
			t.Fatalf("pull since 1: %+v, want n1 and i1 deleted at 2", ch)
		}
	})
	t.Run("RenameShowsInList", func(t *testing.T) {
		_, raw := e.do("GET", "/api/boards", s, nil, nil)
		if !strings.Contains(string(raw), `"name":"Roadmap"`) {
			t.Fatalf("GET /api/boards = %s, want the pushed name", raw)
		}
	})
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
			res, raw := e.do("GET", "/api/boards/b1/sync"+tc.query, s, nil, nil)
			if res.StatusCode != 400 || !strings.Contains(string(raw), `"field":"since"`) {
				t.Fatalf("%d %s, want 400 naming since", res.StatusCode, raw)
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
			status, body := e.push(s, "b1", tc.push, nil)
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
		{"UnknownField", `{"notes":{"upserted":[{"id":"a","colour":"red"}]}}`, "notes.upserted[0].colour"},
		{"DuplicateKey", `{"notes":{"upserted":[{"id":"a","id":"b"}]}}`, "notes.upserted[0].id"},
		{"ObjectForArray", `{"notes":{"deleted":{"a":1}}}`, "notes.deleted"},
		{"NullNotes", `{"notes":null}`, "notes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.push(s, "b1", tc.body, nil)
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
	if status, body := e.push(s, "b1", p, nil); status != 200 || version(t, body) != 1 {
		t.Fatalf("%d %v, want 200 at version 1", status, body)
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	key := http.Header{"Idempotency-Key": {"0b4c1a9e-retry-me"}}
	res, raw := e.do("POST", "/api/boards/b1/sync", s, notePush(board.Note{ID: "a", Content: "first"}), key)
	if res.StatusCode != 200 || strings.TrimSpace(string(raw)) != `{"serverVersion":1}` || res.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", res.StatusCode, raw)
	}
	res, raw = e.do("POST", "/api/boards/b1/sync", s, notePush(board.Note{ID: "a", Content: "second"}), key)
	if res.StatusCode != 200 || strings.TrimSpace(string(raw)) != `{"serverVersion":1}` || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s replayed=%q, want the original version, replayed", res.StatusCode, raw, res.Header.Get("Idempotent-Replayed"))
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
	if status, body := e.push(owner, "b1", notePush(board.Note{ID: "a"}), nil); status != 200 {
		t.Fatalf("owner push: %d %v", status, body)
	}
	if status, body := e.push(viewer, "b1", notePush(board.Note{ID: "b"}), nil); status != 403 {
		t.Fatalf("viewer push: %d %v, want 403", status, body)
	}
	// 403 comes before the body is looked at.
	if status, _ := e.push(viewer, "b1", `{"not":"a push"}`, nil); status != 403 {
		t.Fatalf("viewer push of garbage: %d, want 403", status)
	}
	if ch := e.pull(viewer, "b1", 0); len(ch.Notes) != 1 || ch.ServerVersion != 1 {
		t.Fatalf("viewer pull: %+v, want the owner's note", ch)
	}
	if status, body := e.push(editor, "b1", notePush(board.Note{ID: "c"}), nil); status != 200 || version(t, body) != 2 {
		t.Fatalf("editor push: %d %v, want 200 at 2", status, body)
	}
	stranger := e.login("stranger@example.com")
	if res, _ := e.do("GET", "/api/boards/b1/sync?since=0", stranger, nil, nil); res.StatusCode != 403 {
		t.Fatalf("stranger pull: %d, want 403", res.StatusCode)
	}
	if res, _ := e.do("GET", "/api/boards/b1/sync?since=0", "", nil, nil); res.StatusCode != 401 {
		t.Fatalf("pull without a session: %d, want 401", res.StatusCode)
	}
	if res, _ := e.do("GET", "/api/boards/unclaimed/sync?since=0", owner, nil, nil); res.StatusCode != 404 {
		t.Fatalf("pull of an unclaimed board: %d, want 404", res.StatusCode)
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	for i := range 3 {
		if status, _ := e.push(s, "b1", notePush(board.Note{ID: fmt.Sprintf("n%d", i), Content: "é"}), nil); status != 200 {
			t.Fatal(status)
		}
	}
	e.push(s, "b1", board.Push{Notes: board.NoteChanges{Deleted: []string{"n0"}}}, nil)
	before := e.pull(s, "b1", 0)

	e.restart()
	after := e.pull(s, "b1", 0) // the session survives too
	if b, a := mustJSON(t, before), mustJSON(t, after); b != a {
		t.Fatalf("state changed across restart:\nbefore %s\nafter  %s", b, a)
	}
	if ch := e.pull(s, "b1", 3); !slices.Equal(ch.DeletedNoteIDs, []string{"n0"}) {
		t.Fatalf("deletion lost across restart: %+v", ch)
	}
	if status, body := e.push(s, "b1", notePush(board.Note{ID: "n9"}), nil); status != 200 || version(t, body) != 5 {
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
	e := newEnv(b)
	s := e.claim("owner@example.com", "b1")
	e.push(s, "b1", notePush(board.Note{ID: "a"}), nil)
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
