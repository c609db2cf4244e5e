package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runVote: the board's dot vote is part of the header, moved by pushes
// carrying a vote action or a dot (board.Push.Vote, Dot); the dots are
// rows of their own, written in the push's transaction.
func runVote(t *testing.T, open Opener) {
	t.Run("Lifecycle", func(t *testing.T) { testVoteLifecycle(t, open) })
	t.Run("Limits", func(t *testing.T) { testVoteLimits(t, open) })
	t.Run("Batch", func(t *testing.T) { testVoteBatch(t, open) })
	t.Run("ConcurrentVoters", func(t *testing.T) { testVoteConcurrent(t, open) })
}

func voteStart(mod func(a *board.VoteAction)) *board.Push {
	a := board.NewVoteAction()
	a.Action, a.ID, a.By = board.VoteStart, "v1", Owner
	if mod != nil {
		mod(&a)
	}
	return &board.Push{Vote: &a}
}

func voteAct(action string) *board.Push {
	return &board.Push{Vote: &board.VoteAction{Action: action, By: Owner}}
}

func dotPush(who, noteID string, delta int) *board.Push {
	return &board.Push{Dot: &board.VoteDot{NoteID: noteID, Delta: delta, By: who}}
}

// applyOne applies one push and returns its outcome, failing the test on
// an error of the call itself.
func applyOne(tb testing.TB, s persist.SyncStore, p *board.Push, key string) persist.Applied {
	tb.Helper()
	res, err := s.ApplyPushes(context.Background(), "b1", []persist.PushInput{{Push: p, IdempotencyKey: key}})
	if err != nil {
		tb.Fatalf("ApplyPushes: %v", err)
	}
	return res[0]
}

// headerVote is b1's vote as a full pull, the board and its state agree on.
func headerVote(tb testing.TB, s persist.Store) *board.Vote {
	tb.Helper()
	full := changes(tb, s, "b1", 0)
	b, err := s.FindBoard(context.Background(), "b1")
	if err != nil {
		tb.Fatal(err)
	}
	st, err := s.BoardState(context.Background(), "b1")
	if err != nil {
		tb.Fatal(err)
	}
	want := voteJSON(full.Board.Vote)
	if voteJSON(b.Vote) != want || voteJSON(st.Board.Vote) != want {
		tb.Fatalf("vote: pull %s, board %s, state %s; want them equal", want, voteJSON(b.Vote), voteJSON(st.Board.Vote))
	}
	return full.Board.Vote
}

func voteJSON(v *board.Vote) string {
	if v == nil {
		return "null"
	}
	js, _ := v.MarshalJSON()
	return string(js)
}

func myDots(tb testing.TB, s persist.Store, email string) (string, map[string]int) {
	tb.Helper()
	v, mine, err := s.MyDots(context.Background(), "b1", email)
	if err != nil {
		tb.Fatalf("MyDots(%s): %v", email, err)
	}
	if v == nil {
		return "", mine
	}
	return v.ID, mine
}

func sameDots(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// testVoteLifecycle: start, dots, reveal and clear, read back from every
// read; the start and the reveal are in the changelog.
func testVoteLifecycle(t *testing.T, open Opener) {
	s, clock := openWith(t, open, T0, "b1")
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "a"), note("n2", "b"), note("n3", "c")}}}, "")
	updatedAt := changes(t, s, "b1", 0).Board.UpdatedAt
	clock.Advance(time.Minute)

	a := applyOne(t, s, voteStart(nil), "")
	if a.Err != nil || a.Version != 2 || a.Changes == nil || a.Changes.Board.Vote == nil || a.Changes.Board.Vote.State != board.VoteOpen {
		t.Fatalf("start: %+v, want version 2 with an open vote", a)
	}
	if v := headerVote(t, s); v.ID != "v1" || v.StartedAt != clock.Now().UnixMilli() || v.StartedBy != Owner || v.PerPerson != 3 {
		t.Fatalf("vote=%s", voteJSON(v))
	}
	const ann, ben = "ann@example.com", "ben@example.com"
	for i, d := range []*board.Push{dotPush(ann, "n1", 1), dotPush(ann, "n2", 1), dotPush(ben, "n1", 1), dotPush(ann, "n2", -1), dotPush(ben, "n3", 1)} {
		if a := applyOne(t, s, d, ""); a.Err != nil || a.Version != int64(3+i) || len(a.Changes.Notes) != 0 {
			t.Fatalf("dot %d: %+v, want version %d and no row", i, a, 3+i)
		}
	}
	wantTotals(t, s, 2, 3, map[string]map[string]int{ann: {"n1": 1}, ben: {"n1": 1, "n3": 1}})
	if got := changes(t, s, "b1", 0).Board.UpdatedAt; got != updatedAt {
		t.Fatalf("updatedAt=%q after votes, want %q (the content did not change)", got, updatedAt)
	}
	testVoteReveal(t, s)
	testVoteClear(t, s)
}

// wantTotals fails unless b1's open vote has voters and dots, and each
// person the dots given.
func wantTotals(t *testing.T, s persist.Store, voters, dots int, each map[string]map[string]int) {
	t.Helper()
	if v := headerVote(t, s); v.Voters != voters || v.Dots != dots || v.Results != nil {
		t.Fatalf("vote=%s, want %d voters, %d dots, no results", voteJSON(v), voters, dots)
	}
	for who, want := range each {
		if id, mine := myDots(t, s, who); id != "v1" || !sameDots(mine, want) {
			t.Fatalf("%s's dots: %s %v, want %v", who, id, mine, want)
		}
	}
}

// testVoteReveal closes and reveals the lifecycle's vote (ann on n1, ben
// on n1 and n3): ranked by count, ties by note ID, anonymous; the history
// has the start and the reveal, with the ranking.
func testVoteReveal(t *testing.T, s persist.Store) {
	const ann = "ann@example.com"
	if a := applyOne(t, s, voteAct(board.VoteClose), ""); a.Err != nil || a.Changes.Board.Vote.State != board.VoteClosed {
		t.Fatalf("close: %+v", a)
	}
	if a := applyOne(t, s, dotPush(ann, "n2", 1), ""); board.ErrorCode(a.Err) != board.ECONFLICT {
		t.Fatalf("dot on a closed vote: %+v, want ECONFLICT", a)
	}
	a := applyOne(t, s, voteAct(board.VoteReveal), "")
	want := []board.VoteResult{{NoteID: "n1", Count: 2}, {NoteID: "n3", Count: 1}}
	if a.Err != nil || fmt.Sprint(a.Changes.Board.Vote.Results) != fmt.Sprint(want) {
		t.Fatalf("reveal: %+v, want results %v", a, want)
	}
	if v := headerVote(t, s); v.State != board.VoteRevealed || fmt.Sprint(v.Results) != fmt.Sprint(want) {
		t.Fatalf("vote after reveal=%s", voteJSON(v))
	}
	// A reveal again changes nothing.
	if a2 := applyOne(t, s, voteAct(board.VoteReveal), ""); a2.Err != nil || a2.Version != a.Version || a2.Changes != nil {
		t.Fatalf("second reveal: %+v, want version %d unchanged", a2, a.Version)
	}

	entries, err := s.ListLog(context.Background(), "b1", persist.LogQuery{Limit: 10})
	if err != nil || len(entries) != 2 || entries[0].Action != persist.ActionRevealVote || entries[1].Action != persist.ActionStartVote {
		t.Fatalf("ListLog=%+v, %v; want reveal_vote then start_vote", entries, err)
	}
	e, err := s.FindLogEntry(context.Background(), "b1", entries[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`state: "revealed"`, "voters: 2", "| 1 | T n1 (n1) | 2 |  |", "| 2 | T n3 (n3) | 1 |  |"} {
		if !strings.Contains(string(e.Content), line) {
			t.Fatalf("reveal entry=%s, want it to hold %q", e.Content, line)
		}
	}
}

// testVoteClear clears the lifecycle's vote: the vote and its rows go.
func testVoteClear(t *testing.T, s persist.Store) {
	if a := applyOne(t, s, voteAct(board.VoteClear), ""); a.Err != nil || a.Changes.Board.Vote != nil {
		t.Fatalf("clear: %+v", a)
	}
	if v := headerVote(t, s); v != nil {
		t.Fatalf("vote after clear=%s", voteJSON(v))
	}
	if id, mine := myDots(t, s, "ben@example.com"); id != "" || len(mine) != 0 {
		t.Fatalf("ben's dots after clear: %q %v", id, mine)
	}
	if a := applyOne(t, s, voteAct(board.VoteClear), ""); a.Err != nil || a.Changes != nil {
		t.Fatalf("clear of no vote: %+v, want no change", a)
	}
}

// testVoteLimits: each refusal is the push's own error and writes
// nothing, not even its key; the edges pass.
func testVoteLimits(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	n4 := note("n4", "")
	n4.Type = "risk"
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", ""), note("n2", ""), note("n3", ""), n4}}}, "")
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Deleted: []string{"n3"}}}, "")
	const ann = "ann@example.com"
	if a := applyOne(t, s, dotPush(ann, "n1", 1), "r"); board.ErrorCode(a.Err) != board.ECONFLICT {
		t.Fatalf("dot without a vote: %+v, want ECONFLICT", a)
	}
	mustPush(t, s, "b1", voteStart(func(a *board.VoteAction) {
		a.PerPerson, a.PerNote, a.Scope = 3, 2, board.VoteScope{Kind: board.ScopeType, Type: "sticky"}
	}), "")
	key := "r" // until a dot with it is cast
	refuse := func(p *board.Push, code, field string) {
		t.Helper()
		before := changes(t, s, "b1", 0).ServerVersion
		a := applyOne(t, s, p, key)
		var e *board.Error
		if !asBoardError(a.Err, &e) || e.Code != code || e.Field != field || a.Changes != nil {
			t.Fatalf("%+v: %+v, want %s on %q", p.Dot, a, code, field)
		}
		if after := changes(t, s, "b1", 0).ServerVersion; after != before {
			t.Fatalf("a refused dot moved the version %d → %d", before, after)
		}
	}
	refuse(dotPush(ann, "n9", 1), board.EINVALID, "noteId")                          // missing
	refuse(dotPush(ann, "n3", 1), board.EINVALID, "noteId")                          // deleted
	refuse(dotPush(ann, "n4", 1), board.EINVALID, "noteId")                          // outside the scope
	refuse(dotPush(ann, "n1", -1), board.ECONFLICT, "delta")                         // none to take back
	if a := applyOne(t, s, dotPush(ann, "n1", 1), "r"); a.Err != nil || a.Replayed { // refused pushes kept no key
		t.Fatalf("dot with the refused pushes' key: %+v, want it cast", a)
	}
	key = ""
	mustPush(t, s, "b1", dotPush(ann, "n1", 1), "")
	refuse(dotPush(ann, "n1", 1), board.ECONFLICT, "delta") // perNote 2 reached
	mustPush(t, s, "b1", dotPush(ann, "n2", 1), "")
	refuse(dotPush(ann, "n2", 1), board.ECONFLICT, "delta") // 3 of 3 used
	if _, mine := myDots(t, s, ann); !sameDots(mine, map[string]int{"n1": 2, "n2": 1}) {
		t.Fatalf("ann's dots=%v", mine)
	}
	// A replayed dot is not cast again.
	if a := applyOne(t, s, dotPush(ann, "n1", -1), "back"); a.Err != nil {
		t.Fatal(a.Err)
	}
	if a := applyOne(t, s, dotPush(ann, "n1", -1), "back"); a.Err != nil || !a.Replayed {
		t.Fatalf("replay: %+v", a)
	}
	if v := headerVote(t, s); v.Dots != 2 || v.Voters != 1 {
		t.Fatalf("vote=%s, want 2 dots of 1 voter", voteJSON(v))
	}
	// Starting again while open is refused; the frame of a scope must be live.
	if a := applyOne(t, s, voteStart(nil), ""); board.ErrorCode(a.Err) != board.ECONFLICT {
		t.Fatalf("start while open: %+v, want ECONFLICT", a)
	}
	mustPush(t, s, "b1", voteAct(board.VoteReveal), "")
	var e *board.Error
	a := applyOne(t, s, voteStart(func(a *board.VoteAction) {
		a.ID, a.Scope = "v2", board.VoteScope{Kind: board.ScopeFrame, FrameID: "f1"}
	}), "")
	if !asBoardError(a.Err, &e) || e.Field != "scope.frameId" {
		t.Fatalf("start on a missing frame: %+v, want EINVALID on scope.frameId", a)
	}
	// A start replaces the revealed vote, whose rows go.
	mustPush(t, s, "b1", voteStart(func(a *board.VoteAction) { a.ID = "v2" }), "")
	if id, mine := myDots(t, s, ann); id != "v2" || len(mine) != 0 {
		t.Fatalf("ann's dots in the new vote: %q %v", id, mine)
	}
}

// testVoteBatch: dots in one ApplyPushes call each see the ones before
// them: a person's limit holds inside a batch.
func testVoteBatch(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", ""), note("n2", "")}}}, "")
	mustPush(t, s, "b1", voteStart(func(a *board.VoteAction) { a.PerPerson = 2 }), "")
	const ann = "ann@example.com"
	in := []persist.PushInput{{Push: dotPush(ann, "n1", 1)}, {Push: dotPush(ann, "n1", 1)}, {Push: dotPush(ann, "n2", 1)}, {Push: dotPush(ann, "n1", -1)}, {Push: dotPush(ann, "n2", 1)}}
	res, err := s.ApplyPushes(context.Background(), "b1", in)
	if err != nil {
		t.Fatal(err)
	}
	wantErr := []string{"", board.ECONFLICT, "", "", board.ECONFLICT}
	for i, r := range res {
		if board.ErrorCode(r.Err) != wantErr[i] {
			t.Fatalf("push %d: %+v, want error %q", i, r, wantErr[i])
		}
	}
	if res[3].Version != 5 || res[3].Changes.Board.Vote.Dots != 1 {
		t.Fatalf("4th push: %+v, want version 5 with 1 dot", res[3])
	}
	if _, mine := myDots(t, s, ann); !sameDots(mine, map[string]int{"n2": 1}) {
		t.Fatalf("ann's dots=%v, want n2", mine)
	}
}

// testVoteConcurrent: many people voting at once never conflict, and the
// totals and every person's limit are exact: each casts one dot more than
// allowed, all at once; exactly perPerson each pass.
func testVoteConcurrent(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	const voters, per, notes = 24, 3, 5
	var ns []board.Note
	for i := range notes {
		ns = append(ns, note(fmt.Sprintf("n%d", i), ""))
	}
	mustPush(t, s, "b1", &board.Push{Notes: board.NoteChanges{Upserted: ns}}, "")
	mustPush(t, s, "b1", voteStart(func(a *board.VoteAction) { a.PerPerson, a.PerNote, a.Anonymous = per, per, false }), "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed, refused := map[string]int{}, 0
	for v := range voters {
		who := fmt.Sprintf("p%02d@example.com", v)
		for d := range per + 1 {
			wg.Go(func() {
				_, _, err := applyPush(context.Background(), s, "b1", dotPush(who, fmt.Sprintf("n%d", (v+d)%notes), 1), "")
				mu.Lock()
				defer mu.Unlock()
				switch board.ErrorCode(err) {
				case "":
					passed[who]++
				case board.ECONFLICT:
					refused++
				default:
					t.Errorf("dot of %s: %v", who, err)
				}
			})
		}
	}
	wg.Wait()
	if refused != voters {
		t.Fatalf("%d dots refused, want %d (one per person)", refused, voters)
	}
	for who, n := range passed {
		if n != per {
			t.Fatalf("%s cast %d dots, want %d", who, n, per)
		}
		total := 0
		_, mine := myDots(t, s, who)
		for _, c := range mine {
			total += c
		}
		if total != per {
			t.Fatalf("%s has %v stored, want %d dots", who, mine, per)
		}
	}
	v := headerVote(t, s)
	if v.Voters != voters || v.Dots != voters*per {
		t.Fatalf("vote=%s, want %d voters and %d dots", voteJSON(v), voters, voters*per)
	}
	if got := changes(t, s, "b1", 0).ServerVersion; got != 2+voters*per {
		t.Fatalf("version=%d, want %d (one per dot cast)", got, 2+voters*per)
	}
	mustPush(t, s, "b1", voteAct(board.VoteReveal), "")
	sum, seen := 0, map[string]bool{}
	for _, r := range headerVote(t, s).Results {
		sum += r.Count
		for _, e := range r.Voters {
			seen[e] = true
		}
	}
	if sum != voters*per || len(seen) != voters {
		t.Fatalf("results count %d dots of %d voters, want %d of %d", sum, len(seen), voters*per, voters)
	}
}

// testVoteSurvivesReopen: the vote is stored with the board, its dots as
// rows.
func testVoteSurvivesReopen(t *testing.T, durable Durable) {
	ctx := context.Background()
	clock := NewClock(T0)
	db, open := first(t, durable, clock.Now)
	if _, err := db.ClaimBoard(ctx, "b1", Owner); err != nil {
		t.Fatal(err)
	}
	mustPush(t, db, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "")}}}, "")
	mustPush(t, db, "b1", voteStart(nil), "")
	mustPush(t, db, "b1", dotPush("ann@example.com", "n1", 1), "")
	before := headerVote(t, db)
	db2 := reopen(t, db, open, clock.Now)
	if got := headerVote(t, db2); voteJSON(got) != voteJSON(before) || got.Dots != 1 {
		t.Fatalf("vote after reopening=%s, want %s", voteJSON(got), voteJSON(before))
	}
	if _, mine := myDots(t, db2, "ann@example.com"); !sameDots(mine, map[string]int{"n1": 1}) {
		t.Fatalf("ann's dots after reopening=%v", mine)
	}
}
