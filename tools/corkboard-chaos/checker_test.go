package main

import (
	"fmt"
	"strings"
	"testing"
)

// good is a consistent history: board b at version 3, three acknowledged
// pushes, a watcher that saw every version once, and converged copies.
func good() History {
	rows := []Row{{"n1", 1, "c1"}, {"n2", 2, "c2"}, {"n3", 3, "c3"}}
	full := map[string]Row{}
	for _, r := range rows {
		full[r.ID] = r
	}
	return History{
		Boards: []FinalBoard{{ID: "b", Version: 3, Rows: rows, Keys: map[string]int64{"k1": 1, "k2": 2, "k3": 3}}},
		Pushes: []Push{
			{Board: "b", Key: "k1", NoteID: "n1", Content: "c1", Acked: true, Version: 1},
			{Board: "b", Key: "k2", NoteID: "n2", Content: "c2", Acked: true, Version: 2},
			{Board: "b", Key: "k3", NoteID: "n3", Content: "c3", Acked: true, Version: 3},
		},
		Watchers: []WatcherLog{{Name: "w", Board: "b", Events: []WatchEvent{
			{Conn: 0, Kind: "hello", Since: 0, ServerVersion: 0},
			{Conn: 0, Kind: "changes", Since: 0, ServerVersion: 0},
			{Conn: 0, Kind: "changes", Since: 0, ServerVersion: 1},
			{Conn: 1, Kind: "hello", Since: 1, ServerVersion: 2},
			{Conn: 1, Kind: "changes", Since: 1, ServerVersion: 2},
			{Conn: 1, Kind: "changes", Since: 2, ServerVersion: 3},
		}}},
		Copies: []Copy{{Name: "w", Board: "b", Version: 3, Rows: full}},
	}
}

func TestCheckGood(t *testing.T) {
	if vs := Check(good()); len(vs) != 0 {
		t.Fatalf("violations in a good history: %v", vs)
	}
	// The catch-up right after hello may already hold a change committed
	// after hello, whose own message then follows (live-protocol.md).
	h := good()
	h.Watchers[0].Events = []WatchEvent{
		{Conn: 0, Kind: "hello", Since: 0, ServerVersion: 1},
		{Conn: 0, Kind: "changes", Since: 0, ServerVersion: 2},
		{Conn: 0, Kind: "changes", Since: 1, ServerVersion: 2},
		{Conn: 0, Kind: "changes", Since: 2, ServerVersion: 3},
	}
	if vs := Check(h); len(vs) != 0 {
		t.Fatalf("violations for a covered change: %v", vs)
	}
}

func TestCheckFindsViolations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(h *History)
		check  string
		want   string
	}{
		{"Gap", func(h *History) { h.Boards[0].Rows[1].Version = 3; h.Pushes[1].Version = 3 }, checkGap, "no row at version 2"},
		{"Duplicate", func(h *History) {
			h.Boards[0].Version = 4
			h.Boards[0].Rows = append(h.Boards[0].Rows, Row{"n4", 3, "c4"}, Row{"n5", 4, "c5"})
			h.Pushes = append(h.Pushes, Push{Board: "b", Key: "k4", NoteID: "n4", Content: "c4"}, Push{Board: "b", Key: "k5", NoteID: "n5", Content: "c5"})
		}, checkDuplicate, "2 rows at version 3"},
		{"LostAck", func(h *History) {
			h.Pushes = append(h.Pushes, Push{Board: "b", Key: "k9", NoteID: "n9", Content: "c9", Acked: true, Version: 2})
		}, checkLostAck, "push k9 acknowledged at version 2, note n9 missing"},
		{"AckAtOtherVersion", func(h *History) { h.Pushes[0].Version = 2 }, checkAckVersion, "push k1 acknowledged at version 2, its note is at version 1"},
		{"AppliedTwice", func(h *History) { h.Boards[0].Rows[2].Content = "c2" }, checkTwice, `content "c2" in 2 rows`},
		{"Phantom", func(h *History) { h.Pushes = h.Pushes[:2] }, checkPhantom, "note n3 at version 3"},
		{"PullBehindAck", func(h *History) {
			h.Pulls = append(h.Pulls, PullAfterAck{Pusher: "pusher 1", Board: "b", Node: "n2", Acked: 3, Answered: 2})
		}, checkPullBehind, "answered version 2 after its push was acknowledged at 3"},
		{"KeyVersion", func(h *History) { h.Boards[0].Keys["k2"] = 3 }, checkKey, "key k2 recorded at version 3, acknowledged at 2"},
		{"WatcherRepeats", func(h *History) {
			ev := &h.Watchers[0].Events
			*ev = append(*ev, WatchEvent{Conn: 1, Kind: "changes", Since: 2, ServerVersion: 3})
		}, checkWatcher, "connection 1: changes 2→3 after changes 2→3"},
		{"WatcherGoesBack", func(h *History) {
			ev := &h.Watchers[0].Events
			*ev = append(*ev, WatchEvent{Conn: 1, Kind: "changes", Since: 1, ServerVersion: 2})
		}, checkWatcher, "connection 1: changes 1→2 after changes 2→3"},
		{"RepeatWithoutCatchUp", func(h *History) {
			// Connected at its version: no catch-up, so nothing covers a repeat.
			h.Watchers[0].Events = []WatchEvent{
				{Conn: 0, Kind: "hello", Since: 1, ServerVersion: 1},
				{Conn: 0, Kind: "changes", Since: 1, ServerVersion: 2},
				{Conn: 0, Kind: "changes", Since: 1, ServerVersion: 2},
				{Conn: 0, Kind: "changes", Since: 2, ServerVersion: 3},
			}
		}, checkWatcher, "connection 0: changes 1→2 after changes 1→2"},
		{"HelloBelow", func(h *History) { h.Watchers[0].Events[3].ServerVersion = 0 }, checkWatcher, "hello at version 0 below the 1"},
		{"NotConverged", func(h *History) { h.Copies[0].Version = 2 }, checkConverge, "at version 2, the board is at 3"},
		{"DifferentRows", func(h *History) {
			h.Copies[0].Rows = map[string]Row{"n1": {"n1", 1, "c1"}, "n2": {"n2", 2, "other"}, "n3": {"n3", 3, "c3"}}
		}, checkConverge, "1 different"},
		{"FailedPull", func(h *History) { h.Copies[0].Err = "503 draining" }, checkConverge, "503 draining"},
		{"CopyReset", func(h *History) { h.Copies[0].Resets = 1 }, checkReset, "1 reset answers"},
		{"WatcherReset", func(h *History) { h.Watchers[0].Events[5].Reset = true }, checkReset, "message 5 is a reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := good()
			tc.mutate(&h)
			vs := Check(h)
			var found bool
			for _, v := range vs {
				if v.Check == tc.check && strings.Contains(v.Detail, tc.want) {
					found = true
				}
			}
			if !found {
				t.Fatalf("want a %q violation containing %q, got %s", tc.check, tc.want, fmt.Sprint(vs))
			}
		})
	}
}
