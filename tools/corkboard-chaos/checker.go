package main

import (
	"fmt"
	"sort"
)

// Row is one note as the checker compares it: its ID, the version that
// wrote it and its content (unique per push in this workload).
type Row struct {
	ID      string
	Version int64
	Content string
}

// FinalBoard is a board's final state read straight from PostgreSQL.
type FinalBoard struct {
	ID      string
	Version int64
	Rows    []Row
	// Keys are the board's recorded idempotency keys and their versions.
	Keys map[string]int64
}

// Push is one push a client made: acknowledged with Version, or not
// (every retry failed before the run's end; it may or may not be applied).
type Push struct {
	Board, Key, NoteID, Content string
	Acked                       bool
	Version                     int64
}

// WatchEvent is one message a watcher received: a hello (Since is the
// version the watcher connected with) or a changes message.
type WatchEvent struct {
	Conn                 int
	Kind                 string // "hello" or "changes"
	Since, ServerVersion int64
	Reset                bool
}

// Copy is a client's copy of a board at the end of the run: a watcher's
// (built from live messages) or a pusher's (built from incremental pulls),
// or a node's full pull.
type Copy struct {
	Name, Board string
	Version     int64
	Rows        map[string]Row
	// Resets counts the answers with reset: true this copy applied.
	Resets int
	// Err is set when the copy could not be completed (a final pull that failed).
	Err string
}

// WatcherLog is what one watcher saw, in order, and its final copy.
type WatcherLog struct {
	Name, Board string
	Events      []WatchEvent
}

// PullAfterAck is a pusher's incremental pull that began after one of its
// pushes was acknowledged at Acked; Answered is the version it answered.
type PullAfterAck struct {
	Pusher, Board, Node string
	Acked, Answered     int64
}

// History is everything the checker looks at, gathered outside the nodes.
type History struct {
	Boards   []FinalBoard
	Pushes   []Push
	Pulls    []PullAfterAck
	Watchers []WatcherLog
	// Copies are the clients' copies and the nodes' final full pulls.
	Copies []Copy
}

// Violation is one broken promise the checker found.
type Violation struct {
	Check, Detail string
}

// String is the violation as the summary prints it.
func (v Violation) String() string { return v.Check + ": " + v.Detail }

// The checks, as the summary names them.
const (
	checkGap        = "version gap"
	checkDuplicate  = "duplicate version"
	checkLostAck    = "lost acknowledged push"
	checkAckVersion = "acknowledged at another version"
	checkTwice      = "applied more than once"
	checkPhantom    = "row nobody pushed"
	checkKey        = "idempotency key"
	checkWatcher    = "watcher versions not increasing"
	checkConverge   = "not converged"
	checkReset      = "reset without a reason"
	checkPullBehind = "pull behind an acknowledged push"
)

// Check verifies a history. The workload writes one new note per push and
// never deletes, so a board at version V must hold exactly one row at each
// version 1..V, and no answer ever has a reason to be a reset (no tombstone
// horizon is passed, and no version goes back).
func Check(h History) []Violation {
	var out []Violation
	add := func(check, format string, args ...any) {
		out = append(out, Violation{check, fmt.Sprintf(format, args...)})
	}
	// Every node answers a pull with every push acknowledged before it
	// began (scale-out.md), from memory or not.
	for _, p := range h.Pulls {
		if p.Answered < p.Acked {
			add(checkPullBehind, "%s (board %s): pull on %s answered version %d after its push was acknowledged at %d", p.Pusher, p.Board, p.Node, p.Answered, p.Acked)
		}
	}
	final := map[string]FinalBoard{}
	byNote := map[string]map[string]Row{} // board → note ID → row
	for _, b := range h.Boards {
		final[b.ID] = b
		perVersion := map[int64]int{}
		rows := map[string]Row{}
		contents := map[string]int{}
		for _, r := range b.Rows {
			perVersion[r.Version]++
			rows[r.ID] = r
			contents[r.Content]++
			if r.Version < 1 || r.Version > b.Version {
				add(checkGap, "board %s: row %s at version %d outside 1..%d", b.ID, r.ID, r.Version, b.Version)
			}
		}
		byNote[b.ID] = rows
		for v := int64(1); v <= b.Version; v++ {
			switch n := perVersion[v]; {
			case n == 0:
				add(checkGap, "board %s: no row at version %d (of 1..%d)", b.ID, v, b.Version)
			case n > 1:
				add(checkDuplicate, "board %s: %d rows at version %d", b.ID, n, v)
			}
		}
		for c, n := range contents {
			if n > 1 {
				add(checkTwice, "board %s: content %q in %d rows", b.ID, c, n)
			}
		}
	}

	pushed := map[string]map[string]bool{} // board → note IDs pushed
	for _, p := range h.Pushes {
		if pushed[p.Board] == nil {
			pushed[p.Board] = map[string]bool{}
		}
		pushed[p.Board][p.NoteID] = true
		if !p.Acked {
			continue
		}
		r, ok := byNote[p.Board][p.NoteID]
		switch {
		case !ok:
			add(checkLostAck, "board %s: push %s acknowledged at version %d, note %s missing", p.Board, p.Key, p.Version, p.NoteID)
		case r.Version != p.Version:
			add(checkAckVersion, "board %s: push %s acknowledged at version %d, its note is at version %d", p.Board, p.Key, p.Version, r.Version)
		case r.Content != p.Content:
			add(checkLostAck, "board %s: push %s: note %s holds %q, not %q", p.Board, p.Key, p.NoteID, r.Content, p.Content)
		}
		if kv, ok := final[p.Board].Keys[p.Key]; ok && kv != p.Version {
			add(checkKey, "board %s: key %s recorded at version %d, acknowledged at %d", p.Board, p.Key, kv, p.Version)
		}
	}
	for _, b := range h.Boards {
		for _, r := range b.Rows {
			if !pushed[b.ID][r.ID] {
				add(checkPhantom, "board %s: note %s at version %d", b.ID, r.ID, r.Version)
			}
		}
	}

	for _, w := range h.Watchers {
		checkWatcherLog(w, add)
	}

	for _, c := range h.Copies {
		if c.Resets > 0 {
			add(checkReset, "%s (board %s): %d reset answers", c.Name, c.Board, c.Resets)
		}
		b, ok := final[c.Board]
		switch {
		case !ok:
			add(checkConverge, "%s: board %s has no final state", c.Name, c.Board)
			continue
		case c.Err != "":
			add(checkConverge, "%s (board %s): %s", c.Name, c.Board, c.Err)
			continue
		case c.Version != b.Version:
			add(checkConverge, "%s (board %s): at version %d, the board is at %d", c.Name, c.Board, c.Version, b.Version)
			continue
		}
		if d := diffRows(byNote[c.Board], c.Rows); d != "" {
			add(checkConverge, "%s (board %s): %s", c.Name, c.Board, d)
		}
	}
	return out
}

// checkWatcherLog checks one watcher's messages: on each connection the
// versions strictly increase, a hello never starts below the version the
// watcher reconnected with, and no message is a reset. One repeat is
// allowed, as docs/live-protocol.md says ("a catch-up covered it"): the
// catch-up right after hello is read after hello's version was taken, so
// it may already hold a change committed in between, and that change's own
// message follows; it is covered when it starts at or after hello's version
// and ends within the catch-up.
func checkWatcherLog(w WatcherLog, add func(check, format string, args ...any)) {
	conn, last := -1, int64(-1)
	var hello, catchUp int64
	afterHello := false // the next changes is the catch-up
	var prev WatchEvent
	for i, e := range w.Events {
		if e.Reset {
			add(checkReset, "%s (board %s): message %d is a reset (since %d, version %d)", w.Name, w.Board, i, e.Since, e.ServerVersion)
		}
		switch e.Kind {
		case "hello":
			conn, hello, catchUp = e.Conn, e.ServerVersion, -1
			if e.ServerVersion < e.Since {
				add(checkWatcher, "%s (board %s): connection %d: hello at version %d below the %d it reconnected with", w.Name, w.Board, e.Conn, e.ServerVersion, e.Since)
			}
			last = e.ServerVersion
			afterHello = e.Since == 0 || e.Since != e.ServerVersion
			if afterHello {
				last-- // a catch-up follows, up to hello's version (or beyond)
			}
		case "changes":
			if e.Conn != conn {
				add(checkWatcher, "%s (board %s): changes on connection %d before its hello", w.Name, w.Board, e.Conn)
				continue
			}
			if afterHello {
				catchUp = e.ServerVersion
			}
			covered := !afterHello && e.Since >= hello && e.ServerVersion <= catchUp
			if e.ServerVersion <= last && !covered {
				add(checkWatcher, "%s (board %s): connection %d: changes %d→%d after %s %d→%d", w.Name, w.Board, e.Conn,
					e.Since, e.ServerVersion, prev.Kind, prev.Since, prev.ServerVersion)
			}
			if e.Since > e.ServerVersion {
				add(checkWatcher, "%s (board %s): connection %d: changes since %d up to %d", w.Name, w.Board, e.Conn, e.Since, e.ServerVersion)
			}
			last = max(last, e.ServerVersion)
			afterHello = false
		}
		prev = e
	}
}

// diffRows describes how got differs from want, or returns "".
func diffRows(want, got map[string]Row) string {
	var missing, extra, differ []string
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			missing = append(missing, id)
		case g != w:
			differ = append(differ, fmt.Sprintf("%s at %d, want %d", id, g.Version, w.Version))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			extra = append(extra, id)
		}
	}
	if len(missing)+len(extra)+len(differ) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(differ)
	return fmt.Sprintf("%d rows missing %v, %d extra %v, %d different %v",
		len(missing), head(missing), len(extra), head(extra), len(differ), head(differ))
}

func head(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}
