package transport_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestBoardsRequireSession(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/boards"},
		{"GET", "/api/boards/b1/access"},
		{"POST", "/api/boards/b1/access"},
		{"PATCH", "/api/boards/b1/access"},
		{"GET", "/api/boards/b1/invite"},
		{"POST", "/api/boards/b1/invite"},
		{"DELETE", "/api/boards/b1/invite"},
	} {
		e.do(c.method, c.path, "", nil).wantError(t, http.StatusUnauthorized, "")
		e.do(c.method, c.path, "forged-token", nil).wantError(t, http.StatusUnauthorized, "")
	}
}

func TestBoardClaimAndAccess(t *testing.T) {
	e := newEnv(t)
	ada := e.login("ada@example.com")
	bob := e.login("bob@example.com")

	t.Run("unclaimed", func(t *testing.T) {
		r := e.do("GET", "/api/boards/roadmap/access", ada, nil)
		m := r.wantObject(t, 200)
		want := map[string]any{"hasAccess": false, "isOwner": false, "isUnclaimed": true, "canEdit": false}
		if !jsonEqual(m, want) {
			t.Fatalf("access of unclaimed board = %v, want %v", m, want)
		}
		// Board-scoped endpoints other than /access: 404 for an unclaimed board.
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/boards/roadmap/invite"},
			{"POST", "/api/boards/roadmap/invite"},
			{"PATCH", "/api/boards/roadmap/access"},
			{"GET", "/api/boards/roadmap/sync?since=0"},
		} {
			e.do(c.method, c.path, ada, map[string]string{"email": "x@example.com"}).wantError(t, http.StatusNotFound, "")
		}
	})

	t.Run("claim", func(t *testing.T) {
		r := e.do("POST", "/api/boards/roadmap/access", ada, nil)
		if m := r.wantObject(t, 200); !jsonEqual(m, map[string]any{"ok": true}) {
			t.Fatalf("claim answer %v", m)
		}
		// A retry by the owner is harmless.
		e.do("POST", "/api/boards/roadmap/access", ada, nil).wantObject(t, 200)
		// Someone else cannot take it.
		e.do("POST", "/api/boards/roadmap/access", bob, nil).wantError(t, http.StatusConflict, "")

		r = e.do("GET", "/api/boards/roadmap/access", ada, nil)
		want := map[string]any{"hasAccess": true, "isOwner": true, "isUnclaimed": false, "canEdit": true, "role": "edit"}
		if m := r.wantObject(t, 200); !jsonEqual(m, want) {
			t.Fatalf("owner access = %v, want %v", m, want)
		}
	})

	t.Run("no access", func(t *testing.T) {
		r := e.do("GET", "/api/boards/roadmap/access", bob, nil)
		want := map[string]any{"hasAccess": false, "isOwner": false, "isUnclaimed": false, "canEdit": false}
		if m := r.wantObject(t, 200); !jsonEqual(m, want) {
			t.Fatalf("stranger access = %v, want %v", m, want)
		}
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/boards/roadmap/invite"},
			{"PATCH", "/api/boards/roadmap/access"},
			{"GET", "/api/boards/roadmap/sync?since=0"},
			{"POST", "/api/boards/roadmap/sync"},
		} {
			e.do(c.method, c.path, bob, nil).wantError(t, http.StatusForbidden, "")
		}
	})

	t.Run("bad board id", func(t *testing.T) {
		for _, id := range []string{"has.dot", strings.Repeat("x", 65), "sp%20ace", "%C3%A9"} {
			for _, method := range []string{"GET", "POST"} {
				e.do(method, "/api/boards/"+id+"/access", ada, nil).wantError(t, http.StatusBadRequest, "boardId")
			}
			e.do("GET", "/api/boards/"+id+"/invite", ada, nil).wantError(t, http.StatusBadRequest, "boardId")
		}
		e.do("POST", "/api/boards/"+strings.Repeat("x", 64)+"/access", ada, nil).wantObject(t, 200)
	})
}

func TestBoardInvites(t *testing.T) {
	e := newEnv(t)
	ada := e.claim("ada@example.com", "roadmap")

	invite := func(method, email string) map[string]any {
		t.Helper()
		r := e.do(method, "/api/boards/roadmap/invite", ada, map[string]string{"email": email})
		return r.wantObject(t, 200)
	}
	m := invite("POST", "  Grace@Example.COM ")
	if m["added"] != true || !slices.Equal(strs(m["invitedEmails"]), []string{"grace@example.com"}) {
		t.Fatalf("first invite answer %v", m)
	}
	if m := invite("POST", "grace@example.com"); m["added"] != false || len(strs(m["invitedEmails"])) != 1 {
		t.Fatalf("duplicate invite answer %v, want added=false and no duplicate", m)
	}
	invite("POST", "linus@example.com")

	r := e.do("GET", "/api/boards/roadmap/invite", ada, nil)
	if m := r.wantObject(t, 200); !slices.Equal(strs(m["invitedEmails"]), []string{"grace@example.com", "linus@example.com"}) || len(m) != 3 { // invitees and editPlans: docs/api.md
		t.Fatalf("invite list %v", m)
	}

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			body  any
			field string
		}{
			{"owner", map[string]string{"email": "ADA@example.com"}, "email"},
			{"malformed", map[string]string{"email": "not-an-address"}, "email"},
			{"header injection", map[string]string{"email": "a@example.com\r\nBcc: b@example.com"}, "email"},
			{"missing", map[string]string{}, "email"},
			{"wrong type", map[string]any{"email": 42}, "email"},
			{"unknown field", map[string]string{"email": "a@example.com", "role": "admin"}, "role"},
			{"duplicate key", `{"email":"a@example.com","email":"b@example.com"}`, "email"},
			{"trailing garbage", `{"email":"a@example.com"} x`, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				e.do("POST", "/api/boards/roadmap/invite", ada, c.body).wantError(t, http.StatusBadRequest, c.field)
			})
		}
		big := `{"email":"` + strings.Repeat("a", 1<<20) + `@example.com"}`
		e.do("POST", "/api/boards/roadmap/invite", ada, big).wantError(t, http.StatusRequestEntityTooLarge, "")
		r = e.do("GET", "/api/boards/roadmap/invite", ada, nil)
		if got := strs(r.wantObject(t, 200)["invitedEmails"]); len(got) != 2 {
			t.Fatalf("bad requests changed the invitations: %v", got)
		}
	})

	t.Run("invitee sees the board but cannot manage it", func(t *testing.T) { testInviteeCannotManage(t, e) })

	t.Run("paid invitee can edit", func(t *testing.T) {
		linus := e.invite(ada, "roadmap", "linus@example.com", "pro")
		r := e.do("GET", "/api/boards/roadmap/access", linus, nil)
		if m := r.wantObject(t, 200); m["canEdit"] != true || m["isOwner"] != false {
			t.Fatalf("pro invitee access = %v, want canEdit", m)
		}
	})

	t.Run("remove", func(t *testing.T) {
		if m := invite("DELETE", "GRACE@example.com"); m["removed"] != true || !slices.Equal(strs(m["invitedEmails"]), []string{"linus@example.com"}) {
			t.Fatalf("remove answer %v", m)
		}
		if m := invite("DELETE", "grace@example.com"); m["removed"] != false {
			t.Fatalf("second remove answer %v", m)
		}
		// ?email= for clients that cannot send a DELETE body.
		r := e.do("DELETE", "/api/boards/roadmap/invite?email=linus%40example.com", ada, nil)
		if m := r.wantObject(t, 200); m["removed"] != true || len(strs(m["invitedEmails"])) != 0 {
			t.Fatalf("remove by query answer %v", m)
		}
		grace := e.login("grace@example.com")
		r = e.do("GET", "/api/boards", grace, nil)
		if got := r.wantObject(t, 200)["boards"].([]any); len(got) != 0 {
			t.Fatalf("removed invitee still lists the board: %s", r.body)
		}
		e.do("GET", "/api/boards/roadmap/sync?since=0", grace, nil).wantError(t, http.StatusForbidden, "")
	})
}

// testInviteeCannotManage: a free invitee lists the board, may not edit it, and may not manage its invitations or phases.
func testInviteeCannotManage(t *testing.T, e *env) {
	grace := e.login("grace@example.com")
	r := e.do("GET", "/api/boards", grace, nil)
	boards := r.wantObject(t, 200)["boards"].([]any)
	if len(boards) != 1 {
		t.Fatalf("grace's boards = %s", r.body)
	}
	b := boards[0].(map[string]any)
	if b["id"] != "roadmap" || b["ownerEmail"] != "ada@example.com" || b["createdAt"] == "" || b["name"] != "" {
		t.Fatalf("board list item %v", b)
	}
	r = e.do("GET", "/api/boards/roadmap/access", grace, nil)
	want := map[string]any{"hasAccess": true, "isOwner": false, "isUnclaimed": false, "canEdit": false, "role": "view"}
	if m := r.wantObject(t, 200); !jsonEqual(m, want) {
		t.Fatalf("free invitee access = %v, want %v", m, want)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/boards/roadmap/invite"},
		{"POST", "/api/boards/roadmap/invite"},
		{"DELETE", "/api/boards/roadmap/invite"},
		{"PATCH", "/api/boards/roadmap/access"},
	} {
		e.do(c.method, c.path, grace, map[string]any{"email": "x@example.com", "phases": map[string]any{"phases": []any{}}}).wantError(t, http.StatusForbidden, "")
	}
}

func TestBoardPhases(t *testing.T) {
	e := newEnv(t)
	ada := e.claim("ada@example.com", "roadmap")
	grace := e.invite(ada, "roadmap", "grace@example.com", "free")

	phases := map[string]any{"phases": map[string]any{
		"phases":         []any{map[string]any{"id": "discover", "name": "Discover", "color": "#fc0"}, map[string]any{"id": "build"}},
		"currentPhaseId": "build",
	}}
	r := e.do("PATCH", "/api/boards/roadmap/access", ada, phases)
	m := r.wantObject(t, 200)
	if m["ok"] != true || !jsonEqual(m["phases"], phases["phases"]) {
		t.Fatalf("PATCH answer %v", m)
	}
	// Members see the saved configuration, client keys kept as sent.
	for _, s := range []string{ada, grace} {
		r := e.do("GET", "/api/boards/roadmap/access", s, nil)
		if got := r.wantObject(t, 200)["phases"]; !jsonEqual(got, phases["phases"]) {
			t.Fatalf("access phases = %v, want %v", got, phases["phases"])
		}
	}

	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"missing phases", map[string]any{}, "phases"},
		{"null phases", map[string]any{"phases": nil}, "phases"},
		{"phases not array", map[string]any{"phases": map[string]any{"phases": "x"}}, "phases.phases"},
		{"missing array", map[string]any{"phases": map[string]any{"currentPhaseId": ""}}, "phases.phases"},
		{"phase not object", map[string]any{"phases": map[string]any{"phases": []any{"a"}}}, "phases.phases[0]"},
		{"phase without id", map[string]any{"phases": map[string]any{"phases": []any{map[string]any{"name": "x"}}}}, "phases.phases[0].id"},
		{"numeric id", map[string]any{"phases": map[string]any{"phases": []any{map[string]any{"id": 7}}}}, "phases.phases[0].id"},
		{"unknown current", map[string]any{"phases": map[string]any{"phases": []any{map[string]any{"id": "a"}}, "currentPhaseId": "b"}}, "phases.currentPhaseId"},
		{"current not string", map[string]any{"phases": map[string]any{"phases": []any{}, "currentPhaseId": 1}}, "phases.currentPhaseId"},
		{"unknown field", map[string]any{"phases": map[string]any{"phases": []any{}}, "extra": true}, "extra"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.do("PATCH", "/api/boards/roadmap/access", ada, c.body).wantError(t, http.StatusBadRequest, c.field)
		})
	}
	// Nothing above was applied.
	r = e.do("GET", "/api/boards/roadmap/access", ada, nil)
	if got := r.wantObject(t, 200)["phases"]; !jsonEqual(got, phases["phases"]) {
		t.Fatalf("phases after bad requests = %v", got)
	}

	// A cross-site PATCH is refused even with the owner's cookie.
	e.do("PATCH", "/api/boards/roadmap/access", ada, phases, http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}).wantError(t, http.StatusForbidden, "")
}

func TestBoardsListOrderAndRestart(t *testing.T) {
	e := newEnv(t)
	ada := e.login("ada@example.com")
	bob := e.claim("bob@example.com", "bobs-board")
	for _, id := range []string{"first", "second", "third"} {
		e.do("POST", "/api/boards/"+id+"/access", ada, nil).wantObject(t, 200)
	}
	e.do("POST", "/api/boards/bobs-board/invite", bob, map[string]string{"email": "ada@example.com"}).wantObject(t, 200)

	check := func(session string) {
		t.Helper()
		r := e.do("GET", "/api/boards", session, nil)
		var got []string
		for _, b := range r.wantObject(t, 200)["boards"].([]any) {
			got = append(got, b.(map[string]any)["id"].(string))
		}
		if want := []string{"third", "second", "first", "bobs-board"}; !slices.Equal(got, want) {
			t.Fatalf("ada's boards = %v, want %v (owned and invited, newest first)", got, want)
		}
	}
	check(ada)
	e.restart()
	check(ada) // the session, the boards and the invitation all survive
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
