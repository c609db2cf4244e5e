package transport_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestEmailOneAccountPerAddress: the spellings of one address that look
// the same to a person (NFC and NFD, a domain's Unicode and ASCII forms,
// full-width letters) log in to one account, named in its canonical form
// (docs/auth.md, "E-mail addresses").
func TestEmailOneAccountPerAddress(t *testing.T) {
	e := newAuthEnv(t)
	for _, tt := range []struct {
		name, ask, answer, canonical string
	}{
		{"NFDThenNFC", "jose\u0301@example.com", "jos\u00e9@example.com", "jos\u00e9@example.com"},
		{"ULabelThenALabel", "ada@b\u00fccher.example", "ada@xn--bcher-kva.example", "ada@xn--bcher-kva.example"},
		{"ALabelThenULabel", "Bob@XN--BCHER-KVA.example", "bob@B\u00dcCHER.example", "bob@xn--bcher-kva.example"},
		{"FullWidthLocalPart", "\uff47\uff52\uff41\uff43\uff45@example.com", "grace@example.com", "grace@example.com"},
		{"FullWidthDomain", "linus@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com", "linus@example.com", "linus@example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.sendOTP(tt.ask).wantBody(t, http.StatusOK, `{"ok":true}`)
			code := e.sink.WaitCode(t, tt.canonical)
			r := e.verify(tt.answer, code)
			r.wantBody(t, http.StatusOK, `{"ok":true}`)
			e.me(r.sessionCookie(t).Value).wantExactObject(t, http.StatusOK, map[string]any{"email": tt.canonical})
		})
	}
}

// TestEmailInvisibleRefused: an address with an invisible or control
// character, or a local part mixing scripts, is refused with a 400 naming
// the field at every entry point, so it can never stand for another
// address that looks the same.
func TestEmailInvisibleRefused(t *testing.T) {
	e := newAuthEnv(t)
	ada := e.claim("ada@example.com", "roadmap")
	for _, tt := range []struct{ name, email string }{
		{"TrailingZeroWidthSpace", "grace@example.com\u200b"},
		{"ZeroWidthSpaceInside", "gr\u200bace@example.com"},
		{"ZeroWidthJoiner", "grace\u200d@example.com"},
		{"WordJoiner", "grace@exam\u2060ple.com"},
		{"ByteOrderMark", "\ufeffgrace@example.com"},
		{"RightToLeftOverride", "grace\u202e@example.com"},
		{"NoBreakSpaceInside", "gra\u00a0ce@example.com"},
		{"SoftHyphen", "gra\u00adce@example.com"},
		{"LatinAndCyrillic", "p\u0430ypal@example.com"},
		{"LatinAndGreek", "\u03bfscar@example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.post("/api/boards/roadmap/invite", ada, map[string]string{"email": tt.email}).wantError(t, http.StatusBadRequest, "email")
			e.sendOTP(tt.email).wantError(t, http.StatusBadRequest, "email")
			e.verify(tt.email, "123456").wantError(t, http.StatusBadRequest, "email")
		})
	}
	// Nothing was half-applied: the board has no invitee.
	m := e.do("GET", "/api/boards/roadmap/invite", ada, nil).wantObject(t, http.StatusOK)
	if got := strs(m["invitedEmails"]); len(got) != 0 {
		t.Fatalf("invitedEmails %v after refused invites, want none", got)
	}
	// One script is fine, whichever it is.
	for _, ok := range []string{"\u043f\u0430\u0432\u0435\u043b@example.com", "\u3084\u307e\u3060\u592a\u90ce@example.jp"} {
		m := e.post("/api/boards/roadmap/invite", ada, map[string]string{"email": ok}).wantObject(t, http.StatusOK)
		if !slices.Contains(strs(m["invitedEmails"]), ok) {
			t.Fatalf("invite of %q: %v", ok, m)
		}
	}
}
