package board

import (
	"encoding/json"
	"time"
)

// Timer states (Timer.State).
const (
	TimerRunning = "running"
	TimerPaused  = "paused"
)

// Timer actions (TimerAction.Action).
const (
	TimerStart  = "start"
	TimerPause  = "pause"
	TimerResume = "resume"
	TimerAdd    = "add"
	TimerStop   = "stop"
)

// Timer limits: a start runs at least MinTimerMs and at most MaxTimerMs,
// an add moves the remaining time by at most MaxTimerMs either way, and no
// timer ever has more than MaxTimerMs left (docs/api.md, "The board's
// timer").
const (
	MinTimerMs = int64(time.Second / time.Millisecond)
	MaxTimerMs = int64(24 * time.Hour / time.Millisecond)
)

// Timer is a board's countdown, which every client shows (docs/live-
// protocol.md, "The timer"). Its times are the server's clock in unix
// milliseconds: a client turns EndsAt into remaining time with its
// estimate of the offset between its clock and the server's, never with
// its own clock alone.
type Timer struct {
	// State is TimerRunning or TimerPaused; a board without a timer has
	// none (nil), not a state of its own.
	State string `json:"state"`
	// DurationMs is what the timer was started with, plus every addition
	// (as applied: an addition that would go below zero counts what it
	// took).
	DurationMs int64 `json:"durationMs"`
	// EndsAt is when a running timer reaches zero; it stays running after
	// that, at zero, until stopped or started again.
	EndsAt int64 `json:"endsAt,omitempty"`
	// RemainingMs is what a paused timer has left (0 or more).
	RemainingMs int64 `json:"remainingMs,omitempty"`
	// PhaseID is the phase the timer was started for ("" for none).
	PhaseID string `json:"phaseId,omitempty"`
	// StartedBy is the e-mail address of who started it.
	StartedBy string `json:"startedBy"`
	// UpdatedAt is when the timer last changed.
	UpdatedAt int64 `json:"updatedAt"`
}

// MarshalJSON writes endsAt for a running timer and remainingMs for a
// paused one, and only that one: a paused timer at zero still says
// remainingMs 0.
func (t Timer) MarshalJSON() ([]byte, error) {
	type wire struct {
		State       string `json:"state"`
		DurationMs  int64  `json:"durationMs"`
		EndsAt      *int64 `json:"endsAt,omitempty"`
		RemainingMs *int64 `json:"remainingMs,omitempty"`
		PhaseID     string `json:"phaseId,omitempty"`
		StartedBy   string `json:"startedBy"`
		UpdatedAt   int64  `json:"updatedAt"`
	}
	w := wire{State: t.State, DurationMs: t.DurationMs, PhaseID: t.PhaseID, StartedBy: t.StartedBy, UpdatedAt: t.UpdatedAt}
	if t.State == TimerPaused {
		w.RemainingMs = &t.RemainingMs
	} else {
		w.EndsAt = &t.EndsAt
	}
	return json.Marshal(w)
}

// Remaining is what t has left at now (0 once a running timer has ended).
func (t *Timer) Remaining(now time.Time) time.Duration {
	ms := t.RemainingMs
	if t.State == TimerRunning {
		ms = max(0, t.EndsAt-now.UnixMilli())
	}
	return time.Duration(ms) * time.Millisecond
}

// TimerAction is what the board's owner asks of its timer (POST
// /api/boards/{boardId}/timer).
type TimerAction struct {
	// Action is one of TimerStart, TimerPause, TimerResume, TimerAdd,
	// TimerStop.
	Action string `json:"action"`
	// DurationMs is the length of a start (MinTimerMs to MaxTimerMs) or
	// the time an add gives (negative takes time away; not 0, at most
	// MaxTimerMs either way); the other actions take none.
	DurationMs int64 `json:"durationMs"`
	// PhaseID ties a start to one of the board's phases (optional).
	PhaseID string `json:"phaseId"`
	// By is who asks: the server sets it from the session, a body never
	// does.
	By string `json:"-"`
}

// Validate checks an action on its own, before any timer is looked at:
// EINVALID naming the field.
func (a *TimerAction) Validate() error {
	switch a.Action {
	case TimerStart:
		if a.DurationMs < MinTimerMs || a.DurationMs > MaxTimerMs {
			return FieldErrorf("durationMs", "durationMs must be between %d and %d milliseconds (1 second to 24 hours) for start.", MinTimerMs, MaxTimerMs)
		}
		return checkLen("phaseId", a.PhaseID, MaxIDLen, false)
	case TimerAdd:
		if a.DurationMs == 0 || a.DurationMs < -MaxTimerMs || a.DurationMs > MaxTimerMs {
			return FieldErrorf("durationMs", "durationMs must be a non-zero number of milliseconds between %d and %d for add.", -MaxTimerMs, MaxTimerMs)
		}
	case TimerPause, TimerResume, TimerStop:
		if a.DurationMs != 0 {
			return FieldErrorf("durationMs", "%s takes no durationMs.", a.Action)
		}
	case "":
		return FieldErrorf("action", "action is required: start, pause, resume, add or stop.")
	default:
		return FieldErrorf("action", "action must be start, pause, resume, add or stop.")
	}
	if a.PhaseID != "" {
		return FieldErrorf("phaseId", "phaseId goes with start only.")
	}
	return nil
}

// CheckPhase is EINVALID (field phaseId) when a names a phase the board
// (with phases ph, nil for none) does not have.
func (a *TimerAction) CheckPhase(ph *Phases) error {
	if a.PhaseID == "" || ph.Has(a.PhaseID) {
		return nil
	}
	return FieldErrorf("phaseId", "phaseId %q is not one of the board's phases.", a.PhaseID)
}

// Has reports whether ph (nil for none) has a phase with id.
func (ph *Phases) Has(id string) bool {
	if ph == nil {
		return false
	}
	for _, raw := range ph.Phases {
		var p struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &p) == nil && p.ID == id {
			return true
		}
	}
	return false
}

// ApplyTimer is the timer after action a on cur (nil: no timer) at now,
// asked by by; nil means no timer. It returns cur itself when a changes
// nothing (pause of a paused timer, resume of a running one, stop of no
// timer), so that the caller can keep the board's version. Errors:
// EINVALID (a.Validate, or an add past MaxTimerMs left) and ECONFLICT for
// pause, resume or add without a timer.
func ApplyTimer(cur *Timer, a TimerAction, now time.Time, by string) (*Timer, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	nowMs := now.UnixMilli()
	if a.Action == TimerStart {
		return &Timer{State: TimerRunning, DurationMs: a.DurationMs, EndsAt: nowMs + a.DurationMs,
			PhaseID: a.PhaseID, StartedBy: by, UpdatedAt: nowMs}, nil
	}
	if cur == nil {
		if a.Action == TimerStop {
			return nil, nil
		}
		return nil, Errorf(ECONFLICT, "The board has no timer to %s: start one first.", a.Action)
	}
	next := *cur
	next.UpdatedAt = nowMs
	left := cur.Remaining(now).Milliseconds()
	switch a.Action {
	case TimerStop:
		return nil, nil
	case TimerPause:
		if cur.State == TimerPaused {
			return cur, nil
		}
		next.State, next.EndsAt, next.RemainingMs = TimerPaused, 0, left
	case TimerResume:
		if cur.State == TimerRunning {
			return cur, nil
		}
		next.State, next.EndsAt, next.RemainingMs = TimerRunning, nowMs+left, 0
	case TimerAdd:
		after := max(0, left+a.DurationMs)
		if after > MaxTimerMs {
			return nil, FieldErrorf("durationMs", "The timer would have more than 24 hours left (it has %d ms).", left)
		}
		if after == left {
			return cur, nil // taking time from a timer at zero
		}
		next.DurationMs += after - left
		if next.State == TimerRunning {
			next.EndsAt = nowMs + after
		} else {
			next.RemainingMs = after
		}
	}
	return &next, nil
}
