package board_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"corkboard/board"
)

var t0 = time.UnixMilli(1_800_000_000_000)

func running(endsAt, duration int64) *board.Timer {
	return &board.Timer{State: board.TimerRunning, DurationMs: duration, EndsAt: endsAt, StartedBy: "ana@example.com", UpdatedAt: t0.UnixMilli()}
}

func paused(left, duration int64) *board.Timer {
	return &board.Timer{State: board.TimerPaused, DurationMs: duration, RemainingMs: left, StartedBy: "ana@example.com", UpdatedAt: t0.UnixMilli()}
}

func TestTimerActionValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a     board.TimerAction
		field string // "" for valid
	}{
		{"OK start shortest", board.TimerAction{Action: "start", DurationMs: 1000}, ""},
		{"OK start longest", board.TimerAction{Action: "start", DurationMs: 86_400_000}, ""},
		{"OK start with phase", board.TimerAction{Action: "start", DurationMs: 60_000, PhaseID: strings.Repeat("p", board.MaxIDLen)}, ""},
		{"OK add most", board.TimerAction{Action: "add", DurationMs: 86_400_000}, ""},
		{"OK add least", board.TimerAction{Action: "add", DurationMs: -86_400_000}, ""},
		{"OK pause", board.TimerAction{Action: "pause"}, ""},
		{"OK resume", board.TimerAction{Action: "resume"}, ""},
		{"OK stop", board.TimerAction{Action: "stop"}, ""},
		{"ErrInvalid no action", board.TimerAction{DurationMs: 1000}, "action"},
		{"ErrInvalid unknown action", board.TimerAction{Action: "reset"}, "action"},
		{"ErrInvalid action case", board.TimerAction{Action: "Start", DurationMs: 1000}, "action"},
		{"ErrInvalid start too short", board.TimerAction{Action: "start", DurationMs: 999}, "durationMs"},
		{"ErrInvalid start without duration", board.TimerAction{Action: "start"}, "durationMs"},
		{"ErrInvalid start too long", board.TimerAction{Action: "start", DurationMs: 86_400_001}, "durationMs"},
		{"ErrInvalid start negative", board.TimerAction{Action: "start", DurationMs: -60_000}, "durationMs"},
		{"ErrInvalid phase too long", board.TimerAction{Action: "start", DurationMs: 60_000, PhaseID: strings.Repeat("p", board.MaxIDLen+1)}, "phaseId"},
		{"ErrInvalid add zero", board.TimerAction{Action: "add"}, "durationMs"},
		{"ErrInvalid add too much", board.TimerAction{Action: "add", DurationMs: 86_400_001}, "durationMs"},
		{"ErrInvalid add too little", board.TimerAction{Action: "add", DurationMs: -86_400_001}, "durationMs"},
		{"ErrInvalid add with phase", board.TimerAction{Action: "add", DurationMs: 1000, PhaseID: "p1"}, "phaseId"},
		{"ErrInvalid pause with duration", board.TimerAction{Action: "pause", DurationMs: 1000}, "durationMs"},
		{"ErrInvalid stop with phase", board.TimerAction{Action: "stop", PhaseID: "p1"}, "phaseId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate()=%v, want nil", err)
				}
				return
			}
			var e *board.Error
			if !asError(err, &e) || e.Code != board.EINVALID || e.Field != tc.field {
				t.Fatalf("Validate()=%v, want EINVALID on field %q", err, tc.field)
			}
		})
	}
}

func asError(err error, e **board.Error) bool {
	be, ok := err.(*board.Error)
	*e = be
	return ok
}

func TestApplyTimer(t *testing.T) {
	now := t0.Add(10 * time.Second)
	nowMs := now.UnixMilli()
	by := "bo@example.com"
	for _, tc := range []struct {
		name string
		cur  *board.Timer
		a    board.TimerAction
		want *board.Timer // nil with same false: no timer after
		same bool         // the answer is cur itself: nothing changed
		code string       // error code, "" for none
	}{
		{name: "OK start without timer", a: board.TimerAction{Action: "start", DurationMs: 300_000, PhaseID: "p1"},
			want: &board.Timer{State: "running", DurationMs: 300_000, EndsAt: nowMs + 300_000, PhaseID: "p1", StartedBy: by, UpdatedAt: nowMs}},
		{name: "OK start replaces a running timer", cur: running(nowMs+5000, 60_000), a: board.TimerAction{Action: "start", DurationMs: 60_000},
			want: &board.Timer{State: "running", DurationMs: 60_000, EndsAt: nowMs + 60_000, StartedBy: by, UpdatedAt: nowMs}},
		{name: "OK pause keeps what is left", cur: running(nowMs+42_500, 60_000), a: board.TimerAction{Action: "pause"},
			want: &board.Timer{State: "paused", DurationMs: 60_000, RemainingMs: 42_500, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK pause of an ended timer is paused at zero", cur: running(nowMs-1, 60_000), a: board.TimerAction{Action: "pause"},
			want: &board.Timer{State: "paused", DurationMs: 60_000, RemainingMs: 0, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK pause of a paused timer changes nothing", cur: paused(5000, 60_000), a: board.TimerAction{Action: "pause"}, same: true},
		{name: "OK resume runs from now", cur: paused(42_500, 60_000), a: board.TimerAction{Action: "resume"},
			want: &board.Timer{State: "running", DurationMs: 60_000, EndsAt: nowMs + 42_500, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK resume of a running timer changes nothing", cur: running(nowMs+1000, 60_000), a: board.TimerAction{Action: "resume"}, same: true},
		{name: "OK add to a running timer", cur: running(nowMs+30_000, 60_000), a: board.TimerAction{Action: "add", DurationMs: 60_000},
			want: &board.Timer{State: "running", DurationMs: 120_000, EndsAt: nowMs + 90_000, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK add to a paused timer", cur: paused(30_000, 60_000), a: board.TimerAction{Action: "add", DurationMs: 60_000},
			want: &board.Timer{State: "paused", DurationMs: 120_000, RemainingMs: 90_000, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK add to an ended timer runs again", cur: running(nowMs-5000, 60_000), a: board.TimerAction{Action: "add", DurationMs: 60_000},
			want: &board.Timer{State: "running", DurationMs: 120_000, EndsAt: nowMs + 60_000, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK taking more than is left stops at zero", cur: running(nowMs+10_000, 60_000), a: board.TimerAction{Action: "add", DurationMs: -60_000},
			want: &board.Timer{State: "running", DurationMs: 50_000, EndsAt: nowMs, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK taking from a paused timer stops at zero", cur: paused(10_000, 60_000), a: board.TimerAction{Action: "add", DurationMs: -86_400_000},
			want: &board.Timer{State: "paused", DurationMs: 50_000, RemainingMs: 0, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "OK taking from a timer at zero changes nothing", cur: running(nowMs-1, 60_000), a: board.TimerAction{Action: "add", DurationMs: -1000}, same: true},
		{name: "OK add up to 24 hours left", cur: running(nowMs+1000, 60_000), a: board.TimerAction{Action: "add", DurationMs: 86_399_000},
			want: &board.Timer{State: "running", DurationMs: 86_459_000, EndsAt: nowMs + 86_400_000, StartedBy: "ana@example.com", UpdatedAt: nowMs}},
		{name: "ErrInvalid add past 24 hours left", cur: running(nowMs+1001, 60_000), a: board.TimerAction{Action: "add", DurationMs: 86_399_000}, code: board.EINVALID},
		{name: "OK stop", cur: running(nowMs+1000, 60_000), a: board.TimerAction{Action: "stop"}},
		{name: "OK stop without timer changes nothing", a: board.TimerAction{Action: "stop"}, same: true},
		{name: "ErrConflict pause without timer", a: board.TimerAction{Action: "pause"}, code: board.ECONFLICT},
		{name: "ErrConflict resume without timer", a: board.TimerAction{Action: "resume"}, code: board.ECONFLICT},
		{name: "ErrConflict add without timer", a: board.TimerAction{Action: "add", DurationMs: 1000}, code: board.ECONFLICT},
		{name: "ErrInvalid start too long", cur: running(nowMs+1000, 60_000), a: board.TimerAction{Action: "start", DurationMs: 86_400_001}, code: board.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before board.Timer
			if tc.cur != nil {
				before = *tc.cur
			}
			got, err := board.ApplyTimer(tc.cur, tc.a, now, by)
			if tc.code != "" {
				if board.ErrorCode(err) != tc.code || got != nil {
					t.Fatalf("ApplyTimer=%+v, %v; want nil and code %s", got, err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyTimer: %v", err)
			}
			if tc.cur != nil && *tc.cur != before {
				t.Fatalf("ApplyTimer changed its input: %+v, was %+v", *tc.cur, before)
			}
			if tc.same {
				if got != tc.cur {
					t.Fatalf("ApplyTimer=%+v, want the timer it was given (nothing changes)", got)
				}
				return
			}
			if got == tc.cur && got != nil {
				t.Fatalf("ApplyTimer answered its input, want a new timer")
			}
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("ApplyTimer=%+v, want no timer", *got)
			case tc.want != nil && (got == nil || *got != *tc.want):
				t.Fatalf("ApplyTimer=%+v, want %+v", got, *tc.want)
			}
		})
	}
}

func TestTimerJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    board.Timer
		want string
	}{
		{"OK running", *running(1_800_000_060_000, 60_000),
			`{"state":"running","durationMs":60000,"endsAt":1800000060000,"startedBy":"ana@example.com","updatedAt":1800000000000}`},
		{"OK paused at zero says remainingMs", *paused(0, 60_000),
			`{"state":"paused","durationMs":60000,"remainingMs":0,"startedBy":"ana@example.com","updatedAt":1800000000000}`},
		{"OK phase", board.Timer{State: "running", DurationMs: 1000, EndsAt: 5, PhaseID: "p1", StartedBy: "a@b.c", UpdatedAt: 4},
			`{"state":"running","durationMs":1000,"endsAt":5,"phaseId":"p1","startedBy":"a@b.c","updatedAt":4}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.t)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("Marshal=%s, want %s", b, tc.want)
			}
			var back board.Timer
			if err := json.Unmarshal(b, &back); err != nil || back != tc.t {
				t.Fatalf("Unmarshal=%+v, %v; want %+v", back, err, tc.t)
			}
		})
	}
	t.Run("OK no timer is left out of the header", func(t *testing.T) {
		b, _ := json.Marshal(board.Header{ID: "b", Version: 3})
		if strings.Contains(string(b), "timer") {
			t.Fatalf("Marshal=%s, want no timer", b)
		}
	})
	t.Run("OK a push never decodes a timer", func(t *testing.T) {
		var p board.Push
		if err := json.Unmarshal([]byte(`{"clientVersion":1,"Timer":{"action":"start","durationMs":1000},"timer":{"action":"stop"}}`), &p); err != nil {
			t.Fatal(err)
		}
		if p.Timer != nil {
			t.Fatalf("Timer=%+v, want nil", *p.Timer)
		}
	})
}

func TestPhasesHas(t *testing.T) {
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"disc","name":"Discovery"}`), json.RawMessage(`{"id":"build"}`)}}
	for _, tc := range []struct {
		ph   *board.Phases
		id   string
		want bool
	}{
		{ph, "disc", true},
		{ph, "build", true},
		{ph, "Discovery", false},
		{ph, "", false},
		{nil, "disc", false},
	} {
		if got := tc.ph.Has(tc.id); got != tc.want {
			t.Errorf("Has(%q)=%v, want %v", tc.id, got, tc.want)
		}
	}
	a := board.TimerAction{Action: "start", DurationMs: 1000, PhaseID: "launch"}
	if err := a.CheckPhase(ph); board.ErrorCode(err) != board.EINVALID {
		t.Errorf("CheckPhase(unknown)=%v, want EINVALID", err)
	}
	a.PhaseID = "build"
	if err := a.CheckPhase(ph); err != nil {
		t.Errorf("CheckPhase(build)=%v, want nil", err)
	}
}
