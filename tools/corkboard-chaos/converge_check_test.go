package main

import (
	"strings"
	"testing"

	"corkboard/board"
)

func convNote(id, title, content string, version int64) board.Note {
	return board.Note{ID: id, Title: title, Content: content, X: 1, Y: 2, Color: "yellow", Type: "sticky",
		UpdatedAt: "2026-11-26T10:00:00Z", Version: version}
}

// goodConvergeHistory: two notes, a client and a node that agree, lines in
// the note, in the changelog, removed, and in a deleted note.
func goodConvergeHistory() ConvergeHistory {
	notes := func() map[string]board.Note {
		return map[string]board.Note{
			"c0-n1": convNote("c0-n1", "Note c0-e1", "- [x] c1-e1\nc2-e1 later +c1-e2", 7),
			"c1-n1": convNote("c1-n1", "Note c1-e3", "", 5),
		}
	}
	return ConvergeHistory{
		Final:  NoteCopy{Name: "full pull from node 0", Version: 7, Notes: notes()},
		Pulls:  []NoteCopy{{Name: "full pull from node 1", Version: 7, Notes: notes()}},
		Copies: []NoteCopy{{Name: "c1", Version: 7, Notes: notes()}},
		Log:    map[string][]string{"c0-n1": {"---\nid: 'c0-n1'\ntitle: 'Note c0-e1'\n---\n\nc2-e2 ship it\n"}},
		Typed: []Typed{
			{"c0-e1", "c0-n1", "c0"}, {"c1-e1", "c0-n1", "c1"}, {"c2-e1", "c0-n1", "c2"}, {"c1-e2", "c0-n1", "c1"},
			{"c2-e2", "c0-n1", "c2"}, {"c2-e3", "c0-n1", "c2"}, {"c1-e3", "c1-n1", "c1"}, {"c2-e9", "c2-n1", "c2"},
		},
		Removed: map[string]bool{"c2-e3": true},
	}
}

func TestCheckConverge(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		vs, n := CheckConverge(goodConvergeHistory())
		if len(vs) > 0 {
			t.Fatalf("violations: %v", vs)
		}
		want := LineCounts{Typed: 8, InNote: 5, InLog: 1, Removed: 1, InDeletedNote: 1}
		if n.Typed != want.Typed || n.InNote != want.InNote || n.InLog != want.InLog || n.Removed != want.Removed ||
			n.InDeletedNote != want.InDeletedNote || n.Lost != 0 || n.Duplicated != 0 {
			t.Fatalf("counts %+v, want %+v", n, want)
		}
	})
	// Each case breaks one promise; the checker must name it.
	for _, tc := range []struct {
		name, check, detail string
		mutate              func(h *ConvergeHistory)
	}{
		{"LineLost", checkLostLine, "c2-e2", func(h *ConvergeHistory) { h.Log = nil }},
		{"RemovedByNobody", checkLostLine, "c2-e3", func(h *ConvergeHistory) { h.Removed = nil }},
		{"TokenIsNotAPrefix", checkLostLine, "c1-e1", func(h *ConvergeHistory) {
			n := h.Final.Notes["c0-n1"]
			n.Content = strings.Replace(n.Content, "c1-e1", "c1-e10", 1)
			h.Final.Notes["c0-n1"] = n
			h.Pulls, h.Copies = nil, nil
		}},
		{"CopyBehind", checkNotConverged, "c1: at version 6", func(h *ConvergeHistory) { h.Copies[0].Version = 6 }},
		{"CopyFieldDiffers", checkNotConverged, `color "blue"`, func(h *ConvergeHistory) {
			n := h.Copies[0].Notes["c1-n1"]
			n.Color = "blue"
			h.Copies[0].Notes["c1-n1"] = n
		}},
		{"CopyMissesNote", checkNotConverged, "note c1-n1 missing", func(h *ConvergeHistory) { delete(h.Copies[0].Notes, "c1-n1") }},
		{"CopyHasExtraNote", checkNotConverged, "not on the server", func(h *ConvergeHistory) {
			h.Copies[0].Notes["c9-n1"] = convNote("c9-n1", "", "", 3)
		}},
		{"UnsentEdits", checkNotConverged, "2 edits still unsent", func(h *ConvergeHistory) { h.Copies[0].Unsent = 2 }},
		{"CopyFailed", checkNotConverged, "pull failed", func(h *ConvergeHistory) { h.Copies[0].Err = "pull failed" }},
		{"Reset", checkResetConv, "1 answers with reset", func(h *ConvergeHistory) { h.Copies[0].Resets = 1 }},
		{"NodesDisagree", checkNodes, "content", func(h *ConvergeHistory) {
			n := h.Pulls[0].Notes["c0-n1"]
			n.Content += "\nc3-e1"
			h.Pulls[0].Notes["c0-n1"] = n
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := goodConvergeHistory()
			tc.mutate(&h)
			vs, _ := CheckConverge(h)
			for _, v := range vs {
				if v.Check == tc.check && strings.Contains(v.Detail, tc.detail) {
					return
				}
			}
			t.Fatalf("want a %q violation naming %q, got %v", tc.check, tc.detail, vs)
		})
	}
	t.Run("DuplicatedIsCountedNotAViolation", func(t *testing.T) {
		h := goodConvergeHistory()
		for _, c := range []*NoteCopy{&h.Final, &h.Pulls[0], &h.Copies[0]} {
			n := c.Notes["c0-n1"]
			n.Content += "\n- [ ] c1-e1"
			c.Notes["c0-n1"] = n
		}
		vs, n := CheckConverge(h)
		if len(vs) > 0 {
			t.Fatalf("violations: %v", vs)
		}
		if got, want := n.Duplicated, 1; got != want {
			t.Fatalf("Duplicated=%d, want %d", got, want)
		}
		if got, want := strings.Join(n.DuplicatedIn, ","), "c1-e1 in c0-n1"; got != want {
			t.Fatalf("DuplicatedIn=%q, want %q", got, want)
		}
	})
}

func TestCheckCounters(t *testing.T) {
	good := func() (map[string]float64, MergeTally) {
		return map[string]float64{metricMerged: 40, metricFallback: 0, metricOverlap: 12, metricRevived: 2},
			MergeTally{ServerMerged: 30, UpdateNotes: 15, DeleteNotes: 2, LogsSent: 4, LogsTried: 5}
	}
	t.Run("OK", func(t *testing.T) {
		m, tally := good()
		if vs := CheckCounters(m, tally); len(vs) > 0 {
			t.Fatalf("violations: %v", vs)
		}
	})
	t.Run("NoCounters", func(t *testing.T) {
		_, tally := good()
		if vs := CheckCounters(map[string]float64{}, tally); len(vs) > 0 {
			t.Fatalf("violations without counters: %v", vs)
		}
	})
	for _, tc := range []struct {
		name, detail string
		mutate       func(m map[string]float64, t *MergeTally)
	}{
		{"Fallback", "replaced whole", func(m map[string]float64, _ *MergeTally) { m[metricFallback] = 1 }},
		{"MergedUncounted", "came back merged", func(_ map[string]float64, t *MergeTally) { t.ServerMerged = 41 }},
		{"RevivalWithoutEntry", "2 revivals counted, 1 delete_note", func(_ map[string]float64, t *MergeTally) { t.DeleteNotes = 1 }},
		{"OverlapsAboveEntries", "15 overlaps counted", func(m map[string]float64, _ *MergeTally) { m[metricOverlap] = 15 }},
		{"EntriesAboveOverlaps", "9 overlaps counted", func(m map[string]float64, _ *MergeTally) { m[metricOverlap] = 9 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, tally := good()
			tc.mutate(m, &tally)
			for _, v := range CheckCounters(m, tally) {
				if v.Check == checkCounters && strings.Contains(v.Detail, tc.detail) {
					return
				}
			}
			t.Fatalf("want a %q violation naming %q, got %v", checkCounters, tc.detail, CheckCounters(m, tally))
		})
	}
}
