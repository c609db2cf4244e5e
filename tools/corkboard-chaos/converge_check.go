package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"corkboard/board"
)

// NoteCopy is a copy of the board's notes: a client's at the end of the
// converge run, or a node's full pull.
type NoteCopy struct {
	Name    string
	Version int64
	Notes   map[string]board.Note
	// Unsent counts the client's edits still unsent or unabsorbed.
	Unsent int
	// Resets counts the answers with reset: true the client applied.
	Resets int
	// Err is set when the copy could not be completed.
	Err string
}

// ConvergeHistory is what the converge checker looks at, gathered outside
// the nodes once everyone is back online and quiet.
type ConvergeHistory struct {
	// Final is the server's state: a full pull (since=0) of the first node.
	Final NoteCopy
	// Pulls are the other nodes' full pulls.
	Pulls []NoteCopy
	// Copies are the clients' copies.
	Copies []NoteCopy
	// Log holds, per note ID, the Markdown of every changelog entry of it.
	Log map[string][]string
	// Typed is every token any client typed; Removed the tokens a client
	// removed on purpose.
	Typed   []Typed
	Removed map[string]bool
}

// LineCounts says where the checker found the typed lines.
type LineCounts struct {
	Typed, InNote, InLog, Removed, InDeletedNote, Lost int
	// Duplicated counts tokens found more than once in their final note;
	// DuplicatedIn names the first few ("c3-e17 in c0-n2").
	Duplicated   int
	DuplicatedIn []string
}

// The converge checks, as the summary names them.
const (
	checkNotConverged = "not converged"
	checkNodes        = "nodes disagree"
	checkLostLine     = "line lost"
	checkResetConv    = "reset without a reason"
	checkCounters     = "server counters"
)

// The server's merge counters (metrics/metrics.go), as scraped.
const (
	metricMerged   = `corkboard_merged_rows_total{result="merged"}`
	metricFallback = `corkboard_merged_rows_total{result="fallback"}`
	metricOverlap  = `corkboard_merge_events_total{kind="overlap"}`
	metricRevived  = `corkboard_merge_events_total{kind="revived"}`
)

// MergeTally is what the clients and the changelog saw of the server's
// merges, to compare with its counters.
type MergeTally struct {
	// ServerMerged counts pushed rows that came back changed at the
	// version their push wrote: the server merged them.
	ServerMerged int64
	// UpdateNotes and DeleteNotes count the changelog's entries by action;
	// the clients wrote LogsSent update_note entries for sure, and at most
	// LogsTried (a write whose answer was lost may be in twice).
	UpdateNotes, DeleteNotes int
	LogsSent, LogsTried      int64
}

// CheckCounters compares the server's merge counters, summed over the
// nodes, with what the run saw; it holds only when no node restarted (a
// restart zeroes them). No row may fall back to a replace (its base is
// kept for 30 days); every row that came back merged was counted; each
// revival wrote one delete_note entry; each overlap one update_note entry
// (or, for a revival, its delete_note entry), beside the clients' own.
func CheckCounters(m map[string]float64, t MergeTally) []Violation {
	var out []Violation
	add := func(format string, args ...any) {
		out = append(out, Violation{checkCounters, fmt.Sprintf(format, args...)})
	}
	if _, ok := m[metricMerged]; !ok {
		return nil // a server without the counters
	}
	merged, fallback, overlap, revived := int64(m[metricMerged]), int64(m[metricFallback]), int64(m[metricOverlap]), int64(m[metricRevived])
	if fallback != 0 {
		add("%d rows replaced whole because their base was not kept", fallback)
	}
	if merged < t.ServerMerged {
		add("%d rows merged, but %d came back merged to the clients", merged, t.ServerMerged)
	}
	if revived != int64(t.DeleteNotes) {
		add("%d revivals counted, %d delete_note entries in the changelog", revived, t.DeleteNotes)
	}
	lo, hi := int64(t.UpdateNotes)-t.LogsTried, int64(t.UpdateNotes)-t.LogsSent+revived
	if overlap < lo || overlap > hi {
		add("%d overlaps counted; the changelog's %d update_note entries (%d to %d of them the clients') and %d revivals want %d to %d",
			overlap, t.UpdateNotes, t.LogsSent, t.LogsTried, revived, lo, hi)
	}
	return out
}

// CheckConverge verifies the two promises of the converge run. Every copy
// (each client's, each node's full pull) equals the server's state: the
// same version and the same notes, every field. And every line any client
// typed, known by its token, is in its note's final title or content, or
// in one of that note's changelog entries, unless a client removed it on
// purpose or its note ended deleted.
func CheckConverge(h ConvergeHistory) ([]Violation, LineCounts) {
	var out []Violation
	add := func(check, format string, args ...any) {
		out = append(out, Violation{check, fmt.Sprintf(format, args...)})
	}
	compare := func(check string, c NoteCopy) {
		if c.Err != "" {
			add(check, "%s: %s", c.Name, c.Err)
			return
		}
		if c.Unsent > 0 {
			add(check, "%s: %d edits still unsent", c.Name, c.Unsent)
		}
		if c.Resets > 0 {
			add(checkResetConv, "%s: %d answers with reset", c.Name, c.Resets)
		}
		if c.Version != h.Final.Version {
			add(check, "%s: at version %d, the server at %d", c.Name, c.Version, h.Final.Version)
		}
		if d := diffNotes(h.Final.Notes, c.Notes); d != "" {
			add(check, "%s: %s", c.Name, d)
		}
	}
	for _, p := range h.Pulls {
		compare(checkNodes, p)
	}
	for _, c := range h.Copies {
		compare(checkNotConverged, c)
	}

	// Each note's tokens, counted, and its changelog's, read once.
	inNote := map[string]map[string]int{}
	for id, note := range h.Final.Notes {
		inNote[id] = map[string]int{}
		for _, x := range tokens(note.Title + "\n" + note.Content) {
			inNote[id][x]++
		}
	}
	inLog := map[string]map[string]bool{}
	for id, entries := range h.Log {
		inLog[id] = map[string]bool{}
		for _, e := range entries {
			for _, x := range tokens(e) {
				inLog[id][x] = true
			}
		}
	}
	var n LineCounts
	for _, t := range h.Typed {
		n.Typed++
		_, live := h.Final.Notes[t.Note]
		k := inNote[t.Note][t.Token]
		switch {
		case !live:
			n.InDeletedNote++
		case k > 0:
			n.InNote++
			if k > 1 {
				n.Duplicated++
				if len(n.DuplicatedIn) < 10 {
					n.DuplicatedIn = append(n.DuplicatedIn, t.Token+" in "+t.Note)
				}
			}
		case inLog[t.Note][t.Token]:
			n.InLog++
		case h.Removed[t.Token]:
			n.Removed++
		default:
			n.Lost++
			add(checkLostLine, "%s typed %s into note %s: not in the note, not in its %d changelog entries, and nobody removed it",
				t.Client, t.Token, t.Note, len(h.Log[t.Note]))
		}
	}
	return out, n
}

// tokenRe finds the unique tokens clients type: c3-e17 is client 3's
// 17th typed line (or title).
var tokenRe = regexp.MustCompile(`\bc\d+-e\d+\b`)

// tokens returns the tokens in s.
func tokens(s string) []string { return tokenRe.FindAllString(s, -1) }

// Typed is one line (or title) a client typed, known by its token.
type Typed struct {
	Token, Note, Client string
}

// sameFields compares what a user edits of two notes.
func sameFields(a, b board.Note) bool {
	return a.Title == b.Title && a.Content == b.Content && a.X == b.X && a.Y == b.Y &&
		a.W == b.W && a.H == b.H && a.Color == b.Color && a.Type == b.Type
}

// sameNote compares two notes whole, as a pull gives them.
func sameNote(a, b board.Note) bool {
	if !sameFields(a, b) || a.ID != b.ID || a.UpdatedAt != b.UpdatedAt || a.Version != b.Version ||
		(a.DeletedAt == nil) != (b.DeletedAt == nil) || len(a.Extra) != len(b.Extra) {
		return false
	}
	if a.DeletedAt != nil && *a.DeletedAt != *b.DeletedAt {
		return false
	}
	for i := range a.Extra {
		if a.Extra[i].Name != b.Extra[i].Name || string(a.Extra[i].Value) != string(b.Extra[i].Value) {
			return false
		}
	}
	return true
}

// diffNotes describes the first differences between want and got, or "".
func diffNotes(want, got map[string]board.Note) string {
	var diffs []string
	ids := map[string]bool{}
	for id := range want {
		ids[id] = true
	}
	for id := range got {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	for _, id := range sorted {
		w, wok := want[id]
		g, gok := got[id]
		switch {
		case !gok:
			diffs = append(diffs, "note "+id+" missing")
		case !wok:
			diffs = append(diffs, "note "+id+" not on the server")
		case !sameNote(w, g):
			diffs = append(diffs, fmt.Sprintf("note %s differs: %s", id, describeNote(g, w)))
		}
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("… %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}

// describeNote names the fields in which got differs from want.
func describeNote(got, want board.Note) string {
	var d []string
	f := func(name string, g, w any) {
		if fmt.Sprint(g) != fmt.Sprint(w) {
			d = append(d, fmt.Sprintf("%s %q, the server %q", name, fmt.Sprint(g), fmt.Sprint(w)))
		}
	}
	f("title", got.Title, want.Title)
	f("content", got.Content, want.Content)
	f("x", got.X, want.X)
	f("y", got.Y, want.Y)
	f("w", got.W, want.W)
	f("h", got.H, want.H)
	f("color", got.Color, want.Color)
	f("type", got.Type, want.Type)
	f("updatedAt", got.UpdatedAt, want.UpdatedAt)
	f("version", got.Version, want.Version)
	f("deleted", got.DeletedAt != nil, want.DeletedAt != nil)
	f("extra fields", len(got.Extra), len(want.Extra))
	return strings.Join(d, ", ")
}
