package board

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func TestVoteActionValidate(t *testing.T) {
	start := func(mod func(a *VoteAction)) VoteAction {
		a := NewVoteAction()
		a.Action = VoteStart
		mod(&a)
		return a
	}
	for _, tc := range []struct {
		name  string
		a     VoteAction
		field string // "" passes
	}{
		{"defaults", start(func(a *VoteAction) {}), ""},
		{"perPerson 1", start(func(a *VoteAction) { a.PerPerson = 1 }), ""},
		{"perPerson 99, perNote 99", start(func(a *VoteAction) { a.PerPerson, a.PerNote = 99, 99 }), ""},
		{"perPerson 0", start(func(a *VoteAction) { a.PerPerson = 0 }), "perPerson"},
		{"perPerson 100", start(func(a *VoteAction) { a.PerPerson = 100 }), "perPerson"},
		{"perNote 0", start(func(a *VoteAction) { a.PerNote = 0 }), "perNote"},
		{"perNote over perPerson", start(func(a *VoteAction) { a.PerPerson, a.PerNote = 2, 3 }), "perNote"},
		{"frame scope", start(func(a *VoteAction) { a.Scope = VoteScope{Kind: ScopeFrame, FrameID: "f1"} }), ""},
		{"frame scope without frame", start(func(a *VoteAction) { a.Scope = VoteScope{Kind: ScopeFrame} }), "scope.frameId"},
		{"frame ID too long", start(func(a *VoteAction) { a.Scope = VoteScope{Kind: ScopeFrame, FrameID: string(make([]byte, MaxIDLen+1))} }), "scope.frameId"},
		{"type scope", start(func(a *VoteAction) { a.Scope = VoteScope{Kind: ScopeType, Type: "idea"} }), ""},
		{"type too long", start(func(a *VoteAction) { a.Scope = VoteScope{Kind: ScopeType, Type: string(make([]byte, MaxShortField+1))} }), "scope.type"},
		{"no kind", start(func(a *VoteAction) { a.Scope = VoteScope{} }), "scope.kind"},
		{"all with frame", start(func(a *VoteAction) { a.Scope = VoteScope{Kind: ScopeAll, FrameID: "f1"} }), "scope"},
		{"close ignores options", VoteAction{Action: VoteClose}, ""},
		{"no action", VoteAction{}, "action"},
		{"unknown action", VoteAction{Action: "open"}, "action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate=%v, want nil", err)
				}
				return
			}
			if e, ok := err.(*Error); !ok || e.Code != EINVALID || e.Field != tc.field {
				t.Fatalf("Validate=%v, want EINVALID on %q", err, tc.field)
			}
		})
	}
}

func TestRank(t *testing.T) {
	rows := []VoteDots{
		{"b@x", "n2", 1}, {"a@x", "n2", 2}, {"a@x", "n1", 1}, {"c@x", "n3", 3}, {"b@x", "n1", 2}, {"c@x", "n4", 0},
	}
	got := Rank(rows, false)
	want := `[{"noteId":"n1","count":3,"voters":["a@x","b@x"]},{"noteId":"n2","count":3,"voters":["a@x","b@x"]},{"noteId":"n3","count":3,"voters":["c@x"]}]`
	if js, _ := json.Marshal(got); string(js) != want {
		t.Fatalf("Rank=%s, want %s", js, want)
	}
	if js, _ := json.Marshal(Rank(rows, true)); string(js) != `[{"noteId":"n1","count":3},{"noteId":"n2","count":3},{"noteId":"n3","count":3}]` {
		t.Fatalf("anonymous Rank=%s, want no voters", js)
	}
	if js, _ := json.Marshal(Rank(nil, true)); string(js) != `[]` {
		t.Fatalf("Rank of nothing=%s, want []", js)
	}
}

// TestVoteJSON: results are in the JSON of a revealed vote only ([] when
// nobody voted), and it reads back as written.
func TestVoteJSON(t *testing.T) {
	open := Vote{ID: "v1", State: VoteOpen, Scope: VoteScope{Kind: ScopeAll}, PerPerson: 3, PerNote: 1, Anonymous: true, StartedBy: "a@x", StartedAt: 5, Voters: 2, Dots: 4}
	js, _ := json.Marshal(open)
	if want := `{"id":"v1","state":"open","scope":{"kind":"all"},"perPerson":3,"perNote":1,"anonymous":true,"endsWithTimer":false,"startedBy":"a@x","startedAt":5,"voters":2,"dots":4}`; string(js) != want {
		t.Fatalf("open vote=%s, want %s", js, want)
	}
	revealed := open
	revealed.State = VoteRevealed
	js, _ = json.Marshal(revealed)
	var back Vote
	if err := json.Unmarshal(js, &back); err != nil || back.Results == nil || len(back.Results) != 0 {
		t.Fatalf("revealed vote=%s read back as %+v (%v), want results []", js, back, err)
	}
}

func TestCastDot(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	open := &Vote{ID: "v1", State: VoteOpen, Scope: VoteScope{Kind: ScopeAll}, PerPerson: 3, PerNote: 2}
	n1 := &Note{ID: "n1"}
	for _, tc := range []struct {
		name       string
		vote       *Vote
		mine       map[string]int
		dot        VoteDot
		note       *Note
		timer      *Timer
		code, fld  string
		count      int
		dots, vtrs int
	}{
		{name: "first dot", vote: open, dot: VoteDot{"n1", 1, "a"}, note: n1, count: 1, dots: 1, vtrs: 1},
		{name: "second on a note", vote: open, mine: map[string]int{"n1": 1}, dot: VoteDot{"n1", 1, "a"}, note: n1, count: 2, dots: 1, vtrs: 0},
		{name: "perNote reached", vote: open, mine: map[string]int{"n1": 2}, dot: VoteDot{"n1", 1, "a"}, note: n1, code: ECONFLICT, fld: "delta"},
		{name: "out of dots", vote: open, mine: map[string]int{"n2": 2, "n3": 1}, dot: VoteDot{"n1", 1, "a"}, note: n1, code: ECONFLICT, fld: "delta"},
		{name: "last dot back", vote: open, mine: map[string]int{"n1": 1}, dot: VoteDot{"n1", -1, "a"}, count: 0, dots: -1, vtrs: -1},
		{name: "take back, none there", vote: open, mine: map[string]int{"n2": 1}, dot: VoteDot{"n1", -1, "a"}, code: ECONFLICT, fld: "delta"},
		{name: "take back from a deleted note", vote: open, mine: map[string]int{"n1": 1, "n2": 1}, dot: VoteDot{"n1", -1, "a"}, count: 0, dots: -1},
		{name: "missing note", vote: open, dot: VoteDot{"n1", 1, "a"}, code: EINVALID, fld: "noteId"},
		{name: "no vote", dot: VoteDot{"n1", 1, "a"}, note: n1, code: ECONFLICT},
		{name: "closed", vote: &Vote{State: VoteClosed, PerPerson: 3, PerNote: 1}, dot: VoteDot{"n1", 1, "a"}, note: n1, code: ECONFLICT},
		{name: "delta 2", vote: open, dot: VoteDot{"n1", 2, "a"}, note: n1, code: EINVALID, fld: "delta"},
		{name: "timer left", vote: &Vote{State: VoteOpen, PerPerson: 3, PerNote: 1, EndsWithTimer: true}, dot: VoteDot{"n1", 1, "a"}, note: n1,
			timer: &Timer{State: TimerRunning, EndsAt: now.UnixMilli() + 1}, count: 1, dots: 1, vtrs: 1},
		{name: "timer at zero", vote: &Vote{State: VoteOpen, PerPerson: 3, PerNote: 1, EndsWithTimer: true}, dot: VoteDot{"n1", 1, "a"}, note: n1,
			timer: &Timer{State: TimerRunning, EndsAt: now.UnixMilli()}, code: ECONFLICT},
		{name: "timer stopped", vote: &Vote{State: VoteOpen, PerPerson: 3, PerNote: 1, EndsWithTimer: true}, dot: VoteDot{"n1", 1, "a"}, note: n1, code: ECONFLICT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, count, err := CastDot(tc.vote, tc.mine, tc.dot, DotTarget{Note: tc.note}, tc.timer, now)
			if tc.code != "" {
				if e, ok := err.(*Error); !ok || e.Code != tc.code || e.Field != tc.fld {
					t.Fatalf("CastDot=%v, want %s on %q", err, tc.code, tc.fld)
				}
				return
			}
			if err != nil || count != tc.count || next.Dots-tc.vote.Dots != tc.dots || next.Voters-tc.vote.Voters != tc.vtrs {
				t.Fatalf("CastDot=%+v, %d, %v; want count %d, dots %+d, voters %+d", next, count, err, tc.count, tc.dots, tc.vtrs)
			}
		})
	}
}

// TestScopeHolds: a frame holds the notes whose centre is inside its box
// (the browser's rule, web/src/editor/structure.ts), a note never sized
// counted at 220×160.
func TestScopeHolds(t *testing.T) {
	frame := &Frame{ID: "f1", X: 0, Y: 0, W: 400, H: 300}
	fs := VoteScope{Kind: ScopeFrame, FrameID: "f1"}
	for _, tc := range []struct {
		n    Note
		want bool
	}{
		{Note{X: 290, Y: 220}, true},              // centre (400, 300): on the corner
		{Note{X: 291, Y: 0}, false},               // centre x 401
		{Note{X: -110, Y: -80}, true},             // centre (0, 0)
		{Note{X: 0, Y: 0, W: 900, H: 100}, false}, // centre x 450
		{Note{X: 300, Y: 0, W: 100, H: 40}, true}, // centre (350, 20)
	} {
		if got := fs.Holds(&tc.n, frame); got != tc.want {
			t.Errorf("frame holds %+v=%v, want %v", tc.n, got, tc.want)
		}
	}
	if fs.Holds(&Note{}, nil) {
		t.Error("a frame scope whose frame is gone holds a note")
	}
	ts := VoteScope{Kind: ScopeType, Type: "idea"}
	if !ts.Holds(&Note{Type: "idea"}, nil) || ts.Holds(&Note{Type: "Idea"}, nil) {
		t.Error("a type scope holds the notes of exactly that type")
	}
}

func TestStartAndCloseVote(t *testing.T) {
	now := time.UnixMilli(7)
	a := NewVoteAction()
	a.Action, a.ID, a.By = VoteStart, "v1", "o@x"
	v, err := StartVote(nil, a, now, nil)
	if err != nil || v.State != VoteOpen || v.StartedAt != 7 || v.StartedBy != "o@x" {
		t.Fatalf("StartVote=%+v, %v", v, err)
	}
	for _, st := range []string{VoteOpen, VoteClosed} {
		if _, err := StartVote(&Vote{State: st}, a, now, nil); ErrorCode(err) != ECONFLICT {
			t.Errorf("start over a %s vote: %v, want ECONFLICT", st, err)
		}
	}
	if _, err := StartVote(&Vote{State: VoteRevealed}, a, now, nil); err != nil {
		t.Errorf("start over a revealed vote: %v", err)
	}
	a.EndsWithTimer = true
	if _, err := StartVote(nil, a, now, &Timer{State: TimerPaused, RemainingMs: 0}); ErrorCode(err) != ECONFLICT {
		t.Errorf("endsWithTimer with a timer at zero: %v, want ECONFLICT", err)
	}
	if _, err := StartVote(nil, a, now, &Timer{State: TimerPaused, RemainingMs: 1}); err != nil {
		t.Errorf("endsWithTimer with a paused timer with time left: %v", err)
	}

	closed, err := CloseVote(v, false, nil)
	if err != nil || closed.State != VoteClosed || closed == v {
		t.Fatalf("close=%+v, %v", closed, err)
	}
	if again, _ := CloseVote(closed, false, nil); again != closed {
		t.Error("close of a closed vote changed it")
	}
	revealed, err := CloseVote(closed, true, []VoteDots{{"a@x", "n1", 1}})
	if err != nil || revealed.State != VoteRevealed || fmt.Sprint(revealed.Results) != "[{n1 1 []}]" {
		t.Fatalf("reveal=%+v, %v", revealed, err)
	}
	if again, _ := CloseVote(revealed, false, nil); again != revealed {
		t.Error("close of a revealed vote changed it")
	}
	if _, err := CloseVote(nil, true, nil); ErrorCode(err) != ECONFLICT {
		t.Errorf("reveal of no vote: %v, want ECONFLICT", err)
	}
}
