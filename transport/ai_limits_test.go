package transport_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"corkboard/ai/aitest"
	"corkboard/billing"
	"corkboard/board"
)

// TestAIQuota: the call that reaches the monthly credits exactly passes;
// the next is 429 with exactly {error, used, limit, plan} and reaches no
// model. notes/rewrite spends the owner's credits, whoever calls.
func TestAIQuota(t *testing.T) {
	e := newAIEnv(t, withPlans("free.credits=3,free.rpm=1000"))
	ada := e.login("ada@example.com")
	e.claimAs(ada, aiBoard)
	// Bob may edit the board (pro): a view-only invitee may not rewrite.
	bob := e.invite(ada, aiBoard, "bob@example.com", billing.Pro)
	e.setScript(aitest.Always(aitest.Text("Hi.")))

	for i := 1; i <= 2; i++ {
		if r := e.post("/api/canvas/chat", ada, chatRequest(aiBoard)); r.status != http.StatusOK {
			t.Fatalf("chat %d: %d %s", i, r.status, r.body)
		}
	}
	// Bob's rewrite is the owner's third credit: the last one allowed.
	e.setScript(aitest.Always(aitest.JSON(rewriteAnswer)))
	rewrite := map[string]any{"boardId": aiBoard, "content": "Users log in.", "instruction": "Say how."}
	if r := e.post("/api/canvas/notes/rewrite", bob, rewrite); r.status != http.StatusOK {
		t.Fatalf("bob's rewrite: %d %s", r.status, r.body)
	}
	if got, bobUsed := e.used(ada), e.used(bob); got != 3 || bobUsed != 0 {
		t.Fatalf("used: ada %d, bob %d; want 3 and 0", got, bobUsed)
	}
	calls := e.calls()
	e.post("/api/canvas/chat", ada, chatRequest(aiBoard)).wantQuota(t, 3, 3, billing.Free)
	e.post("/api/canvas/notes/rewrite", bob, rewrite).wantQuota(t, 3, 3, billing.Free)
	// Bob's own credits are untouched: his own calls still pass.
	e.setScript(aitest.Always(aitest.Text("Hi.")))
	if r := e.post("/api/canvas/chat", bob, chatRequest(aiBoard)); r.status != http.StatusOK {
		t.Fatalf("bob's chat: %d %s", r.status, r.body)
	}
	if n := e.calls() - calls; n != 1 {
		t.Fatalf("model calls after the quota ran out=%d, want 1 (bob's own)", n)
	}
}

// TestAIRateLimited: past the plan's requests per minute, 429 with
// Retry-After and an ordinary error body, before any model call.
func TestAIRateLimited(t *testing.T) {
	e := newAIEnv(t, withPlans("free.credits=1000,free.rpm=2"))
	ada := e.claim("ada@example.com", aiBoard)
	e.setScript(aitest.Always(aitest.JSON(rewriteAnswer)))
	body := map[string]any{"boardId": aiBoard, "item": trackerItem, "field": "summary", "instruction": "Shorter."}
	for i := 1; i <= 2; i++ {
		if r := e.post("/api/canvas/tracker/rewrite", ada, body); r.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, r.status, r.body)
		}
	}
	r := e.post("/api/canvas/tracker/rewrite", ada, body)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("third call: %d Retry-After=%q, want 429 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
	if k := keys(r.object(t)); !slices.Equal(k, []string{"error"}) {
		t.Fatalf("body keys=%v, want [error]", k)
	}
	if n := e.calls(); n != 2 {
		t.Fatalf("model calls=%d, want 2", n)
	}
}

// TestAIBoardGuard: a boardId the caller has no access to is 403, an
// unclaimed one 404, for every board-scoped route; nothing is charged and
// no model is called. Invitees without edit rights may use the AI.
func TestAIBoardGuard(t *testing.T) {
	e := newAIEnv(t)
	ada := e.login("ada@example.com")
	eve := e.login("eve@example.com")
	viewer := e.login("viewer@example.com")
	e.claimAs(ada, aiBoard)
	e.addInvite(ada, aiBoard, "viewer@example.com") // free plan: view only
	for _, rt := range aiRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			for _, c := range []struct {
				name, session, board string
				status               int
			}{
				{"ErrNoAccess", eve, aiBoard, http.StatusForbidden},
				{"ErrUnclaimed", ada, "nobody-owns-this", http.StatusNotFound},
				{"ErrMalformed", ada, "not a board!", http.StatusBadRequest},
			} {
				r := e.post(rt.path, c.session, rt.body(c.board))
				if r.status != c.status {
					t.Fatalf("%s: status=%d, want %d (%s)", c.name, r.status, c.status, r.body)
				}
				if msg, _ := r.object(t)["error"].(string); msg == "" {
					t.Fatalf("%s: body %s has no error", c.name, r.body)
				}
			}
		})
	}
	if n := e.calls(); n != 0 {
		t.Fatalf("model calls=%d, want 0", n)
	}
	for _, s := range []string{ada, eve} {
		if got := e.used(s); got != 0 {
			t.Fatalf("used=%d, want 0: refused calls were charged", got)
		}
	}

	e.setScript(aitest.Always(aitest.Text("Hi.")))
	if r := e.post("/api/canvas/chat", viewer, chatRequest(aiBoard)); r.status != http.StatusOK {
		t.Fatalf("view-only invitee's chat: %d %s, want 200", r.status, r.body)
	}
	// document-to-notes needs no board at all.
	e.setScript(aitest.Always(aitest.JSON(map[string]any{"notes": []any{map[string]any{"title": "A", "content": "B", "suggestedColor": "gray", "suggestedType": "note"}}})))
	if r := e.post("/api/canvas/document-to-notes", eve, map[string]any{"text": "A document."}); r.status != http.StatusOK {
		t.Fatalf("document-to-notes without a board: %d %s", r.status, r.body)
	}
}

// TestAIRewriteBoardGivenTwice: the board that pays for notes/rewrite is
// the board the request works on. Keys match exactly, in the payer check
// and in the decoder alike: a second "BoardId" is a key neither knows, so
// the request works on b1, whose owner paid; a second "boardId" is refused
// and refunded.
func TestAIRewriteBoardGivenTwice(t *testing.T) {
	e := newAIEnv(t)
	ada := e.claim("ada@example.com", aiBoard)
	e.claimAs(ada, "b2")
	r := e.post("/api/canvas/notes/rewrite", ada, `{"boardId":"b1","boardId":"b2","content":"x","instruction":"y"}`)
	if r.status != http.StatusBadRequest || r.object(t)["field"] != "boardId" {
		t.Fatalf("status=%d %s, want 400 on boardId", r.status, r.body)
	}
	if got := e.used(ada); got != 0 {
		t.Fatalf("used=%d, want 0", got)
	}
	e.setScript(aitest.Always(aitest.JSON(rewriteAnswer)))
	r = e.post("/api/canvas/notes/rewrite", ada, `{"boardId":"b1","BoardId":"b2","content":"x","instruction":"y"}`)
	if r.status != http.StatusOK {
		t.Fatalf("status=%d %s, want 200 (BoardId is an unknown key, skipped)", r.status, r.body)
	}
}

// TestAIDocumentSize: document-to-notes takes 100,000 characters however
// they are encoded (4-byte UTF-8, or JSON \u escapes of surrogate pairs,
// 12 bytes each) and refuses 100,001 with 400 on text, refunded.
func TestAIDocumentSize(t *testing.T) {
	e := newAIEnv(t)
	ada := e.login("ada@example.com")
	e.setScript(aitest.Always(aitest.JSON(map[string]any{"notes": []any{map[string]any{"title": "Faces", "content": "Many.", "suggestedColor": "pink", "suggestedType": "note"}}})))
	raw := func(n int) string { return `{"text":"` + strings.Repeat("😀", n) + `"}` }
	escaped := func(n int) string { return `{"text":"` + strings.Repeat(`\ud83d\ude00`, n) + `"}` }
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"OKRaw", raw(ai100k), http.StatusOK},
		{"OKEscaped", escaped(ai100k), http.StatusOK},
		{"ErrRaw", raw(ai100k + 1), http.StatusBadRequest},
		{"ErrEscaped", escaped(ai100k + 1), http.StatusBadRequest},
	}
	charged := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.post("/api/canvas/document-to-notes", ada, tt.body)
			if r.status != tt.status {
				t.Fatalf("status=%d, want %d (%s)", r.status, tt.status, r.body)
			}
			if tt.status == http.StatusOK {
				charged += 5
			} else if f := r.object(t)["field"]; f != "text" {
				t.Fatalf("field=%v, want text", f)
			}
			if got := e.used(ada); got != charged {
				t.Fatalf("used=%d, want %d", got, charged)
			}
		})
	}
}

// ai100k is the spec's limit of document-to-notes text, in characters.
const ai100k = 100000

// closedURL returns the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestAIOllamaDown: with Ollama unreachable every AI route answers 503
// "AI model unavailable: cannot reach Ollama." at once and refunds; boards
// and sync work on. The answer does not name Ollama's address (clients
// have no business knowing it); the server's log does, and docs/ai.md
// quotes the answer as it is.
func TestAIOllamaDown(t *testing.T) {
	ollama := closedURL(t)
	e := newAIEnv(t, withOllamaURL(ollama))
	ada := e.claim("ada@example.com", aiBoard)
	doc, err := os.ReadFile("../docs/ai.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range aiRoutes() {
		t.Run(rt.name, func(t *testing.T) {
			start := time.Now()
			r := e.post(rt.path, ada, rt.body(aiBoard))
			took := time.Since(start)
			if r.status != http.StatusServiceUnavailable {
				t.Fatalf("status=%d, want 503 (%s)", r.status, r.body)
			}
			got := r.object(t)
			msg, _ := got["error"].(string)
			if msg != "AI model unavailable: cannot reach Ollama." || len(got) != 1 {
				t.Fatalf("body=%s, want exactly {\"error\": \"AI model unavailable: cannot reach Ollama.\"}", r.body)
			}
			if quoted := fmt.Sprintf(`{"error": %q}`, msg); !strings.Contains(string(doc), quoted) {
				t.Errorf("docs/ai.md does not quote the answer %s", quoted)
			}
			// Well under the 3 s dial timeout: a refused connection is
			// reported, not waited out.
			if took > 2*time.Second {
				t.Errorf("took %v, want an answer at once", took)
			}
		})
	}
	if got := e.used(ada); got != 0 {
		t.Fatalf("used=%d, want 0: every 503 is refunded", got)
	}
	if logs := e.logs.String(); !strings.Contains(logs, `msg="cannot reach Ollama" ollama=`+ollama) {
		t.Errorf("the log does not name Ollama's address %s:\n%s", ollama, logs)
	}

	note := board.Note{ID: "n1", Title: "Still works", Content: "Sync without AI.", Color: "yellow", Type: "note", UpdatedAt: "2026-11-22T10:00:00Z"}
	if r := e.post("/api/boards/"+aiBoard+"/sync", ada, board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note}}}); r.status != http.StatusOK {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	r := e.do("GET", "/api/boards/"+aiBoard+"/sync?since=0", ada, nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"title":"Still works"`) {
		t.Fatalf("pull: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/api/boards", ada, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), aiBoard) {
		t.Fatalf("GET /api/boards: %d %s", r.status, r.body)
	}
}

// TestAINotConfigured: without an AI service every AI route is 503 and
// nothing is charged; the routes still need a session.
func TestAINotConfigured(t *testing.T) {
	e := newEnv(t, withClock(billStart), withPlans("free.credits=1000,free.rpm=1"))
	ada := e.claim("ada@example.com", aiBoard)
	for _, rt := range aiRoutes() {
		if r := e.post(rt.path, "", rt.body(aiBoard)); r.status != http.StatusUnauthorized {
			t.Fatalf("%s without a session: %d, want 401", rt.name, r.status)
		}
		r := e.post(rt.path, ada, rt.body(aiBoard))
		if msg, _ := r.object(t)["error"].(string); r.status != http.StatusServiceUnavailable || !strings.HasPrefix(msg, "AI model unavailable: ") {
			t.Fatalf("%s: %d %s, want 503 AI model unavailable", rt.name, r.status, r.body)
		}
	}
	if got := e.used(ada); got != 0 {
		t.Fatalf("used=%d, want 0", got)
	}
}

// TestAIRouteMethods: the AI routes take POST only.
func TestAIRouteMethods(t *testing.T) {
	e := newAIEnv(t)
	ada := e.login("ada@example.com")
	if r := e.do("GET", "/api/canvas/chat", ada, nil); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET chat: %d, want 405", r.status)
	}
	if r := e.post("/api/canvas/note-ai/generate-prd/extra", ada, noteAIRequest(aiBoard)); r.status != http.StatusNotFound {
		t.Fatalf("a path below a command: %d, want 404", r.status)
	}
}
