package transport_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/board"
)

// myDots is the answer of POST /votes and GET /votes/mine.
type myDots struct {
	VoteID        string         `json:"voteId"`
	Mine          map[string]int `json:"mine"`
	Left          int            `json:"left"`
	ServerVersion int64          `json:"serverVersion"`
}

func (e *env) vote(session, id string, body any) answer {
	e.tb.Helper()
	return e.post("/api/boards/"+id+"/vote", session, body)
}

func (e *env) dot(session, id, noteID string, delta int) answer {
	e.tb.Helper()
	return e.post("/api/boards/"+id+"/votes", session, map[string]any{"noteId": noteID, "delta": delta})
}

// dotOK casts a dot that must pass and returns the answer.
func (e *env) dotOK(session, id, noteID string, delta int) myDots {
	e.tb.Helper()
	var got myDots
	e.dot(session, id, noteID, delta).want(e.tb, http.StatusOK, &got)
	return got
}

func (e *env) mine(session, id string) myDots {
	e.tb.Helper()
	var got myDots
	e.do("GET", "/api/boards/"+id+"/votes/mine", session, nil).want(e.tb, http.StatusOK, &got)
	return got
}

// votingBoard is a board "retro" owned by ada with notes n1..n3 (n3 of
// type "risk"), an editor bob and a viewer vic (a free-plan invitee).
func votingBoard(t *testing.T) (e *env, ada, bob, vic string) {
	e = newEnv(t, withClock(timerT0))
	ada = e.claim("ada@example.com", "retro")
	bob = e.invite(ada, "retro", "bob@example.com", billing.Pro)
	vic = e.invite(ada, "retro", "vic@example.com", billing.Free)
	e.pushOK(ada, "retro", notePush(
		board.Note{ID: "n1", Title: "one", Type: "idea", UpdatedAt: "2026-11-27T09:00:00Z"},
		board.Note{ID: "n2", Title: "two", Type: "idea", UpdatedAt: "2026-11-27T09:00:00Z"},
		board.Note{ID: "n3", Title: "three", Type: "risk", UpdatedAt: "2026-11-27T09:00:00Z"},
	))
	return e, ada, bob, vic
}

// TestVoteEndpoints walks a vote through: the owner starts it (defaults),
// an editor and a viewer vote, nobody sees another's dots before the
// reveal (the header carries totals only), the reveal ranks the notes.
func TestVoteEndpoints(t *testing.T) {
	e, ada, bob, vic := votingBoard(t)

	e.do("GET", "/api/boards/retro/votes/mine", bob, nil).wantExactObject(t, http.StatusOK, map[string]any{"voteId": "", "mine": map[string]any{}, "left": 0.0})

	var v board.Vote
	e.vote(ada, "retro", map[string]any{"action": "start"}).want(t, http.StatusOK, &v)
	want := board.Vote{ID: v.ID, State: "open", Scope: board.VoteScope{Kind: "all"}, PerPerson: 3, PerNote: 1, Anonymous: true,
		StartedBy: "ada@example.com", StartedAt: timerT0.UnixMilli()}
	if v.ID == "" || !jsonEqual(v, want) {
		t.Fatalf("start answered %+v, want %+v", v, want)
	}

	d := e.dotOK(bob, "retro", "n1", 1)
	if d.VoteID != v.ID || !jsonEqual(d.Mine, map[string]int{"n1": 1}) || d.Left != 2 || d.ServerVersion != 3 {
		t.Fatalf("bob's dot answered %+v, want n1:1 and 2 left at version 3", d)
	}
	e.dotOK(bob, "retro", "n2", 1)
	d = e.dotOK(vic, "retro", "n1", 1) // a viewer votes too
	if !jsonEqual(d.Mine, map[string]int{"n1": 1}) || d.Left != 2 {
		t.Fatalf("vic's dot answered %+v, want only vic's own n1:1", d)
	}
	// Taking one back.
	d = e.dotOK(bob, "retro", "n2", -1)
	if !jsonEqual(d.Mine, map[string]int{"n1": 1}) || d.Left != 2 {
		t.Fatalf("bob took n2 back: %+v, want n1:1 and 2 left", d)
	}
	e.dot(bob, "retro", "n3", 1).wantStatus(t, http.StatusOK)
	if got := e.mine(bob, "retro"); !jsonEqual(got.Mine, map[string]int{"n1": 1, "n3": 1}) || got.Left != 1 || got.VoteID != v.ID {
		t.Fatalf("bob's mine=%+v, want n1 and n3, 1 left", got)
	}

	revealAndClear(t, e, ada, bob, vic)
}

// revealAndClear goes on with TestVoteEndpoints' vote (bob on n1 and n3,
// vic on n1): before the reveal a pull's header has the totals and no
// one's dots; the reveal ranks; a clear removes it all.
func revealAndClear(t *testing.T, e *env, ada, bob, vic string) {
	pull := e.do("GET", "/api/boards/retro/sync?since=0", vic, nil)
	pull.wantStatus(t, http.StatusOK)
	if strings.Contains(string(pull.body), "bob@example.com") || strings.Contains(string(pull.body), "results") {
		t.Fatalf("pull before the reveal shows who voted: %s", pull.body)
	}
	var ch board.Changes
	if err := json.Unmarshal(pull.body, &ch); err != nil || ch.Board.Vote == nil || ch.Board.Vote.Voters != 2 || ch.Board.Vote.Dots != 3 {
		t.Fatalf("pull's vote=%+v (%v), want 2 voters and 3 dots", ch.Board.Vote, err)
	}

	var v board.Vote
	e.vote(ada, "retro", map[string]any{"action": "reveal"}).want(t, http.StatusOK, &v)
	wantRes := []board.VoteResult{{NoteID: "n1", Count: 2}, {NoteID: "n3", Count: 1}}
	if v.State != "revealed" || !jsonEqual(v.Results, wantRes) || v.Voters != 2 || v.Dots != 3 {
		t.Fatalf("reveal answered %+v, want %+v", v, wantRes)
	}
	if ch := e.pull(bob, "retro", 0); ch.Board.Vote == nil || !jsonEqual(ch.Board.Vote.Results, wantRes) {
		t.Fatalf("pull after reveal: %+v", ch.Board.Vote)
	}
	// No dots after the vote closed; mine still says what bob had.
	e.dot(bob, "retro", "n2", 1).wantError(t, http.StatusConflict, "")
	if got := e.mine(bob, "retro"); got.Left != 0 || len(got.Mine) != 2 {
		t.Fatalf("mine after reveal=%+v, want 2 notes and none left", got)
	}

	clearVote(t, e, ada, bob)
}

// clearVote clears the board's vote: 204, no vote in the header, nobody
// has dots; clearing nothing is fine, and moves nothing.
func clearVote(t *testing.T, e *env, ada, bob string) {
	e.vote(ada, "retro", map[string]any{"action": "clear"}).wantStatus(t, http.StatusNoContent)
	pull := e.do("GET", "/api/boards/retro/sync?since=0", bob, nil)
	if strings.Contains(string(pull.body), `"vote"`) {
		t.Fatalf("pull after clear=%s, want no vote", pull.body)
	}
	if got := e.mine(bob, "retro"); got.VoteID != "" || len(got.Mine) != 0 {
		t.Fatalf("mine after clear=%+v", got)
	}
	before := e.pull(ada, "retro", 0).ServerVersion
	e.vote(ada, "retro", map[string]any{"action": "clear"}).wantStatus(t, http.StatusNoContent)
	if after := e.pull(ada, "retro", 0).ServerVersion; after != before {
		t.Fatalf("clear of no vote moved the version %d → %d", before, after)
	}
}

// TestVoteNotAnonymous: a vote that is not anonymous names the voters of
// each note at the reveal, each once, sorted; ties rank by note ID.
func TestVoteNotAnonymous(t *testing.T) {
	e, ada, bob, vic := votingBoard(t)
	e.vote(ada, "retro", map[string]any{"action": "start", "anonymous": false, "perPerson": 4, "perNote": 2}).wantStatus(t, http.StatusOK)
	for _, c := range []struct {
		who, note string
	}{{vic, "n2"}, {bob, "n2"}, {bob, "n2"}, {ada, "n1"}, {bob, "n1"}, {vic, "n3"}, {ada, "n3"}} {
		e.dot(c.who, "retro", c.note, 1).wantStatus(t, http.StatusOK)
	}
	var v board.Vote
	e.vote(ada, "retro", map[string]any{"action": "reveal"}).want(t, http.StatusOK, &v)
	want := []board.VoteResult{
		{NoteID: "n2", Count: 3, Voters: []string{"bob@example.com", "vic@example.com"}},
		{NoteID: "n1", Count: 2, Voters: []string{"ada@example.com", "bob@example.com"}},
		{NoteID: "n3", Count: 2, Voters: []string{"ada@example.com", "vic@example.com"}},
	}
	if !jsonEqual(v.Results, want) || v.Voters != 3 || v.Dots != 7 {
		t.Fatalf("results=%+v (voters %d, dots %d), want %+v", v.Results, v.Voters, v.Dots, want)
	}
	// A revealed vote is replaced by a new start, whose rows start empty.
	var nv board.Vote
	e.vote(ada, "retro", map[string]any{"action": "start"}).want(t, http.StatusOK, &nv)
	if nv.ID == v.ID || nv.State != "open" || nv.Dots != 0 || nv.Results != nil {
		t.Fatalf("second start=%+v, want a new open vote", nv)
	}
	if got := e.mine(bob, "retro"); got.VoteID != nv.ID || len(got.Mine) != 0 || got.Left != 3 {
		t.Fatalf("bob's mine in the new vote=%+v", got)
	}
}

func TestVoteRefuses(t *testing.T) {
	e, ada, bob, vic := votingBoard(t)
	eve := e.login("eve@example.com")
	start := map[string]any{"action": "start"}

	t.Run("ErrUnauthorized", func(t *testing.T) {
		e.vote("", "retro", start).wantError(t, http.StatusUnauthorized, "")
		e.dot("", "retro", "n1", 1).wantError(t, http.StatusUnauthorized, "")
		e.do("GET", "/api/boards/retro/votes/mine", "", nil).wantError(t, http.StatusUnauthorized, "")
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		for _, s := range []string{bob, vic} {
			msg := e.vote(s, "retro", start).wantError(t, http.StatusForbidden, "")
			if !strings.Contains(msg, "owner") {
				t.Fatalf("403 says %q, want it to name the owner", msg)
			}
		}
		e.vote(eve, "retro", start).wantError(t, http.StatusForbidden, "")
		e.dot(eve, "retro", "n1", 1).wantError(t, http.StatusForbidden, "")
		e.do("GET", "/api/boards/retro/votes/mine", eve, nil).wantError(t, http.StatusForbidden, "")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e.vote(ada, "nobody-claimed-this", start).wantError(t, http.StatusNotFound, "")
	})
	t.Run("ErrConflict no vote", func(t *testing.T) {
		for _, action := range []string{"close", "reveal"} {
			e.vote(ada, "retro", map[string]any{"action": action}).wantError(t, http.StatusConflict, "")
		}
		e.dot(bob, "retro", "n1", 1).wantError(t, http.StatusConflict, "")
	})
	t.Run("ErrConflict endsWithTimer without a timer", func(t *testing.T) {
		e.vote(ada, "retro", map[string]any{"action": "start", "endsWithTimer": true}).wantError(t, http.StatusConflict, "endsWithTimer")
	})
	for _, tc := range []struct {
		name, body, field string
	}{
		{"no action", `{}`, "action"},
		{"unknown action", `{"action":"restart"}`, "action"},
		{"perPerson 0", `{"action":"start","perPerson":0}`, "perPerson"},
		{"perPerson 100", `{"action":"start","perPerson":100,"perNote":1}`, "perPerson"},
		{"perPerson not an integer", `{"action":"start","perPerson":2.5}`, "perPerson"},
		{"perNote 0", `{"action":"start","perNote":0}`, "perNote"},
		{"perNote over perPerson", `{"action":"start","perPerson":3,"perNote":4}`, "perNote"},
		{"anonymous a string", `{"action":"start","anonymous":"yes"}`, "anonymous"},
		{"unknown field", `{"action":"start","results":[]}`, "results"},
		{"scope without kind", `{"action":"start","scope":{}}`, "scope.kind"},
		{"scope unknown kind", `{"action":"start","scope":{"kind":"color"}}`, "scope.kind"},
		{"frame scope without frame", `{"action":"start","scope":{"kind":"frame"}}`, "scope.frameId"},
		{"frame scope, frame missing", `{"action":"start","scope":{"kind":"frame","frameId":"f9"}}`, "scope.frameId"},
		{"type scope without type", `{"action":"start","scope":{"kind":"type"}}`, "scope.type"},
		{"type scope with a frame", `{"action":"start","scope":{"kind":"type","type":"idea","frameId":"f1"}}`, "scope.frameId"},
		{"all scope with a type", `{"action":"start","scope":{"kind":"all","type":"idea"}}`, "scope"},
		{"scope unknown field", `{"action":"start","scope":{"kind":"all","notes":[]}}`, "scope.notes"},
	} {
		t.Run("ErrInvalid "+tc.name, func(t *testing.T) {
			e.vote(ada, "retro", tc.body).wantError(t, http.StatusBadRequest, tc.field)
		})
	}
	// Nothing above moved the board.
	if ch := e.pull(ada, "retro", 0); ch.ServerVersion != 1 || ch.Board.Vote != nil {
		t.Fatalf("after refused actions: version %d, vote %+v; want 1 and none", ch.ServerVersion, ch.Board.Vote)
	}

	// The edges pass: 99 a person, perNote = perPerson.
	var v board.Vote
	e.vote(ada, "retro", map[string]any{"action": "start", "perPerson": 99, "perNote": 99}).want(t, http.StatusOK, &v)
	if v.PerPerson != 99 || v.PerNote != 99 {
		t.Fatalf("start at the edges answered %+v", v)
	}
	e.vote(ada, "retro", start).wantError(t, http.StatusConflict, "action") // one is open
	e.vote(ada, "retro", map[string]any{"action": "close"}).wantStatus(t, http.StatusOK)
	e.vote(ada, "retro", start).wantError(t, http.StatusConflict, "action") // closed, not revealed
	e.dot(bob, "retro", "n1", 1).wantError(t, http.StatusConflict, "")      // closed
	e.vote(ada, "retro", map[string]any{"action": "reveal"}).wantStatus(t, http.StatusOK)

	// Dots: 2 a person, 1 a note, on the notes of type "idea".
	e.vote(ada, "retro", `{"action":"start","perPerson":2,"scope":{"kind":"type","type":"idea"}}`).wantStatus(t, http.StatusOK)
	e.pushOK(ada, "retro", map[string]any{"notes": map[string]any{"deleted": []string{"n2"}}})
	e.pushOK(ada, "retro", notePush(board.Note{ID: "n4", Type: "idea", UpdatedAt: "2026-11-27T09:00:00Z"}))
	for _, tc := range []struct {
		name, body, field string
	}{
		{"no note", `{"delta":1}`, "noteId"},
		{"delta 2", `{"noteId":"n1","delta":2}`, "delta"},
		{"delta 0", `{"noteId":"n1","delta":0}`, "delta"},
		{"no delta", `{"noteId":"n1"}`, "delta"},
		{"unknown field", `{"noteId":"n1","delta":1,"count":1}`, "count"},
		{"missing note", `{"noteId":"n9","delta":1}`, "noteId"},
		{"deleted note", `{"noteId":"n2","delta":1}`, "noteId"},
		{"outside the scope", `{"noteId":"n3","delta":1}`, "noteId"},
	} {
		t.Run("ErrInvalid dot "+tc.name, func(t *testing.T) {
			e.post("/api/boards/retro/votes", bob, tc.body).wantError(t, http.StatusBadRequest, tc.field)
		})
	}
	e.dot(bob, "retro", "n1", -1).wantError(t, http.StatusConflict, "delta") // none to take back
	e.dot(bob, "retro", "n1", 1).wantStatus(t, http.StatusOK)
	e.dot(bob, "retro", "n1", 1).wantError(t, http.StatusConflict, "delta") // perNote reached
	e.dot(bob, "retro", "n4", 1).wantStatus(t, http.StatusOK)               // the 2nd of 2 passes
	d := e.dotOK(vic, "retro", "n4", 1)
	if d.Left != 1 {
		t.Fatalf("vic's dot answered %+v, want 1 left", d)
	}
	msg := e.dot(bob, "retro", "n4", 1).wantError(t, http.StatusConflict, "delta") // out of dots
	if !strings.Contains(msg, "no dots left") {
		t.Fatalf("409 says %q, want it to say bob has no dots left", msg)
	}
	if got := e.mine(bob, "retro"); got.Left != 0 || !jsonEqual(got.Mine, map[string]int{"n1": 1, "n4": 1}) {
		t.Fatalf("bob's mine=%+v, want n1 and n4, none left", got)
	}
}

// TestVoteEndsWithTimer: a vote tied to the board's timer takes dots while
// the timer has time left (by the server's clock), and none after.
func TestVoteEndsWithTimer(t *testing.T) {
	e, ada, bob, _ := votingBoard(t)
	e.timer(ada, "retro", map[string]any{"action": "start", "durationMs": 60_000}).wantStatus(t, http.StatusOK)
	var v board.Vote
	e.vote(ada, "retro", map[string]any{"action": "start", "endsWithTimer": true}).want(t, http.StatusOK, &v)
	if !v.EndsWithTimer {
		t.Fatalf("start answered %+v, want endsWithTimer", v)
	}
	e.clock.Advance(59 * time.Second)
	e.dot(bob, "retro", "n1", 1).wantStatus(t, http.StatusOK)
	e.clock.Advance(time.Second)
	msg := e.dot(bob, "retro", "n2", 1).wantError(t, http.StatusConflict, "")
	if !strings.Contains(msg, "timer") {
		t.Fatalf("409 says %q, want it to name the timer", msg)
	}
}

// TestVoteFrameScope: a frame scope takes the notes whose centre is in the
// frame's box, as the browser draws them (220×160 when never sized).
func TestVoteFrameScope(t *testing.T) {
	e, ada, bob, _ := votingBoard(t)
	e.pushOK(ada, "retro", map[string]any{
		"frames": map[string]any{"upserted": []any{map[string]any{"id": "f1", "title": "Now", "x": 0, "y": 0, "w": 400, "h": 300, "color": "gray", "updatedAt": "2026-11-27T09:00:00Z"}}},
		"notes": map[string]any{"upserted": []any{
			map[string]any{"id": "in", "x": 280, "y": 200, "updatedAt": "2026-11-27T09:00:00Z"},                  // centre (390, 280): inside
			map[string]any{"id": "out", "x": 300, "y": 200, "updatedAt": "2026-11-27T09:00:00Z"},                 // centre (410, 280): outside
			map[string]any{"id": "big", "x": 0, "y": 0, "w": 900, "h": 100, "updatedAt": "2026-11-27T09:00:00Z"}, // centre (450, 50): outside
		}},
	})
	e.vote(ada, "retro", map[string]any{"action": "start", "scope": map[string]any{"kind": "frame", "frameId": "f1"}}).wantStatus(t, http.StatusOK)
	e.dot(bob, "retro", "in", 1).wantStatus(t, http.StatusOK)
	e.dot(bob, "retro", "out", 1).wantError(t, http.StatusBadRequest, "noteId")
	e.dot(bob, "retro", "big", 1).wantError(t, http.StatusBadRequest, "noteId")
	// Once the frame is gone no note is in it; a dot can still be taken back.
	e.pushOK(ada, "retro", map[string]any{"frames": map[string]any{"deleted": []string{"f1"}}})
	e.dot(bob, "retro", "in", 1).wantError(t, http.StatusBadRequest, "noteId")
	e.dot(bob, "retro", "in", -1).wantStatus(t, http.StatusOK)
}

// TestVoteIdempotent: a dot retried with its Idempotency-Key (the answer
// was lost) is cast once.
func TestVoteIdempotent(t *testing.T) {
	e, ada, bob, _ := votingBoard(t)
	e.vote(ada, "retro", map[string]any{"action": "start", "perNote": 3}).wantStatus(t, http.StatusOK)
	key := http.Header{"Idempotency-Key": {"dot-once"}}
	var first, again myDots
	e.do("POST", "/api/boards/retro/votes", bob, map[string]any{"noteId": "n1", "delta": 1}, key).want(t, http.StatusOK, &first)
	e.do("POST", "/api/boards/retro/votes", bob, map[string]any{"noteId": "n1", "delta": 1}, key).want(t, http.StatusOK, &again)
	if first.Mine["n1"] != 1 || again.Mine["n1"] != 1 || again.Left != 2 || again.ServerVersion != first.ServerVersion {
		t.Fatalf("a dot, then the same dot retried: %+v then %+v, want one dot", first, again)
	}
	e.do("POST", "/api/boards/retro/votes", bob, map[string]any{"noteId": "n1", "delta": 1}, http.Header{"Idempotency-Key": {"bad key"}}).
		wantError(t, http.StatusBadRequest, "Idempotency-Key")
	e.do("POST", "/api/boards/retro/vote", ada, map[string]any{"action": "start"}, http.Header{"Idempotency-Key": {"bad key"}}).
		wantError(t, http.StatusBadRequest, "Idempotency-Key")
}

// TestVoteHistory: the start and the reveal are in the board's history:
// listed (filtered by action), read as a vote record with the ranking,
// and not restorable.
func TestVoteHistory(t *testing.T) {
	e, ada, bob, _ := votingBoard(t)
	e.vote(ada, "retro", map[string]any{"action": "start", "anonymous": false}).wantStatus(t, http.StatusOK)
	e.dotOK(bob, "retro", "n2", 1)
	e.vote(ada, "retro", map[string]any{"action": "reveal"}).wantStatus(t, http.StatusOK)

	var list struct {
		Entries []struct{ Key, NoteID, Action string } `json:"entries"`
	}
	e.do("GET", "/api/boards/retro/log?action=reveal_vote", bob, nil).want(t, http.StatusOK, &list)
	if len(list.Entries) != 1 || list.Entries[0].Action != "reveal_vote" || list.Entries[0].NoteID != "" {
		t.Fatalf("reveal_vote entries=%+v, want one", list.Entries)
	}
	key := list.Entries[0].Key
	if !strings.HasSuffix(key, "-board") {
		t.Fatalf("key=%q, want the id part board", key)
	}
	a := e.do("GET", "/api/boards/retro/log/"+key, bob, nil)
	a.wantStatus(t, http.StatusOK)
	for _, line := range []string{`state: "revealed"`, "anonymous: false", "| 1 | two (n2) | 1 | bob@example.com |"} {
		if !strings.Contains(string(a.body), line) {
			t.Fatalf("reveal record=%s, want it to hold %q", a.body, line)
		}
	}
	e.do("GET", "/api/boards/retro/log?action=start_vote", bob, nil).want(t, http.StatusOK, &list)
	if len(list.Entries) != 1 {
		t.Fatalf("start_vote entries=%+v, want one", list.Entries)
	}
	for _, typ := range []string{"note", "board"} {
		msg := e.post("/api/boards/retro/log/restore", bob, map[string]string{"logKey": key, "type": typ}).wantError(t, http.StatusBadRequest, "logKey")
		if !strings.Contains(msg, "vote") {
			t.Fatalf("restore as %s says %q, want it to name the vote", typ, msg)
		}
	}
	// A client cannot write a vote's entry itself.
	e.post("/api/boards/retro/log", ada, map[string]any{"entries": []any{map[string]any{"noteId": "", "action": "reveal_vote", "content": "x"}}}).
		wantError(t, http.StatusBadRequest, "entries[0].action")
}
