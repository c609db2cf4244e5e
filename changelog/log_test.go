package changelog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
)

var logT0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

type logEnv struct {
	db    *bolt.DB
	clock *persisttest.Clock
	dir   string
	log   *changelog.Log
}

// newLogEnv opens real bbolt in a temp folder with a clock that stands
// still until the test moves it, claims the boards, and builds a Log that
// keeps keep snapshots.
func newLogEnv(tb testing.TB, keep int, boards ...string) *logEnv {
	tb.Helper()
	db, clock, dir := persisttest.Open(tb, logT0, boards...)
	return &logEnv{db: db, clock: clock, dir: dir, log: changelog.New(db, changelog.Options{Keep: keep, Logger: slog.New(slog.DiscardHandler)})}
}

func (e *logEnv) push(tb testing.TB, boardID string, p board.Push) int64 {
	tb.Helper()
	v, _, err := e.db.ApplyPush(context.Background(), boardID, &p, "")
	if err != nil {
		tb.Fatalf("push: %v", err)
	}
	return v
}

func (e *logEnv) append(tb testing.TB, boardID string, entries ...changelog.Entry) []persist.LogEntry {
	tb.Helper()
	out, err := e.log.Append(context.Background(), boardID, entries)
	if err != nil {
		tb.Fatalf("Append: %v", err)
	}
	return out
}

func noteDoc(n board.Note) string { return string(changelog.RenderNote(n)) }

func wantField(tb testing.TB, err error, code, field string) {
	tb.Helper()
	if got := board.ErrorCode(err); got != code {
		tb.Fatalf("error %v: code %q, want %q", err, got, code)
	}
	if field == "" {
		return
	}
	e, ok := err.(*board.Error)
	if !ok || e.Field != field {
		tb.Fatalf("error %v: want field %q", err, field)
	}
	if !strings.Contains(e.Message, field) {
		tb.Fatalf("message %q does not name %s", e.Message, field)
	}
}

func TestAppendRejectsAndStoresNothing(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ok := changelog.Entry{NoteID: "n1", Action: changelog.ActionCreateNote, Content: noteDoc(board.Note{ID: "n1", Title: "fine"})}
	for _, tc := range []struct {
		name  string
		bad   changelog.Entry
		field string
	}{
		{"UnknownAction", changelog.Entry{NoteID: "n1", Action: "move_note", Content: ok.Content}, "entries[1].action"},
		{"EmptyAction", changelog.Entry{NoteID: "n1", Content: ok.Content}, "entries[1].action"},
		{"NoNoteID", changelog.Entry{Action: changelog.ActionUpdateNote, Content: ok.Content}, "entries[1].noteId"},
		{"LongNoteID", changelog.Entry{NoteID: strings.Repeat("n", 129), Action: changelog.ActionUpdateNote, Content: ok.Content}, "entries[1].noteId"},
		{"PlainMarkdownOverLimit", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: strings.Repeat("x", 30001)}, "entries[1].content"},
		{"BrokenSnapshot", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: "---\nid: n1\n"}, "entries[1].content"},
		{"OtherNotesSnapshot", changelog.Entry{NoteID: "n2", Action: changelog.ActionUpdateNote, Content: ok.Content}, "entries[1].content"},
		{"ContentOverLimit", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: noteDoc(board.Note{ID: "n1", Content: strings.Repeat("x", 30001)})}, "entries[1].content"},
		{"ContentTooManyBytes", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: strings.Repeat("x", changelog.MaxEntryBytes+1)}, "entries[1].content"},
		{"BoardSnapshotAsNote", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: string(changelog.RenderBoard(board.State{Board: board.Header{ID: "b1"}}))}, "entries[1].content"},
		{"EmptyRename", changelog.Entry{Action: changelog.ActionRenameBoard}, "entries[1].content"},
		{"LongRename", changelog.Entry{Action: changelog.ActionRenameBoard, Content: strings.Repeat("n", 201)}, "entries[1].content"},
		{"DeleteWithoutAnySnapshot", changelog.Entry{NoteID: "ghost", Action: changelog.ActionDeleteNote}, "entries[1].content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.log.Append(context.Background(), "b1", []changelog.Entry{ok, tc.bad, ok})
			wantField(t, err, board.EINVALID, tc.field)
		})
	}
	t.Run("TooManyEntries", func(t *testing.T) {
		many := make([]changelog.Entry, changelog.MaxEntries+1)
		for i := range many {
			many[i] = ok
		}
		_, err := e.log.Append(context.Background(), "b1", many)
		wantField(t, err, board.EINVALID, "entries")
	})
	list, err := e.log.List(context.Background(), "b1", changelog.Query{})
	if err != nil || len(list) != 0 {
		t.Fatalf("after refused appends the log holds %v (%v), want nothing", list, err)
	}
	if md, _, _ := e.db.CurrentSnapshot(context.Background(), "b1"); md != nil {
		t.Fatalf("a refused append wrote current.md")
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := e.log.Append(context.Background(), "ghost", []changelog.Entry{ok})
		wantField(t, err, board.ENOTFOUND, "")
	})
	t.Run("OK500", func(t *testing.T) {
		many := make([]changelog.Entry, changelog.MaxEntries)
		for i := range many {
			many[i] = ok
		}
		if out := e.append(t, "b1", many...); len(out) != changelog.MaxEntries {
			t.Fatalf("stored %d entries, want %d", len(out), changelog.MaxEntries)
		}
	})
}

func TestAppendStoresCanonicalMarkdown(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ctx := context.Background()
	handWritten := "---\r\ntitle: \"Plan\"\r\nid: n1\r\nx: 10\r\n---\r\n# Plan\r\n- ship it"
	out := e.append(t, "b1",
		changelog.Entry{NoteID: "n1", Action: changelog.ActionCreateNote, Content: handWritten},
		changelog.Entry{NoteID: "ignored", Action: changelog.ActionRenameBoard, Content: "Sprint 12\n"},
	)
	if out[0].NoteID != "n1" || out[1].NoteID != "" || !strings.HasSuffix(out[1].Key, "-board") {
		t.Fatalf("stored %v: want n1's entry, then a rename about no note with key …-board", out)
	}
	got, err := e.log.Entry(ctx, "b1", out[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	want := noteDoc(board.Note{ID: "n1", Title: "Plan", X: 10, Content: "# Plan\r\n- ship it"})
	if string(got.Content) != want {
		t.Fatalf("stored note entry:\n%s\nwant the canonical rendering:\n%s", got.Content, want)
	}
	ren, err := e.log.Entry(ctx, "b1", out[1].Key)
	if err != nil || string(ren.Content) != string(changelog.RenderRename("Sprint 12")) {
		t.Fatalf("stored rename %q (%v), want %q", ren.Content, err, changelog.RenderRename("Sprint 12"))
	}
}

// TestAppendPlainMarkdown: a note entry whose content has no front matter
// is the note's text; the other fields are the server's copy of the note
// (live, else its newest logged snapshot, else zero), and the entry
// restores into a note a push accepts.
func TestAppendPlainMarkdown(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ctx := context.Background()
	live := board.Note{ID: "n1", Title: "Plan", X: 10, Y: -2.5, Color: "blue", Type: "sticky", UpdatedAt: "2026-03-01T09:00:00Z"}
	e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{live}}})
	e.append(t, "b1", changelog.Entry{NoteID: "n2", Action: changelog.ActionCreateNote, Content: noteDoc(board.Note{ID: "n2", Title: "Logged", Color: "pink"})})

	text := "# New plan\n\n- ship it\n---\n"
	live.Version = 1
	for _, tc := range []struct {
		name  string
		entry changelog.Entry
		want  board.Note
	}{
		{"FromLiveNote", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: text},
			func() board.Note { n := live; n.Content = text; return n }()},
		{"FromLoggedSnapshot", changelog.Entry{NoteID: "n2", Action: changelog.ActionUpdateNote, Content: "pink text"},
			board.Note{ID: "n2", Title: "Logged", Color: "pink", Content: "pink text"}},
		{"UnknownNote", changelog.Entry{NoteID: "n3", Action: changelog.ActionCreateNote, Content: "fresh"},
			board.Note{ID: "n3", Content: "fresh"}},
		{"EmptyText", changelog.Entry{NoteID: "n1", Action: changelog.ActionCreateNote},
			func() board.Note { n := live; n.Content = ""; return n }()},
		{"DeleteWithText", changelog.Entry{NoteID: "n1", Action: changelog.ActionDeleteNote, Content: "last words"},
			func() board.Note { n := live; n.Content = "last words"; return n }()},
		{"OpensWithRule", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: "---\nafter the rule"},
			func() board.Note { n := live; n.Content = "---\nafter the rule"; return n }()},
		{"OwnFrontMatterWithoutID", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: "---\ntags: [a]\n---\nbody"},
			func() board.Note { n := live; n.Content = "---\ntags: [a]\n---\nbody"; return n }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := e.append(t, "b1", tc.entry)
			if out[0].NoteID != tc.entry.NoteID || out[0].Action != tc.entry.Action {
				t.Fatalf("stored %+v", out[0])
			}
			got, err := e.log.Entry(ctx, "b1", out[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			if want := noteDoc(tc.want); string(got.Content) != want {
				t.Fatalf("stored:\n%s\nwant:\n%s", got.Content, want)
			}
			n, err := e.log.RestoreNote(ctx, "b1", out[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			if err := (&board.Push{Notes: board.NoteChanges{Upserted: []board.Note{n}}}).Validate(); err != nil {
				t.Fatalf("restored %+v, which a push refuses: %v", n, err)
			}
		})
	}
}

func TestAppendRefreshesCurrentFromServerState(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ctx := context.Background()
	e.push(t, "b1", board.Push{Board: &board.BoardPatch{Name: "Server name"}, Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1", Title: "server", Content: "live"}}}})
	// The entry claims another content: the log keeps it, but current.md
	// shows what the server holds.
	e.append(t, "b1", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: noteDoc(board.Note{ID: "n1", Title: "client", Content: "client only"})})
	md, fresh, err := e.db.CurrentSnapshot(ctx, "b1")
	if err != nil || !fresh {
		t.Fatalf("current.md fresh=%v (%v) after an append", fresh, err)
	}
	st, err := changelog.ParseBoard(md)
	if err != nil {
		t.Fatal(err)
	}
	if st.Board.Name != "Server name" || len(st.Notes) != 1 || st.Notes[0].Content != "live" || st.Board.Version != 1 {
		t.Fatalf("current.md holds %+v, want the server's board at version 1", st)
	}
}

func TestDeleteNoteKeepsPreDeletionSnapshot(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ctx := context.Background()
	live := board.Note{ID: "n1", Title: "Keep me", Content: "precious", Color: "pink", UpdatedAt: "2026-03-01T09:00:00Z"}
	e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{live}}})

	t.Run("FromContent", func(t *testing.T) {
		out := e.append(t, "b1", changelog.Entry{NoteID: "n1", Action: changelog.ActionDeleteNote, Content: noteDoc(live)})
		n, err := e.log.RestoreNote(ctx, "b1", out[0].Key)
		if err != nil || n.Content != "precious" || n.Title != "Keep me" {
			t.Fatalf("RestoreNote=%+v,%v", n, err)
		}
	})
	t.Run("FromServerStateWhenStillLive", func(t *testing.T) {
		out := e.append(t, "b1", changelog.Entry{NoteID: "n1", Action: changelog.ActionDeleteNote})
		n, err := e.log.RestoreNote(ctx, "b1", out[0].Key)
		if err != nil || n.Content != "precious" || n.Color != "pink" || n.Version != 1 {
			t.Fatalf("RestoreNote=%+v,%v; want the stored note", n, err)
		}
	})
	t.Run("FromLogWhenAlreadyDeleted", func(t *testing.T) {
		e.append(t, "b1", changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: noteDoc(board.Note{ID: "n1", Content: "last words"})})
		e.push(t, "b1", board.Push{Notes: board.NoteChanges{Deleted: []string{"n1"}}})
		out := e.append(t, "b1", changelog.Entry{NoteID: "n1", Action: changelog.ActionDeleteNote})
		n, err := e.log.RestoreNote(ctx, "b1", out[0].Key)
		if err != nil || n.Content != "last words" {
			t.Fatalf("RestoreNote=%+v,%v; want the newest logged snapshot", n, err)
		}
	})
}

func TestListQueries(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ctx := context.Background()
	var entries []changelog.Entry
	for i := range 30 {
		id := fmt.Sprintf("n%d", i%3)
		entries = append(entries, changelog.Entry{NoteID: id, Action: changelog.ActionUpdateNote, Content: noteDoc(board.Note{ID: id, Content: fmt.Sprint(i)})})
	}
	entries = append(entries, changelog.Entry{Action: changelog.ActionRenameBoard, Content: "New name"})
	in := e.append(t, "b1", entries...)

	for _, tc := range []struct {
		name string
		q    changelog.Query
		want int
	}{
		{"DefaultLimit", changelog.Query{}, 31},
		{"Limit1", changelog.Query{Limit: 1}, 1},
		{"Limit500", changelog.Query{Limit: 500}, 31},
		{"Note", changelog.Query{NoteID: "n1"}, 10},
		{"Rename", changelog.Query{Action: changelog.ActionRenameBoard}, 1},
		{"NoDeletes", changelog.Query{Action: changelog.ActionDeleteNote}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.log.List(ctx, "b1", tc.q)
			if err != nil || len(got) != tc.want {
				t.Fatalf("List=%d entries (%v), want %d", len(got), err, tc.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i-1].Timestamp <= got[i].Timestamp {
					t.Fatalf("not newest first: %v", got)
				}
			}
		})
	}
	if got, _ := e.log.List(ctx, "b1", changelog.Query{Limit: 1}); got[0].Key != in[30].Key {
		t.Fatalf("newest %v, want %v", got[0], in[30])
	}
	for _, tc := range []struct {
		name  string
		q     changelog.Query
		field string
	}{
		{"Limit501", changelog.Query{Limit: 501}, "limit"},
		{"NegativeLimit", changelog.Query{Limit: -1}, "limit"},
		{"Action", changelog.Query{Action: "create"}, "action"},
		{"LongNote", changelog.Query{NoteID: strings.Repeat("n", 129)}, "noteId"},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			_, err := e.log.List(ctx, "b1", tc.q)
			wantField(t, err, board.EINVALID, tc.field)
		})
	}
}

func TestRestore(t *testing.T) {
	e := newLogEnv(t, 0, "b1", "b2")
	ctx := context.Background()
	note := board.Note{ID: "n1", Title: "T", Content: "body", X: 1.5, Y: -2, Color: "blue", Type: "sticky", UpdatedAt: "2026-03-01T09:00:00Z", Version: 3}
	e.push(t, "b1", board.Push{Board: &board.BoardPatch{Name: "Board one"}, Notes: board.NoteChanges{Upserted: []board.Note{note}}, TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{{ID: "i1", Key: "CB-1", Summary: "do"}}}})
	out := e.append(t, "b1",
		changelog.Entry{NoteID: "n1", Action: changelog.ActionUpdateNote, Content: noteDoc(note)},
		changelog.Entry{Action: changelog.ActionRenameBoard, Content: "Board one"},
	)
	snap, err := e.log.Snapshot(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	e.push(t, "b1", board.Push{Notes: board.NoteChanges{Deleted: []string{"n1"}}})

	t.Run("Note", func(t *testing.T) {
		n, err := e.log.RestoreNote(ctx, "b1", out[0].Key)
		if err != nil || !reflect.DeepEqual(n, note) {
			t.Fatalf("RestoreNote=%+v,%v; want %+v", n, err, note)
		}
	})
	t.Run("BoardSnapshot", func(t *testing.T) {
		st, err := e.log.RestoreBoard(ctx, "b1", snap.Key)
		if err != nil {
			t.Fatal(err)
		}
		if st.Board.Name != "Board one" || len(st.Notes) != 1 || st.Notes[0].Content != "body" || len(st.TrackerItems) != 1 {
			t.Fatalf("RestoreBoard=%+v; want the board as snapshotted, n1 live", st)
		}
	})
	t.Run("BoardCurrentIsTheServersState", func(t *testing.T) {
		st, err := e.log.RestoreBoard(ctx, "b1", changelog.CurrentKey)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Notes) != 0 || st.Board.Version != 2 || st.Notes == nil {
			t.Fatalf("RestoreBoard(current.md)=%+v; want version 2 with n1 deleted", st)
		}
	})
	t.Run("ChangesNothing", func(t *testing.T) {
		st, err := e.db.BoardState(ctx, "b1")
		if err != nil || len(st.Notes) != 0 || st.Board.Version != 2 {
			t.Fatalf("state after restores %+v (%v); want it untouched", st, err)
		}
	})
	for _, tc := range []struct {
		name, board, typ, key, code string
	}{
		{"NoteFromRename", "b1", "note", out[1].Key, board.EINVALID},
		{"NoteFromSnapshot", "b1", "note", snap.Key, board.EINVALID},
		{"NoteFromCurrent", "b1", "note", "current.md", board.EINVALID},
		{"BoardFromEntry", "b1", "board", out[0].Key, board.EINVALID},
		{"NoteGarbage", "b1", "note", "garbage", board.EINVALID},
		{"NoteDotDot", "b1", "note", "log/../../b2/" + out[0].Key, board.EINVALID},
		{"BoardGarbage", "b1", "board", "snapshots/../current.md", board.EINVALID},
		{"NoteUnknown", "b1", "note", "log/2020-01-01T00:00:00.000000000Z-n1", board.ENOTFOUND},
		{"BoardUnknown", "b1", "board", "snapshots/2020-01-01T00:00:00.000000000Z.md", board.ENOTFOUND},
		{"NoteOtherBoard", "b2", "note", out[0].Key, board.ENOTFOUND},
		{"BoardOtherBoard", "b2", "board", snap.Key, board.ENOTFOUND},
	} {
		t.Run("Err"+tc.name, func(t *testing.T) {
			var err error
			if tc.typ == "note" {
				_, err = e.log.RestoreNote(ctx, tc.board, tc.key)
			} else {
				_, err = e.log.RestoreBoard(ctx, tc.board, tc.key)
			}
			field := ""
			if tc.code == board.EINVALID {
				field = "logKey"
			}
			wantField(t, err, tc.code, field)
		})
	}
}

func TestCurrentOfEmptyBoard(t *testing.T) {
	e := newLogEnv(t, 0, "fresh")
	md, err := e.log.Current(context.Background(), "fresh")
	if err != nil {
		t.Fatal(err)
	}
	st, err := changelog.ParseBoard(md)
	if err != nil {
		t.Fatalf("empty snapshot does not parse: %v\n%s", err, md)
	}
	if st.Board.ID != "fresh" || len(st.Notes) != 0 || len(st.TrackerItems) != 0 {
		t.Fatalf("empty board snapshot %+v", st)
	}
	if _, err := e.log.Current(context.Background(), "ghost"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("Current(unclaimed)=%v, want not_found", err)
	}
}

func TestCurrentFollowsPhases(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	ctx := context.Background()
	e.append(t, "b1") // stores current.md without phases
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"plan"}`)}, CurrentPhaseID: "plan"}
	if _, err := e.db.SetPhases(ctx, "b1", ph); err != nil {
		t.Fatal(err)
	}
	md, err := e.log.Current(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	st, err := changelog.ParseBoard(md)
	if err != nil || st.Phases == nil || st.Phases.CurrentPhaseID != "plan" {
		t.Fatalf("Current after a phase change: %+v (%v), want the new phases", st.Phases, err)
	}
}

func TestLogSurvivesRestart(t *testing.T) {
	e := newLogEnv(t, 0, "b1")
	out := e.append(t, "b1", changelog.Entry{NoteID: "n1", Action: changelog.ActionCreateNote, Content: noteDoc(board.Note{ID: "n1", Content: "kept"})})
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := changelog.New(db, changelog.Options{})
	n, err := l.RestoreNote(context.Background(), "b1", out[0].Key)
	if err != nil || n.Content != "kept" {
		t.Fatalf("after restart RestoreNote=%+v,%v", n, err)
	}
}
