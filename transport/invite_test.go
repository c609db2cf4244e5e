package transport_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/ratelimit"
)

// TestInviteSendsMail: inviting someone mails them, through the SMTP
// server that login codes go through, who invited them, the board's name
// and link, and what they will be able to do and why; the answer and the
// invite list say the same to the owner.
func TestInviteSendsMail(t *testing.T) {
	e := newAuthEnv(t)
	owner := e.claim("owner@example.com", "b1")
	e.pushOK(owner, "b1", map[string]any{"board": map[string]any{"name": "Roadmap\r\nBcc: x@example.com"}})
	for email, plan := range map[string]string{"viewer@example.com": "free", "editor@example.com": "pro"} {
		if _, err := e.db.EnsureUser(context.Background(), email, plan); err != nil {
			t.Fatal(err)
		}
	}

	checkViewerInvitation(t, e, owner)

	e.post("/api/boards/b1/invite", owner, map[string]string{"email": "editor@example.com"}).wantStatus(t, http.StatusOK)
	m := e.sink.WaitMessage(t, "editor@example.com")
	if !strings.Contains(m.Body, "You can view and edit it: your plan (pro)") {
		t.Fatalf("body %q, want the editor told they edit, because of pro", m.Body)
	}

	// Inviting again sends nothing more.
	if res := e.post("/api/boards/b1/invite", owner, map[string]string{"email": "viewer@example.com"}).wantObject(t, http.StatusOK); res["added"] != false || res["mailed"] != false {
		t.Fatalf("second invitation %v, want added and mailed false", res)
	}
	checkInviteeList(t, e, owner)
}

// checkViewerInvitation invites viewer@ (on the free plan) to b1 and checks
// the answer and the mail: from whom, which board, and that viewer@ may
// view but not edit, and why; the board's name adds no header.
func checkViewerInvitation(t *testing.T, e *env, owner string) {
	t.Helper()
	res := e.post("/api/boards/b1/invite", owner, map[string]string{"email": "Viewer@Example.com"}).wantObject(t, http.StatusOK)
	if res["added"] != true || res["mailed"] != true {
		t.Fatalf("answer %v, want added and mailed", res)
	}
	if in, _ := res["invitee"].(map[string]any); in["email"] != "viewer@example.com" || in["canEdit"] != false || in["plan"] != "free" {
		t.Fatalf("invitee %v, want viewer@example.com viewing on free", res["invitee"])
	}
	m := e.sink.WaitMessage(t, "viewer@example.com")
	for _, want := range []string{"owner@example.com", "Roadmap Bcc: x@example.com"} {
		if !strings.Contains(m.Subject, want) {
			t.Errorf("subject %q, want %q in it", m.Subject, want)
		}
	}
	for _, want := range []string{"owner@example.com invited you", "https://corkboard.example/b/b1", "You can view it, but not edit it", "(free)", "(pro or team)"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("body %q, want %q in it", m.Body, want)
		}
	}
	if strings.Contains(string(m.Data), "\nBcc:") {
		t.Fatalf("the board's name added a header:\n%s", m.Data)
	}
}

// checkInviteeList checks that b1's invite list says of viewer@ and
// editor@ what their invitations said, and which plans may edit.
func checkInviteeList(t *testing.T, e *env, owner string) {
	t.Helper()
	list := e.do("GET", "/api/boards/b1/invite", owner, nil).wantObject(t, http.StatusOK)
	got, _ := list["invitees"].([]any)
	if len(got) != 2 {
		t.Fatalf("invitees %v, want two", list["invitees"])
	}
	for i, want := range []map[string]any{{"email": "viewer@example.com", "canEdit": false, "plan": "free"}, {"email": "editor@example.com", "canEdit": true, "plan": "pro"}} {
		in, _ := got[i].(map[string]any)
		for k, v := range want {
			if in[k] != v {
				t.Fatalf("invitee %d %v, want %v", i, in, want)
			}
		}
	}
	if plans, _ := list["editPlans"].([]any); len(plans) != 2 || plans[0] != "pro" || plans[1] != "team" {
		t.Fatalf("editPlans %v, want [pro team]", list["editPlans"])
	}
}

// TestInviteRateLimit: an owner's invitations are limited over all their
// boards (N pass, N+1 is a 429 that invites nobody); inviting an address
// again is not counted, and the window frees the budget.
func TestInviteRateLimit(t *testing.T) {
	const n = 3
	e := newAuthEnv(t, withAuth(auth.Config{InviteRate: ratelimit.Rate{Count: n, Window: time.Hour}}))
	owner := e.claim("owner@example.com", "b1")
	e.claimAs(owner, "b2")
	invite := func(board, email string) answer {
		return e.post("/api/boards/"+board+"/invite", owner, map[string]string{"email": email})
	}
	invite("b1", "a@example.com").wantStatus(t, http.StatusOK)
	invite("b2", "b@example.com").wantStatus(t, http.StatusOK)
	invite("b1", "c@example.com").wantStatus(t, http.StatusOK)
	wantRetryAfter(t, invite("b2", "d@example.com"), 3600)
	if list := e.do("GET", "/api/boards/b2/invite", owner, nil).wantObject(t, http.StatusOK); len(list["invitedEmails"].([]any)) != 1 {
		t.Fatalf("b2 invitees %v, want the refused invitation left out", list["invitedEmails"])
	}
	invite("b1", "a@example.com").wantStatus(t, http.StatusOK) // already invited: not counted

	e.clock.Advance(time.Hour)
	invite("b2", "d@example.com").wantStatus(t, http.StatusOK)
	e.sink.WaitMessage(t, "d@example.com")
}
