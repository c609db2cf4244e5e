package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"corkboard/ai/aitest"
	"corkboard/billing"
)

// TestAIViewOnlyInvitee: an invitee who may only view a board (free plan)
// cannot spend anyone's credits on AI features whose result is an edit of
// the board (rewrites, generated notes and items): 403 saying why, nothing
// charged to the owner or to them, the model not called. The features
// that only read (chat, subagent, analyses) stay open to them, charged to
// their own credits, never the owner's (docs/billing.md, "View-only
// invitees").
func TestAIViewOnlyInvitee(t *testing.T) {
	e := newAIEnv(t)
	owner := e.claim("owner@example.com", aiBoard)
	viewer := e.invite(owner, aiBoard, "viewer@example.com", billing.Free)
	editor := e.invite(owner, aiBoard, "editor@example.com", billing.Pro)
	readOnly := map[string]bool{"chat": true, "subagent": true, "notes-analyze": true, "tracker-analyze": true}
	for _, rt := range aiRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			e.setScript(aitest.Always(rt.reply))
			ownerBefore, viewerBefore, calls := e.used(owner), e.used(viewer), e.calls()
			r := e.post(rt.path, viewer, rt.body(aiBoard))
			if readOnly[rt.name] {
				if r.status != http.StatusOK {
					t.Fatalf("viewer's %s: %d %s, want 200", rt.name, r.status, r.body)
				}
				if got, want := e.used(viewer)-viewerBefore, rt.cost; got != want {
					t.Fatalf("viewer charged %d, want %d (their own credits)", got, want)
				}
			} else {
				msg := r.wantError(t, http.StatusForbidden, "")
				if !strings.Contains(msg, "view") || !strings.Contains(msg, "edit") {
					t.Fatalf("403 message %q does not say why", msg)
				}
				if got := e.used(viewer) - viewerBefore; got != 0 {
					t.Fatalf("viewer charged %d for a refused call", got)
				}
				if got := e.calls() - calls; got != 0 {
					t.Fatalf("the model was called %d times for a refused call", got)
				}
			}
			if got := e.used(owner) - ownerBefore; got != 0 {
				t.Fatalf("owner charged %d for the viewer's %s", got, rt.name)
			}
			// An invitee who may edit uses every feature.
			if r := e.post(rt.path, editor, rt.body(aiBoard)); r.status != http.StatusOK {
				t.Fatalf("editor's %s: %d %s", rt.name, r.status, r.body)
			}
		})
	}
}
