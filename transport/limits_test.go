package transport_test

import (
	"fmt"
	"net/http"
	"testing"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// notes makes n notes named prefix0…
func notes(prefix string, n int) []board.Note {
	out := make([]board.Note, n)
	for i := range out {
		out[i] = board.Note{ID: fmt.Sprintf("%s%d", prefix, i), Content: "x"}
	}
	return out
}

// TestPushPastRowLimit: a push that would take a board past its notes or
// items limit is a 413 naming the field and the limit, and applies
// nothing; the Nth row passes.
func TestPushPastRowLimit(t *testing.T) {
	const limit = 4
	e := newEnv(t, withLimits(board.Limits{NotesPerBoard: limit, ItemsPerBoard: limit}))
	alice := e.claim("alice@example.com", "b1")

	t.Run("Notes", func(t *testing.T) {
		e.pushOK(alice, "b1", notePush(notes("n", limit-1)...))
		e.pushOK(alice, "b1", notePush(notes("m", 1)...)) // the Nth
		r := e.post("/api/boards/b1/sync", alice, notePush(notes("o", 1)...))
		r.wantExactObject(t, http.StatusRequestEntityTooLarge, map[string]any{
			"error": "This board has reached 4 notes: delete some before adding more. Nothing was applied.",
			"field": "notes", "limit": float64(limit),
		})
		if ch := e.pull(alice, "b1", 0); len(ch.Notes) != limit || ch.ServerVersion != 2 {
			t.Fatalf("after the refused push: %d notes at version %d, want %d at 2", len(ch.Notes), ch.ServerVersion, limit)
		}
	})
	t.Run("Items", func(t *testing.T) {
		items := func(prefix string, n int) board.Push {
			var p board.Push
			for i := range n {
				p.TrackerItems.Upserted = append(p.TrackerItems.Upserted, board.TrackerItem{ID: fmt.Sprintf("%s%d", prefix, i), Summary: "s"})
			}
			return p
		}
		e.pushOK(alice, "b1", items("i", limit))
		msg := e.post("/api/boards/b1/sync", alice, items("j", 1)).wantError(t, http.StatusRequestEntityTooLarge, "trackerItems")
		if msg != "This board has reached 4 tracker items: delete some before adding more. Nothing was applied." {
			t.Fatalf("message %q", msg)
		}
	})
	t.Run("Live", func(t *testing.T) {
		c, _ := e.connect(alice, "b1", "")
		send(t, c, pushMsg{Type: "push", ID: "p1", Push: notePush(notes("live", 1)...)})
		m := readType(t, c, livewire.TypeError)
		if m.ID != "p1" || m.Status != http.StatusRequestEntityTooLarge || m.Field != "notes" || m.Limit != limit {
			t.Fatalf("live answer %+v, want error 413 on notes with limit %d", m, limit)
		}
	})
}

// TestClaimPastBoardsPerUser: the claim of one board more than a person
// may own is a 413 naming "boards" and the limit; claiming a board they
// own already stays a harmless 200.
func TestClaimPastBoardsPerUser(t *testing.T) {
	e := newEnv(t, withLimits(board.Limits{BoardsPerUser: 2}))
	alice := e.claim("alice@example.com", "b1")
	e.claimAs(alice, "b2") // the 2nd
	e.post("/api/boards/b3/access", alice, nil).wantExactObject(t, http.StatusRequestEntityTooLarge, map[string]any{
		"error": "You own 2 boards, the most one person may own: delete or hand over one before claiming another.",
		"field": "boards", "limit": float64(2),
	})
	e.claimAs(alice, "b2")
	if a := e.do("GET", "/api/boards/b3/access", alice, nil).wantObject(t, http.StatusOK); a["isUnclaimed"] != true {
		t.Fatalf("b3 after the refused claim: %v, want unclaimed", a)
	}
}
