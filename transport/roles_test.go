package transport_test

import (
	"net/http"
	"testing"

	"corkboard/transport/livewire"
)

// Locks and roles (docs/api.md, "Locks and roles"): what a person sees
// when the store refuses a push, on REST and on the live channel, and the
// invite endpoints' roles.

const lockedN1 = `{"error":"Note \"n1\" is locked by the board's owner.","field":"notes.upserted[0]","id":"n1"}`

// TestLockRefusesEditorsPush: the owner locks n1; an editor's REST push
// that moves it (with a free note beside it) is refused whole with 403
// naming the note, and so is the same push on the live channel; the
// editor may not lock or unlock; the owner may, and then the editor moves
// it.
func TestLockRefusesEditorsPush(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	editor := e.invite(owner, "b1", "editor@example.com", "pro")
	e.pushOK(owner, "b1", []byte(`{"notes":{"upserted":[{"id":"n1","title":"Mine","x":1,"y":1,"locked":true},{"id":"n2","title":"Free"}]}}`))
	if ch := e.pull(editor, "b1", 0); len(ch.Notes) != 2 || !ch.Notes[0].Locked && !ch.Notes[1].Locked {
		t.Fatalf("pull %+v, want n1 locked", ch.Notes)
	}

	move := `{"notes":{"upserted":[{"id":"n1","title":"Mine","x":500,"y":1}],"deleted":[]}}`
	e.post("/api/boards/b1/sync", editor, []byte(move)).wantBody(t, http.StatusForbidden, lockedN1)
	both := `{"notes":{"upserted":[{"id":"n2","title":"Changed"},{"id":"n1","title":"Mine","x":500,"y":1}],"deleted":[]}}`
	e.post("/api/boards/b1/sync", editor, []byte(both)).wantError(t, http.StatusForbidden, "notes.upserted[1]")
	e.post("/api/boards/b1/sync", editor, []byte(`{"notes":{"upserted":[],"deleted":["n1"]}}`)).wantError(t, http.StatusForbidden, "notes.deleted[0]")
	e.post("/api/boards/b1/sync", editor, []byte(`{"notes":{"upserted":[{"id":"n2","title":"Free","locked":true}]}}`)).wantError(t, http.StatusForbidden, "notes.upserted[0].locked")
	for _, n := range e.pull(owner, "b1", 0).Notes {
		if n.X == 500 || n.Title == "Changed" || (n.ID == "n2" && n.Locked) {
			t.Fatalf("note %+v changed by a refused push", n)
		}
	}

	c, hello := e.connect(editor, "b1", "")
	if hello.You.Role != "edit" || !hello.You.CanEdit {
		t.Fatalf("hello.you = %+v, want role edit", hello.You)
	}
	send(t, c, []byte(`{"type":"push","id":"p1","push":`+move+`}`))
	m := readType(t, c, livewire.TypeError)
	if m.ID != "p1" || m.Status != http.StatusForbidden || m.Field != "notes.upserted[0]" || m.Error != `Note "n1" is locked by the board's owner.` {
		t.Fatalf("live answer %+v, want 403 naming notes.upserted[0]", m)
	}

	// The owner unlocks ("locked": false); without "locked" a push keeps it.
	e.pushOK(owner, "b1", []byte(`{"notes":{"upserted":[{"id":"n1","title":"Mine","x":1,"y":1,"locked":false}]}}`))
	e.pushOK(editor, "b1", []byte(move))
	for _, n := range e.pull(owner, "b1", 0).Notes {
		if n.ID == "n1" && (n.X != 500 || n.Locked) {
			t.Fatalf("n1 = %+v after unlock, want the editor's move", n)
		}
	}
}

// TestLockedFrame: frames lock as notes do.
func TestLockedFrame(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	editor := e.invite(owner, "b1", "editor@example.com", "pro")
	e.pushOK(owner, "b1", []byte(`{"frames":{"upserted":[{"id":"f1","title":"Scope","x":0,"y":0,"w":400,"h":300,"locked":true}]}}`))
	body := e.post("/api/boards/b1/sync", editor, []byte(`{"frames":{"upserted":[{"id":"f1","title":"Scope","x":90,"y":0,"w":400,"h":300,"locked":true}]}}`)).object(t)
	if body["field"] != "frames.upserted[0]" || body["id"] != "f1" || body["error"] != `Frame "f1" is locked by the board's owner.` {
		t.Fatalf("answer %v, want 403 naming the frame", body)
	}
}

// TestInviteRoles: the owner gives roles with POST's optional role and
// with PATCH; GET tells each invitee's role; the edges answer 4xx naming
// the field; the invitee learns the role from /access, hello and an
// "access" message on an open socket; the plan caps it.
func TestInviteRoles(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	adder := e.invite(owner, "b1", "adder@example.com", "pro")
	e.invite(owner, "b1", "free@example.com", "free")

	res := e.post("/api/boards/b1/invite", owner, map[string]string{"email": "viewer@example.com", "role": "view"}).wantObject(t, http.StatusOK)
	if in, _ := res["invitee"].(map[string]any); in["role"] != "view" || in["canEdit"] != false || in["chosenRole"] != "view" {
		t.Fatalf("POST with role view: invitee %v", res["invitee"])
	}
	for _, c := range []struct {
		name, method string
		body         any
		status       int
		field        string
	}{
		{"PostBadRole", "POST", map[string]string{"email": "x@example.com", "role": "admin"}, 400, "role"},
		{"PostRoleNotString", "POST", map[string]any{"email": "x@example.com", "role": 1}, 400, "role"},
		{"PatchNoRole", "PATCH", map[string]string{"email": "adder@example.com"}, 400, "role"},
		{"PatchEmptyRole", "PATCH", map[string]string{"email": "adder@example.com", "role": ""}, 400, "role"},
		{"PatchBadEmail", "PATCH", map[string]string{"email": "nope", "role": "add"}, 400, "email"},
		{"PatchNotInvited", "PATCH", map[string]string{"email": "stranger@example.com", "role": "add"}, 404, "email"},
		{"PatchOwner", "PATCH", map[string]string{"email": "owner@example.com", "role": "view"}, 404, "email"},
		{"PatchUnknownField", "PATCH", map[string]string{"email": "adder@example.com", "role": "add", "as": "x"}, 400, "as"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.do(c.method, "/api/boards/b1/invite", owner, c.body).wantError(t, c.status, c.field)
		})
	}
	// Nothing half-applied: the refused POST invited nobody.
	list := e.do("GET", "/api/boards/b1/invite", owner, nil).wantObject(t, http.StatusOK)
	if n := len(strs(list["invitedEmails"])); n != 3 {
		t.Fatalf("invitedEmails %v, want 3 (the refused POST invited nobody)", list["invitedEmails"])
	}
	// Only the owner sets roles.
	e.do("PATCH", "/api/boards/b1/invite", adder, map[string]string{"email": "adder@example.com", "role": "edit"}).wantStatus(t, http.StatusForbidden)

	c, hello := e.connect(adder, "b1", "")
	if hello.You.Role != "edit" {
		t.Fatalf("hello.you.role %q, want edit", hello.You.Role)
	}
	res = e.do("PATCH", "/api/boards/b1/invite", owner, map[string]string{"email": "Adder@Example.com", "role": "add"}).wantObject(t, http.StatusOK)
	if res["changed"] != true {
		t.Fatalf("PATCH answer %v, want changed", res)
	}
	if m := readType(t, c, livewire.TypeAccess); m.Role != "add" || !m.CanEdit {
		t.Fatalf("access message %+v, want role add, canEdit", m)
	}
	if res := e.do("PATCH", "/api/boards/b1/invite", owner, map[string]string{"email": "adder@example.com", "role": "add"}).wantObject(t, http.StatusOK); res["changed"] != false {
		t.Fatalf("same role again: %v, want changed false", res)
	}
	acc := e.do("GET", "/api/boards/b1/access", adder, nil).wantObject(t, http.StatusOK)
	if acc["role"] != "add" || acc["canEdit"] != true {
		t.Fatalf("access %v, want role add", acc)
	}
	// The plan caps the role: a free-plan invitee given "edit" views.
	res = e.do("PATCH", "/api/boards/b1/invite", owner, map[string]string{"email": "free@example.com", "role": "edit"}).wantObject(t, http.StatusOK)
	if in, _ := res["invitee"].(map[string]any); in["role"] != "view" || in["chosenRole"] != "edit" || in["canEdit"] != false {
		t.Fatalf("free invitee %v, want role view (chosen edit)", res["invitee"])
	}
	list = e.do("GET", "/api/boards/b1/invite", owner, nil).wantObject(t, http.StatusOK)
	roles := map[string]any{}
	for _, in := range list["invitees"].([]any) {
		m := in.(map[string]any)
		roles[m["email"].(string)] = m["role"]
	}
	if roles["adder@example.com"] != "add" || roles["viewer@example.com"] != "view" || roles["free@example.com"] != "view" {
		t.Fatalf("GET /invite roles %v", roles)
	}
}

// TestAddRole: a "can add notes" invitee adds notes and edits and deletes
// their own, and is refused (403 naming the row) on the owner's notes and
// on what is not a note; a viewer role pushes nothing.
func TestAddRole(t *testing.T) {
	e := newEnv(t)
	owner := e.claim("owner@example.com", "b1")
	adder := e.invite(owner, "b1", "adder@example.com", "pro")
	e.do("PATCH", "/api/boards/b1/invite", owner, map[string]string{"email": "adder@example.com", "role": "add"}).wantStatus(t, http.StatusOK)
	e.pushOK(owner, "b1", []byte(`{"notes":{"upserted":[{"id":"theirs","title":"Owner's"}]}}`))

	e.pushOK(adder, "b1", []byte(`{"notes":{"upserted":[{"id":"mine","title":"Mine","createdBy":"owner@example.com"}]}}`))
	e.pushOK(adder, "b1", []byte(`{"notes":{"upserted":[{"id":"mine","title":"Mine, edited"}]}}`))
	for _, n := range e.pull(owner, "b1", 0).Notes {
		if n.ID == "mine" && (n.CreatedBy != "adder@example.com" || n.Title != "Mine, edited") {
			t.Fatalf("mine = %+v, want edited, created by the adder (a client's createdBy is ignored)", n)
		}
	}
	body := e.post("/api/boards/b1/sync", adder, []byte(`{"notes":{"upserted":[{"id":"theirs","title":"Mine now"}]}}`)).object(t)
	if body["field"] != "notes.upserted[0]" || body["id"] != "theirs" {
		t.Fatalf("editing the owner's note: %v, want 403 naming it", body)
	}
	e.post("/api/boards/b1/sync", adder, []byte(`{"notes":{"deleted":["theirs"]}}`)).wantError(t, http.StatusForbidden, "notes.deleted[0]")
	e.post("/api/boards/b1/sync", adder, []byte(`{"frames":{"upserted":[{"id":"f","title":"F","x":0,"y":0,"w":300,"h":200}]}}`)).wantError(t, http.StatusForbidden, "frames")
	e.pushOK(adder, "b1", []byte(`{"notes":{"deleted":["mine"]}}`))

	e.do("PATCH", "/api/boards/b1/invite", owner, map[string]string{"email": "adder@example.com", "role": "view"}).wantStatus(t, http.StatusOK)
	e.post("/api/boards/b1/sync", adder, []byte(`{"notes":{"upserted":[{"id":"new","title":"New"}]}}`)).wantStatus(t, http.StatusForbidden)
}
