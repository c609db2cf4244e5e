package transport_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/access"
	"corkboard/auth"
	"corkboard/board"
	"corkboard/transport"
	"corkboard/transport/livewire"
)

// linkHeader is the header a link's requests carry its token in.
func linkHeader(token string) http.Header {
	return http.Header{transport.LinkHeader: {token}}
}

// createLink makes a read-only link to board id as its owner and returns
// the creation's answer.
func (e *env) createLink(owner, id string, hours int) map[string]any {
	e.tb.Helper()
	return e.post("/api/boards/"+id+"/links", owner, map[string]any{"expiresInHours": hours}).wantObject(e.tb, http.StatusCreated)
}

// linkToken makes a link and returns its token and id.
func (e *env) linkToken(owner, id string) (token, linkID string) {
	e.tb.Helper()
	l := e.createLink(owner, id, 24)
	return l["token"].(string), l["id"].(string)
}

// dialLink opens the live channel with a link and no session.
func (e *env) dialLink(token, id string) (*websocket.Conn, *http.Response, error) {
	e.tb.Helper()
	return e.dial("", id, "?link="+token, "")
}

func TestLinkCreateListRevoke(t *testing.T) {
	e := newEnv(t, withClock(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)))
	owner := e.claim("owner@example.com", "b1")
	if got := e.do("GET", "/api/boards/b1/links", owner, nil).wantObject(t, 200); fmt.Sprint(got["links"]) != "[]" {
		t.Fatalf("links of a fresh board = %v, want []", got["links"])
	}

	res := e.post("/api/boards/b1/links", owner, map[string]any{"expiresInHours": 48})
	l := res.wantObject(t, http.StatusCreated)
	if got := strings.Join(keys(l), ","); got != "createdAt,expiresAt,id,token,url" {
		t.Fatalf("creation's fields = %s", got)
	}
	token := l["token"].(string)
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) != 32 {
		t.Fatalf("token %q is not 32 bytes of base64url", token)
	}
	if l["url"] != publicURL+"/l/"+token {
		t.Fatalf("url = %v, want %s/l/<token>", l["url"], publicURL)
	}
	if l["createdAt"] != "2026-11-27T08:00:00Z" || l["expiresAt"] != "2026-11-29T08:00:00Z" {
		t.Fatalf("createdAt %v, expiresAt %v: want now and 48 hours on", l["createdAt"], l["expiresAt"])
	}
	if got := res.header.Get("Cache-Control"); got != "no-store" {
		t.Fatalf("the answer with the token: Cache-Control %q, want no-store", got)
	}

	// Stored is the SHA-256 of the token's bytes, never the token.
	sum := sha256.Sum256(raw)
	stored, err := e.db.FindLink(context.Background(), sum[:], e.clock.Now())
	if err != nil || stored.ID != l["id"] || stored.BoardID != "b1" || stored.CreatedBy != "owner@example.com" {
		t.Fatalf("stored link by the token's hash = %+v, %v", stored, err)
	}
	if strings.Contains(string(stored.Hash), token) {
		t.Fatal("the token is stored")
	}

	list := e.do("GET", "/api/boards/b1/links", owner, nil).wantObject(t, 200)["links"].([]any)
	if len(list) != 1 {
		t.Fatalf("links = %v, want one", list)
	}
	item := list[0].(map[string]any)
	if got := strings.Join(keys(item), ","); got != "createdAt,createdBy,expiresAt,id" {
		t.Fatalf("a listed link's fields = %s (never the token)", got)
	}
	if item["id"] != l["id"] || item["createdBy"] != "owner@example.com" || item["expiresAt"] != l["expiresAt"] {
		t.Fatalf("listed link = %v, want %v", item, l)
	}

	e.do("DELETE", "/api/boards/b1/links/"+l["id"].(string), owner, nil).wantStatus(t, http.StatusNoContent)
	e.do("DELETE", "/api/boards/b1/links/"+l["id"].(string), owner, nil).wantError(t, http.StatusNotFound, "")
	if got := e.do("GET", "/api/boards/b1/links", owner, nil).wantObject(t, 200); fmt.Sprint(got["links"]) != "[]" {
		t.Fatalf("links after revoking = %v", got["links"])
	}
	e.do("GET", "/api/link", "", nil, linkHeader(token)).wantError(t, http.StatusUnauthorized, "")
}

func TestLinkCreateRefusals(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	for _, tc := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"Min", `{"expiresInHours":1}`, 201, ""},
		{"Max", `{"expiresInHours":8760}`, 201, ""},
		{"Zero", `{"expiresInHours":0}`, 400, "expiresInHours"},
		{"Negative", `{"expiresInHours":-1}`, 400, "expiresInHours"},
		{"OverMax", `{"expiresInHours":8761}`, 400, "expiresInHours"},
		{"Missing", `{}`, 400, "expiresInHours"},
		{"NoExpiry", `{"expiresInHours":null}`, 400, "expiresInHours"},
		{"Fraction", `{"expiresInHours":1.5}`, 400, "expiresInHours"},
		{"String", `{"expiresInHours":"24"}`, 400, "expiresInHours"},
		{"UnknownField", `{"expiresInHours":24,"canEdit":true}`, 400, "canEdit"},
		{"NotJSON", `expires`, 400, "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.post("/api/boards/b1/links", owner, tc.body)
			if tc.status == 201 {
				res.wantStatus(t, 201)
				return
			}
			res.wantError(t, tc.status, tc.field)
		})
	}
	// Nothing refused was made.
	if n := len(e.do("GET", "/api/boards/b1/links", owner, nil).wantObject(t, 200)["links"].([]any)); n != 2 {
		t.Fatalf("%d links, want the 2 accepted", n)
	}
	e.do("DELETE", "/api/boards/b1/links/"+strings.Repeat("x", 65), owner, nil).wantError(t, 400, "linkId")
	e.do("DELETE", "/api/boards/b1/links/"+strings.Repeat("x", 64), owner, nil).wantError(t, 404, "")
}

func TestLinkCapPerBoard(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	e.claimAs(owner, "b2")
	var last string
	for range access.MaxLinksPerBoard {
		last = e.createLink(owner, "b1", 1)["id"].(string)
	}
	e.post("/api/boards/b1/links", owner, map[string]any{"expiresInHours": 1}).wantError(t, http.StatusConflict, "")
	e.createLink(owner, "b2", 1) // the cap is per board
	e.do("DELETE", "/api/boards/b1/links/"+last, owner, nil).wantStatus(t, 204)
	e.createLink(owner, "b1", 1)
}

func TestLinkRoutesAreTheOwners(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	editor := e.invite(owner, "b1", "editor@example.com", "pro")
	stranger := e.login("stranger@example.com")
	token, id := e.linkToken(owner, "b1")
	for _, who := range []struct {
		name, session string
		header        http.Header
		status        int
	}{
		{"Editor", editor, nil, 403},
		{"Stranger", stranger, nil, 403},
		{"NoSession", "", nil, 401},
		{"LinkHolder", "", linkHeader(token), 403},
		// A link in the request makes it the link's, whatever its cookie.
		{"OwnerWithALink", owner, linkHeader(token), 403},
	} {
		t.Run(who.name, func(t *testing.T) {
			var hs []http.Header
			if who.header != nil {
				hs = append(hs, who.header)
			}
			e.do("GET", "/api/boards/b1/links", who.session, nil, hs...).wantError(t, who.status, "")
			e.post("/api/boards/b1/links", who.session, map[string]any{"expiresInHours": 1}, hs...).wantError(t, who.status, "")
			e.do("DELETE", "/api/boards/b1/links/"+id, who.session, nil, hs...).wantError(t, who.status, "")
		})
	}
	if n := len(e.do("GET", "/api/boards/b1/links", owner, nil).wantObject(t, 200)["links"].([]any)); n != 1 {
		t.Fatalf("%d links after the refusals, want 1", n)
	}
	// Through another board of theirs, the owner cannot revoke it either.
	e.claimAs(owner, "b2")
	e.do("DELETE", "/api/boards/b2/links/"+id, owner, nil).wantError(t, 404, "")
	e.do("GET", "/api/link", "", nil, linkHeader(token)).wantStatus(t, 200)
	// GET /api/link is a link's question: a session alone is 400, nothing 401.
	e.do("GET", "/api/link", owner, nil).wantError(t, 400, transport.LinkHeader)
	e.do("GET", "/api/link", "", nil).wantError(t, 401, "")
}

func TestLinkViewsAndNothingElse(t *testing.T) {
	e := newEnv(t, withAI())
	owner := e.claim("owner@example.com", "b1")
	e.claimAs(owner, "b2")
	e.pushOK(owner, "b1", notePush(board.Note{ID: "a", Content: "hello"}))
	token, _ := e.linkToken(owner, "b1")
	h := linkHeader(token)

	info := e.do("GET", "/api/link", "", nil, h).wantObject(t, 200)
	if info["boardId"] != "b1" || info["canEdit"] != false || info["expiresAt"] == nil {
		t.Fatalf("GET /api/link = %v", info)
	}
	pull := e.do("GET", "/api/boards/b1/sync?since=0", "", nil, h)
	pull.wantStatus(t, 200)
	if !strings.Contains(string(pull.body), `"hello"`) {
		t.Fatalf("pull with a link = %s, want the board's notes", pull.body)
	}
	if got := pull.header.Get("Referrer-Policy"); got != "no-referrer" {
		t.Fatalf("pull with a link: Referrer-Policy %q", got)
	}

	for _, tc := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"POST", "/api/boards/b1/sync", notePush(board.Note{ID: "x"}), 403},
		{"POST", "/api/canvas/chat", map[string]any{"boardId": "b1", "messages": []any{}}, 403},
		{"POST", "/api/canvas/notes/analyze", map[string]any{"boardId": "b1"}, 403},
		{"GET", "/api/boards/b1/log", nil, 403},
		{"GET", "/api/boards/b1/snapshot", nil, 403},
		{"GET", "/api/boards/b1/invite", nil, 403},
		{"POST", "/api/boards/b1/invite", map[string]string{"email": "x@example.com"}, 403},
		{"PATCH", "/api/boards/b1/access", map[string]any{"phases": map[string]any{"phases": []any{}}}, 403},
		{"POST", "/api/boards/b1/timer", map[string]any{"action": "stop"}, 403},
		{"GET", "/api/boards/b1/canvas", nil, 403},
		{"GET", "/api/boards", nil, 403},
		{"GET", "/api/me/usage", nil, 403},
		// Another board, even one of the same owner.
		{"GET", "/api/boards/b2/sync?since=0", nil, 403},
		{"GET", "/api/boards/b1/sync?since=0&wait=0", nil, 200},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			res := e.do(tc.method, tc.path, "", tc.body, h)
			if tc.status == 200 {
				res.wantStatus(t, 200)
				return
			}
			res.wantError(t, tc.status, "")
		})
	}
	if e.calls() != 0 {
		t.Fatalf("a link reached the model %d times", e.calls())
	}
	if got := e.pull(owner, "b1", 0); len(got.Notes) != 1 {
		t.Fatalf("the board has %d notes, want the owner's 1", len(got.Notes))
	}
}

func TestLinkThatNoLongerWorks(t *testing.T) {
	start := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	e := newEnv(t, withClock(start))
	owner := e.claim("owner@example.com", "b1")
	token, _ := e.createLink(owner, "b1", 1)["token"].(string), 0
	forged, _, _ := auth.NewLinkToken()
	for _, tc := range []struct{ name, token string }{
		{"Forged", forged},
		{"Malformed", "not-a-token"},
		{"TooLong", token + "A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := e.do("GET", "/api/boards/b1/sync?since=0", "", nil, linkHeader(tc.token)).wantError(t, 401, "")
			if msg != "This link no longer works." {
				t.Fatalf("error %q", msg)
			}
		})
	}
	e.do("GET", "/api/boards/b1/sync?since=0", "", nil, linkHeader(token)).wantStatus(t, 200)
	e.clock.Advance(time.Hour - time.Nanosecond)
	e.do("GET", "/api/boards/b1/sync?since=0", "", nil, linkHeader(token)).wantStatus(t, 200)
	e.clock.Advance(time.Nanosecond)
	if msg := e.do("GET", "/api/boards/b1/sync?since=0", "", nil, linkHeader(token)).wantError(t, 401, ""); msg != "This link no longer works." {
		t.Fatalf("expired link: error %q", msg)
	}
	if _, res, err := e.dialLink(token, "b1"); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("socket with an expired link: err=%v, want 401", err)
	}
	// An expired link leaves the owner's list.
	if got := e.do("GET", "/api/boards/b1/links", owner, nil).wantObject(t, 200); fmt.Sprint(got["links"]) != "[]" {
		t.Fatalf("links after expiry = %v", got["links"])
	}
}

func TestLinkLive(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	token, id := e.linkToken(owner, "b1")
	co, _ := e.connect(owner, "b1", "")

	cl, res, err := e.dialLink(token, "b1")
	if err != nil {
		t.Fatalf("dial with a link: %v (%v)", err, res)
	}
	hello := read(t, cl)
	if hello.Type != livewire.TypeHello || hello.You.CanEdit || len(hello.Present) != 0 {
		t.Fatalf("link's hello = %+v, want view only and nobody present shown", hello)
	}
	if !access.IsLinkEmail(hello.You.Email) {
		t.Fatalf("link's identity %q", hello.You.Email)
	}
	// A push is refused; a pointer and an editor are ignored.
	send(t, cl, pushMsg{Type: "push", ID: "p1", Push: notePush(board.Note{ID: "x"})})
	if m := read(t, cl); m.Type != livewire.TypeError || m.ID != "p1" || m.Status != 403 {
		t.Fatalf("link's push got %+v, want error 403", m)
	}
	send(t, cl, map[string]any{"type": "pointer", "x": 1, "y": 2})
	send(t, cl, map[string]any{"type": "editing", "noteId": "x"})
	send(t, cl, map[string]any{"type": "ping", "id": "after"})
	if m := read(t, cl); m.Type != "pong" || m.ID != "after" {
		t.Fatalf("link got %+v, want only the pong", m)
	}

	// The owner sees no join, pointer or editor of the link, and the
	// link sees the owner's changes live, and nobody's pointer.
	send(t, co, map[string]any{"type": "pointer", "x": 5, "y": 6})
	e.pushOK(owner, "b1", notePush(board.Note{ID: "a", Content: "live"}))
	if m := read(t, co); m.Type != livewire.TypeChanges {
		t.Fatalf("owner got %+v first, want the change (nothing of the link)", m)
	}
	if m := read(t, cl); m.Type != livewire.TypeChanges || len(m.Notes) != 1 || m.Notes[0].Content != "live" {
		t.Fatalf("link got %+v, want the owner's change", m)
	}

	// Revoking closes the link's socket with 4003; the owner's stays.
	e.do("DELETE", "/api/boards/b1/links/"+id, owner, nil).wantStatus(t, 204)
	if code := closeStatus(t, cl); code != livewire.CloseForbidden {
		t.Fatalf("revoked link's socket closed with %d, want %d", code, livewire.CloseForbidden)
	}
	send(t, co, map[string]any{"type": "ping", "id": "still"})
	if m := readType(t, co, "pong"); m.ID != "still" {
		t.Fatalf("owner got %+v", m)
	}
	if _, res, err := e.dialLink(token, "b1"); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("socket with a revoked link: err=%v, want 401", err)
	}
}

func TestLinkLiveExpires(t *testing.T) {
	e := newEnv(t, withClock(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)))
	owner := e.claim("owner@example.com", "b1")
	token, _ := e.linkToken(owner, "b1") // 24 hours
	cl, _, err := e.dialLink(token, "b1")
	if err != nil {
		t.Fatal(err)
	}
	read(t, cl) // hello
	e.clock.Advance(24 * time.Hour)
	if code := closeStatus(t, cl); code != livewire.CloseForbidden {
		t.Fatalf("expired link's socket closed with %d, want %d", code, livewire.CloseForbidden)
	}
}

func TestLinkLongPollEndsOnRevoke(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	owner := boardAt1(e)
	token, id := e.linkToken(owner, "b1")
	req := e.newRequest(context.Background(), "GET", e.srv.URL+"/api/boards/b1/sync?since=1&wait=30", "", nil, linkHeader(token))
	out := make(chan answer, 1)
	go func() { out <- e.send(req) }()
	select {
	case <-p.held:
	case a := <-out:
		t.Fatalf("the link's poll answered at once: %s", a)
	}
	e.do("DELETE", "/api/boards/b1/links/"+id, owner, nil).wantStatus(t, 204)
	select {
	case a := <-out:
		a.wantError(t, http.StatusForbidden, "")
	case <-time.After(liveWait):
		t.Fatal("the revoked link's poll is still held")
	}
}

// TestLinkSocketNeedsTheBoardsLink: a link opens its own board only.
func TestLinkSocketNeedsTheBoardsLink(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	e.claimAs(owner, "b2")
	token, _ := e.linkToken(owner, "b1")
	if _, res, err := e.dialLink(token, "b2"); err == nil || res == nil || res.StatusCode != 403 {
		t.Fatalf("b1's link on b2's socket: err=%v, want 403", err)
	}
	if _, res, err := e.dial("", "b1", "?link=garbage", ""); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("a garbage link on the socket: err=%v, want 401", err)
	}
}

// TestLinkTokenNeverLogged: the link's page, its REST calls and its socket
// leave its token out of the server's log.
func TestLinkTokenNeverLogged(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<!doctype html>")) })
	e := newEnv(t, withApp(app))
	owner := e.claim("owner@example.com", "b1")
	token, _ := e.linkToken(owner, "b1")
	e.do("GET", "/l/"+token, "", nil).wantStatus(t, 200)
	e.do("GET", "/api/link", "", nil, linkHeader(token)).wantStatus(t, 200)
	e.do("GET", "/api/boards/b1/sync?since=0", "", nil, linkHeader(token)).wantStatus(t, 200)
	e.do("POST", "/api/boards/b1/sync", "", notePush(board.Note{ID: "x"}), linkHeader(token)).wantStatus(t, 403)
	c, _, err := e.dialLink(token, "b1")
	if err != nil {
		t.Fatal(err)
	}
	read(t, c)
	logs := e.logs.String()
	if strings.Contains(logs, token) {
		t.Fatalf("the token is in the log:\n%s", logs)
	}
	if !strings.Contains(logs, "req.path=/l/…") {
		t.Fatalf("the link page's request is not logged as /l/…:\n%s", logs)
	}
}
