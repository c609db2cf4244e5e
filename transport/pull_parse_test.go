package transport_test

import (
	"net/http"
	"net/url"
	"testing"

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
