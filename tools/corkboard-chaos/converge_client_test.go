//go:build unix

package main

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

// The converge client's model without a server: what it does with server
// rows, acks and deletions decides what the run checks, so it is tested
// on its own.

func testClient(t *testing.T) *cclient {
	t.Helper()
	e := &convEnv{ledger: &ledger{removed: map[string]bool{}}, st: &convStats{}}
	return newClient("c1", false, session{}, rand.New(rand.NewPCG(1, 2)), e, 0)
}

// serverRow gives c the server row id at version v, as a pull would.
func serverRow(c *cclient, id, content string, v int64) {
	c.apply(&message{ServerVersion: v, Notes: []board.Note{convNote(id, "T", content, v)}}, false)
}

func edited(c *cclient, id, content string) {
	n, ok := c.view(id)
	if !ok {
		panic("no note " + id)
	}
	n.Content = content
	c.change(n)
}

func TestClientRebase(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a\nb\nc", 1)
		edited(c, "n1", "a\nb\nC")
		serverRow(c, "n1", "A\nb\nc", 2)
		e := c.pend["n1"]
		if got, want := e.mine.Content, "A\nb\nC"; got != want {
			t.Fatalf("rebased edit %q, want %q", got, want)
		}
		if got, want := e.base.Version, int64(2); got != want {
			t.Fatalf("base version %d, want %d", got, want)
		}
		if len(c.logs) > 0 {
			t.Fatalf("logged %v without an overlap", c.logs)
		}
	})
	t.Run("CoalescedKeepsTheOldestBase", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a", 1)
		edited(c, "n1", "a\nb")
		edited(c, "n1", "a\nb\nc")
		if got, want := c.pend["n1"].base.Version, int64(1); got != want {
			t.Fatalf("base version %d, want %d", got, want)
		}
		if got, want := len(c.order), 1; got != want {
			t.Fatalf("%d edits queued, want %d", got, want)
		}
	})
	t.Run("OverlapLogsTheServerRow", func(t *testing.T) {
		c := testClient(t)
		c.e.overlapRule = OverlapLog
		serverRow(c, "n1", "x\ny", 1)
		edited(c, "n1", "x\nmine")
		serverRow(c, "n1", "x\ntheirs", 2)
		if got, want := c.pend["n1"].mine.Content, "x\nmine"; got != want {
			t.Fatalf("rebased edit %q, want %q (the later push wins)", got, want)
		}
		if got, want := len(c.logs), 1; got != want {
			t.Fatalf("%d log entries, want %d", got, want)
		}
		l := c.logs[0]
		n, err := changelog.ParseNote([]byte(l.Content))
		if err != nil {
			t.Fatal(err)
		}
		if l.Action != "update_note" || l.NoteID != "n1" || n.Content != "x\ntheirs" {
			t.Fatalf("log entry %s %s %q, want update_note n1 with theirs", l.Action, l.NoteID, n.Content)
		}
	})
}

func TestClientAck(t *testing.T) {
	t.Run("NobodyInBetween", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a", 1)
		edited(c, "n1", "a\nb")
		c.startBatch()
		var body struct {
			Notes struct{ Upserted []map[string]any }
		}
		if err := json.Unmarshal(c.sent.body, &body); err != nil {
			t.Fatal(err)
		}
		if got := body.Notes.Upserted[0]["baseVersion"]; got != 1.0 {
			t.Fatalf("baseVersion %v, want 1", got)
		}
		c.acked(2, false)
		if c.sent != nil {
			t.Fatal("the batch is not absorbed")
		}
		if got := c.srv["n1"]; got.Version != 2 || got.Content != "a\nb" {
			t.Fatalf("server copy %+v, want the pushed row at version 2", got)
		}
	})
	t.Run("CrossedWaitsForThePull", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a\nb", 1)
		edited(c, "n1", "a\nB")
		c.startBatch()
		edited(c, "n1", "a\nB\nc") // on top of the batch on its way
		if e := c.pend["n1"]; !e.speculative {
			t.Fatal("an edit of a row on its way is not based on it")
		}
		c.acked(3, false)
		if c.sent == nil {
			t.Fatal("absorbed before the copy reached the ack's version")
		}
		// The pull: someone's edit at 2, ours merged into it at 3.
		c.apply(&message{ServerVersion: 3, Notes: []board.Note{convNote("n1", "T", "A\nB", 3)}}, false)
		if c.sent != nil {
			t.Fatal("not absorbed at the ack's version")
		}
		e := c.pend["n1"]
		if e.speculative || e.base.Version != 3 {
			t.Fatalf("edit based on %+v (speculative %v), want the row at 3", e.base, e.speculative)
		}
		if got, want := e.mine.Content, "A\nB\nc"; got != want {
			t.Fatalf("rebased edit %q, want %q", got, want)
		}
	})
	t.Run("LiveGap", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a", 1)
		if !c.apply(&message{Type: "changes", Since: 2, ServerVersion: 3}, true) {
			t.Fatal("a changes message above the copy's version is not a gap")
		}
		if c.apply(&message{Type: "changes", Since: 0, ServerVersion: 1}, true) {
			t.Fatal("an old changes message is a gap")
		}
	})
}

func TestClientDelete(t *testing.T) {
	t.Run("Revival", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a", 1)
		edited(c, "n1", "a\nb")
		c.apply(&message{ServerVersion: 2, DeletedNoteIDs: []string{"n1"}}, false)
		if _, ok := c.view("n1"); !ok {
			t.Fatal("a server deletion dropped the unsent edit")
		}
		c.startBatch()
		if got, want := c.e.st.revivals.Load(), int64(1); got != want {
			t.Fatalf("revivals %d, want %d", got, want)
		}
		if !strings.Contains(string(c.sent.body), `"baseVersion":1`) {
			t.Fatalf("push %s does not carry the edit's base", c.sent.body)
		}
		c.acked(3, false)
		if c.sent == nil {
			t.Fatal("a revival was taken as its own row: the server merges the deleted row in")
		}
	})
	t.Run("UnsentLinesAreRemovedOnPurpose", func(t *testing.T) {
		c := testClient(t)
		serverRow(c, "n1", "a", 1)
		n, _ := c.view("n1")
		n.Content += "\n" + c.newLine("n1")
		c.change(n)
		c.startBatch()
		c.acked(2, false) // pushed: no longer the client's alone
		c.createNote()
		c.deleteNote("n1")
		c.deleteNote("c1-n1")
		removed := c.e.ledger.removed
		for _, typed := range c.e.ledger.typed {
			if got, want := removed[typed.Token], typed.Note == "c1-n1"; got != want {
				t.Errorf("%s in %s: removed=%v, want %v", typed.Token, typed.Note, got, want)
			}
		}
		if _, ok := c.pend["c1-n1"]; ok {
			t.Error("a note created and deleted before any push is still queued")
		}
		if e := c.pend["n1"]; e == nil || !e.del {
			t.Error("the deletion of a pushed note is not queued")
		}
	})
}

// TestClientOverlapRules: what each rule does after a rebase that
// overlapped.
func TestClientOverlapRules(t *testing.T) {
	overlapped := func(t *testing.T, rule string) *cclient {
		c := testClient(t)
		c.e.overlapRule = rule
		serverRow(c, "n1", "x\ny", 1)
		edited(c, "n1", "x\nmine")
		serverRow(c, "n1", "x\ntheirs", 2)
		serverRow(c, "n1", "X\ntheirs", 3) // a later rebase without overlap
		if got, want := c.pend["n1"].mine.Content, "X\nmine"; got != want {
			t.Fatalf("rebased edit %q, want %q", got, want)
		}
		c.startBatch()
		return c
	}
	baseVersion := func(c *cclient) any {
		var body struct {
			Notes struct{ Upserted []map[string]any }
		}
		if err := json.Unmarshal(c.sent.body, &body); err != nil {
			t.Fatal(err)
		}
		return body.Notes.Upserted[0]["baseVersion"]
	}
	t.Run(OverlapNone, func(t *testing.T) {
		c := overlapped(t, OverlapNone)
		if got := baseVersion(c); got != 3.0 || len(c.logs) > 0 {
			t.Fatalf("baseVersion %v and %d log entries, want 3 and none", got, len(c.logs))
		}
	})
	t.Run(OverlapLog, func(t *testing.T) {
		c := overlapped(t, OverlapLog)
		if got := baseVersion(c); got != 3.0 || len(c.logs) != 1 {
			t.Fatalf("baseVersion %v and %d log entries, want 3 and one", got, len(c.logs))
		}
	})
	t.Run(OverlapKeepBase, func(t *testing.T) {
		c := overlapped(t, OverlapKeepBase)
		if got := baseVersion(c); got != 1.0 || len(c.logs) > 0 {
			t.Fatalf("baseVersion %v and %d log entries, want 1 (the base before the overlap) and none", got, len(c.logs))
		}
		c.acked(4, false)
		if c.sent == nil {
			t.Fatal("pushed on an older base, the row was taken as stored without the server's merge")
		}
	})
}
