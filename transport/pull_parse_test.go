package transport_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/transport"
)

// queryCases are raw queries whose since parameter queryValue must read as
// url.ParseQuery does.
var queryCases = []string{
	"", "since", "since=", "since=5", "since=5&since=6", "wait=1&since=7", "a=1;since=3&since=4",
	"since=%35", "si%6Ece=8", "since=%zz&since=9", "since=1+2", "%zz=1&since=2", "&&since=3&", "since=5=6", "SINCE=1",
}

func wantQueryLikeStdlib(t *testing.T, raw string) {
	t.Helper()
	q, _ := url.ParseQuery(raw)
	got, ok := transport.QueryValue(raw, "since")
	if want, wantOK := q.Get("since"), q.Has("since"); got != want || ok != wantOK {
		t.Fatalf("queryValue(%q) = %q, %v; url.ParseQuery gives %q, %v", raw, got, ok, want, wantOK)
	}
}

func TestQueryValueMatchesParseQuery(t *testing.T) {
	for _, raw := range queryCases {
		wantQueryLikeStdlib(t, raw)
	}
}

func FuzzQueryValue(f *testing.F) {
	for _, raw := range queryCases {
		f.Add(raw)
	}
	f.Fuzz(wantQueryLikeStdlib)
}

// cookieCases are Cookie headers whose session cookie sessionToken must
// read as r.Cookie("session") does.
var cookieCases = []string{
	"", "session=abc", "a=1; session=abc; b=2", `session="abc"`, "session=", "session=a b", "session=a\\b; session=ok",
	"session=a;session=b", "  session=x  ", "Session=x", "session=\x7f; session=y", "session", "x=1;;session=z",
	"session =0", "session; session=late", "\tsession=tab",
}

func wantCookieLikeStdlib(t *testing.T, header string) {
	t.Helper()
	r := &http.Request{Header: http.Header{"Cookie": {header}}}
	want := ""
	if c, err := r.Cookie(transport.SessionCookie); err == nil {
		want = c.Value
	}
	if got := transport.SessionToken(r); got != want {
		t.Fatalf("sessionToken(%q) = %q; r.Cookie gives %q", header, got, want)
	}
}

func TestSessionTokenMatchesCookie(t *testing.T) {
	for _, h := range cookieCases {
		wantCookieLikeStdlib(t, h)
	}
}

func FuzzSessionToken(f *testing.F) {
	for _, h := range cookieCases {
		f.Add(h)
	}
	f.Fuzz(wantCookieLikeStdlib)
}

// TestNoChangePullLoggedAtDebug: an up-to-date poll's request line is
// Debug; a pull that returns changes, and a refused poll, stay Info.
func TestNoChangePullLoggedAtDebug(t *testing.T) {
	e := newEnv(t)
	ada := e.claim("ada@example.com", "roadmap")
	e.pushOK(ada, "roadmap", notePush(board.Note{ID: "n1"}))
	e.do("GET", "/api/boards/roadmap/sync?since=1", ada, nil).wantStatus(t, http.StatusOK)
	e.do("GET", "/api/boards/roadmap/sync?since=0", ada, nil).wantStatus(t, http.StatusOK)
	e.do("GET", "/api/boards/roadmap/sync?since=1", "", nil).wantStatus(t, http.StatusUnauthorized)
	var lines []string
	for l := range strings.Lines(e.logs.String()) {
		if strings.Contains(l, "msg=http") && strings.Contains(l, "path=/api/boards/roadmap/sync") && strings.Contains(l, "method=GET") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d request lines for the pulls, want 3:\n%s", len(lines), strings.Join(lines, ""))
	}
	for i, want := range []string{"level=DEBUG", "level=INFO", "level=INFO"} {
		if !strings.HasPrefix(strings.SplitN(lines[i], " ", 2)[1], want) {
			t.Errorf("pull %d logged as %q, want %s", i+1, lines[i], want)
		}
	}
}
