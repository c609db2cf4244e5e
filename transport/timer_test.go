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

var timerT0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// timerAnswer is the 200 body of POST /timer.
type timerAnswer struct {
	Timer         *board.Timer `json:"timer"`
	ServerVersion int64        `json:"serverVersion"`
	ServerTime    int64        `json:"serverTime"`
}

func (e *env) timer(session, id string, body any) answer {
	e.tb.Helper()
	return e.post("/api/boards/"+id+"/timer", session, body)
}

func TestTimerEndpoint(t *testing.T) {
	e := newEnv(t, withClock(timerT0))
	ada := e.claim("ada@example.com", "retro")
	bob := e.invite(ada, "retro", "bob@example.com", billing.Pro)
	t0 := timerT0.UnixMilli()

	// Start: the answer is the timer in server time, at the new version.
	var got timerAnswer
	e.timer(ada, "retro", map[string]any{"action": "start", "durationMs": 300_000}).want(t, http.StatusOK, &got)
	want := board.Timer{State: "running", DurationMs: 300_000, EndsAt: t0 + 300_000, StartedBy: "ada@example.com", UpdatedAt: t0}
	if got.Timer == nil || *got.Timer != want || got.ServerVersion != 1 || got.ServerTime != t0 {
		t.Fatalf("start answered %+v (timer %+v), want %+v at version 1, serverTime %d", got, got.Timer, want, t0)
	}

	// Everyone's pull has it in the board header.
	if ch := e.pull(bob, "retro", 0); ch.Board.Timer == nil || *ch.Board.Timer != want || ch.ServerVersion != 1 {
		t.Fatalf("bob's pull: board %+v at %d, want the timer at version 1", ch.Board, ch.ServerVersion)
	}

	// Pause a minute later.
	e.clock.Advance(time.Minute)
	e.timer(ada, "retro", map[string]any{"action": "pause"}).want(t, http.StatusOK, &got)
	if got.Timer == nil || got.Timer.State != "paused" || got.Timer.RemainingMs != 240_000 || got.ServerVersion != 2 || got.ServerTime != t0+60_000 {
		t.Fatalf("pause answered %+v (timer %+v), want paused with 240000 left at version 2", got, got.Timer)
	}
	// Pausing again changes nothing, and says so with the same version.
	e.timer(ada, "retro", map[string]any{"action": "pause"}).want(t, http.StatusOK, &got)
	if got.ServerVersion != 2 || got.Timer == nil || got.Timer.RemainingMs != 240_000 {
		t.Fatalf("second pause answered %+v, want the same timer at version 2", got)
	}

	// Stop: null in the answer, and no "timer" key in a pull's header, as
	// before any timer (a spec client sees nothing new).
	a := e.timer(ada, "retro", map[string]any{"action": "stop"})
	a.wantExactObject(t, http.StatusOK, map[string]any{"timer": nil, "serverVersion": 3.0, "serverTime": float64(t0 + 60_000)})
	pull := e.do("GET", "/api/boards/retro/sync?since=2", bob, nil)
	pull.wantStatus(t, http.StatusOK)
	if strings.Contains(string(pull.body), "timer") {
		t.Fatalf("pull after stop=%s, want no timer", pull.body)
	}
	var ch board.Changes
	if err := json.Unmarshal(pull.body, &ch); err != nil || ch.ServerVersion != 3 {
		t.Fatalf("pull after stop=%s (%v), want version 3", pull.body, err)
	}
}

func TestTimerEndpointRefuses(t *testing.T) {
	e := newEnv(t, withClock(timerT0))
	ada := e.claim("ada@example.com", "retro")
	bob := e.invite(ada, "retro", "bob@example.com", billing.Pro)
	eve := e.login("eve@example.com")
	start := map[string]any{"action": "start", "durationMs": 60_000}

	t.Run("ErrUnauthorized", func(t *testing.T) {
		e.timer("", "retro", start).wantError(t, http.StatusUnauthorized, "")
	})
	t.Run("ErrForbidden editor", func(t *testing.T) {
		msg := e.timer(bob, "retro", start).wantError(t, http.StatusForbidden, "")
		if !strings.Contains(msg, "owner") {
			t.Fatalf("403 says %q, want it to name the owner", msg)
		}
	})
	t.Run("ErrForbidden stranger", func(t *testing.T) {
		e.timer(eve, "retro", start).wantError(t, http.StatusForbidden, "")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e.timer(ada, "nobody-claimed-this", start).wantError(t, http.StatusNotFound, "")
	})
	t.Run("ErrConflict", func(t *testing.T) {
		for _, action := range []string{"pause", "resume"} {
			e.timer(ada, "retro", map[string]any{"action": action}).wantError(t, http.StatusConflict, "")
		}
		e.timer(ada, "retro", map[string]any{"action": "add", "durationMs": 60_000}).wantError(t, http.StatusConflict, "")
	})
	for _, tc := range []struct {
		name, body, field string
	}{
		{"no action", `{"durationMs":60000}`, "action"},
		{"unknown action", `{"action":"restart"}`, "action"},
		{"start too short", `{"action":"start","durationMs":999}`, "durationMs"},
		{"start too long", `{"action":"start","durationMs":86400001}`, "durationMs"},
		{"duration not an integer", `{"action":"start","durationMs":1500.5}`, "durationMs"},
		{"duration a string", `{"action":"start","durationMs":"60000"}`, "durationMs"},
		{"unknown field", `{"action":"start","durationMs":60000,"endsAt":1}`, "endsAt"},
		{"unknown phase", `{"action":"start","durationMs":60000,"phaseId":"build"}`, "phaseId"},
		{"add zero", `{"action":"add","durationMs":0}`, "durationMs"},
		{"pause with duration", `{"action":"pause","durationMs":1000}`, "durationMs"},
	} {
		t.Run("ErrInvalid "+tc.name, func(t *testing.T) {
			e.timer(ada, "retro", tc.body).wantError(t, http.StatusBadRequest, tc.field)
		})
	}
	t.Run("ErrInvalid not JSON", func(t *testing.T) {
		e.timer(ada, "retro", `{"action":`).wantStatus(t, http.StatusBadRequest)
	})
	// Nothing above moved the board.
	if ch := e.pull(ada, "retro", 0); ch.ServerVersion != 0 || ch.Board.Timer != nil {
		t.Fatalf("after refused actions: version %d, timer %+v; want 0 and none", ch.ServerVersion, ch.Board.Timer)
	}

	// The edges of start are accepted.
	for _, ms := range []int64{board.MinTimerMs, board.MaxTimerMs} {
		var got timerAnswer
		e.timer(ada, "retro", map[string]any{"action": "start", "durationMs": ms}).want(t, http.StatusOK, &got)
		if got.Timer == nil || got.Timer.DurationMs != ms {
			t.Fatalf("start of %d ms answered %+v", ms, got)
		}
	}
	// 24 hours left is the most a timer may have.
	e.timer(ada, "retro", map[string]any{"action": "add", "durationMs": 1}).wantError(t, http.StatusBadRequest, "durationMs")
}

func TestServerTime(t *testing.T) {
	e := newEnv(t, withClock(timerT0))
	a := e.do("GET", "/api/time", "", nil)
	a.wantExactObject(t, http.StatusOK, map[string]any{"serverTime": float64(timerT0.UnixMilli())})
	if got := a.header.Get("Cache-Control"); got != "no-store" {
		t.Fatalf("Cache-Control=%q, want no-store", got)
	}
	e.do("POST", "/api/time", "", nil).wantStatus(t, http.StatusMethodNotAllowed)
}

// TestTimerEndpointIdempotent: an action retried with its Idempotency-Key
// (the answer was lost) is applied once: two "add"s with one key add one
// minute, another key adds another.
func TestTimerEndpointIdempotent(t *testing.T) {
	e := newEnv(t, withClock(timerT0))
	ada := e.claim("ada@example.com", "retro")
	e.timer(ada, "retro", map[string]any{"action": "start", "durationMs": 300_000}).wantStatus(t, http.StatusOK)
	add := map[string]any{"action": "add", "durationMs": 60_000}
	key := http.Header{"Idempotency-Key": {"add-once"}}
	var first, again, other timerAnswer
	e.do("POST", "/api/boards/retro/timer", ada, add, key).want(t, http.StatusOK, &first)
	e.do("POST", "/api/boards/retro/timer", ada, add, key).want(t, http.StatusOK, &again)
	if first.Timer == nil || first.Timer.DurationMs != 360_000 || again.Timer == nil || again.Timer.DurationMs != 360_000 || again.ServerVersion != first.ServerVersion {
		t.Fatalf("add, then the same add retried: %+v then %+v, want 360000 ms once at one version", first.Timer, again.Timer)
	}
	e.do("POST", "/api/boards/retro/timer", ada, add, http.Header{"Idempotency-Key": {"add-twice"}}).want(t, http.StatusOK, &other)
	if other.Timer == nil || other.Timer.DurationMs != 420_000 {
		t.Fatalf("an add with another key: %+v, want 420000 ms", other.Timer)
	}
	e.do("POST", "/api/boards/retro/timer", ada, add, http.Header{"Idempotency-Key": {"bad key"}}).wantError(t, http.StatusBadRequest, "Idempotency-Key")
}
