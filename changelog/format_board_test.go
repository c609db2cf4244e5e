package changelog_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"corkboard/board"
	"corkboard/changelog"
)

func exampleState() board.State {
	return board.State{
		Board: board.Header{ID: "team-42", Name: "Sprint 12", Version: 42, UpdatedAt: "2026-03-01T10:00:00Z"},
		Phases: &board.Phases{
			Phases: []json.RawMessage{
				json.RawMessage(`{"id":"plan","name":"Plan","color":"#ffcc00"}`),
				json.RawMessage(`{"id":"build","name":"Build it"}`),
			},
			CurrentPhaseID: "build",
		},
		Notes: []board.Note{
			exampleNote(),
			{
				ID: "note-2", Title: "Tricky content", X: 0, Y: 300.25, Color: "pink", Type: "sticky",
				UpdatedAt: "2026-03-01T09:00:00Z", Version: 40,
				Content: "---\nnot: front matter\n---\n## Notes\n<!-- a comment -->\n````\nfour ticks\n````\n",
			},
			{ID: "note-1", Title: "", X: -12.75, Y: 8, Color: "blue", Type: "sticky", UpdatedAt: "2026-02-28T17:45:00Z", Version: 12},
		},
		TrackerItems: []board.TrackerItem{
			{
				ID: "item-2", Key: "CORK-2", Type: "task", Summary: "Write the Markdown format doc",
				Status: "in_progress", ParentID: "item-1", UpdatedAt: "2026-03-01T08:00:00Z", Version: 39,
				Description: "See `docs/markdown-format.md`.\n\n- examples\n- the delimiting rule",
			},
			{ID: "item-1", Key: "CORK-1", Type: "story", Summary: "Changelog and snapshots", Status: "todo", UpdatedAt: "2026-02-27T12:00:00Z", Version: 30},
		},
	}
}

func TestRenderBoard_Golden(t *testing.T) {
	s := exampleState()
	golden(t, "board.md", changelog.RenderBoard(s))
	golden(t, "board-empty.md", changelog.RenderBoard(board.State{Board: board.Header{ID: "fresh-board"}}))

	doc, err := os.ReadFile(filepath.Join("testdata", "board.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := changelog.ParseBoard(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffState(s, got); d != "" {
		t.Fatalf("ParseBoard(testdata/board.md) (-want +got):\n%s", d)
	}
}

func TestRenderBoard_Readable(t *testing.T) {
	doc := string(changelog.RenderBoard(exampleState()))
	for _, want := range []string{
		"# Sprint 12\n",
		"## Notes\n",
		"### Retro: what went well\n",
		"### Untitled note\n",
		"## Tracker items\n",
		"### CORK-2 — Write the Markdown format doc\n",
		// The content with a run of four backticks gets a fence of five.
		"`````markdown\n---\nnot: front matter\n",
		"```markdown\nSee `docs/markdown-format.md`.",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered board lacks %q", want)
		}
	}
	// Sorted by id, whatever the order in the state.
	if i, j := strings.Index(doc, "id: 'note-1'"), strings.Index(doc, "id: 'note-2'"); i < 0 || j < 0 || i > j {
		t.Errorf("notes are not sorted by id (note-1 at %d, note-2 at %d)", i, j)
	}
	if i, j := strings.Index(doc, "id: 'item-1'"), strings.Index(doc, "id: 'item-2'"); i < 0 || j < 0 || i > j {
		t.Errorf("items are not sorted by id (item-1 at %d, item-2 at %d)", i, j)
	}
}

func TestRenderBoard_Deterministic(t *testing.T) {
	s := exampleState()
	want := changelog.RenderBoard(s)
	r := s
	r.Notes = []board.Note{s.Notes[2], s.Notes[0], s.Notes[1]}
	r.TrackerItems = []board.TrackerItem{s.TrackerItems[1], s.TrackerItems[0]}
	if got := changelog.RenderBoard(r); string(got) != string(want) {
		t.Fatalf("rendering depends on the order of notes and items")
	}
	if s.Notes[0].ID != "note-7" {
		t.Fatalf("RenderBoard reordered the caller's slice")
	}
}

func TestHeadingsAreSafe(t *testing.T) {
	s := board.State{
		Board: board.Header{ID: "b"},
		Notes: []board.Note{{ID: "n", Title: "# not\n## a heading <b>*x*</b> [l](javascript:x) ```\r\u2028 " + strings.Repeat("long ", 100)}},
	}
	doc := string(changelog.RenderBoard(s))
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "### ") {
			if want := `### \# not \#\# a heading \<b\>\*x\*\</b\> \[l\](javascript:x) \` + "`"; !strings.HasPrefix(line, want) {
				t.Fatalf("heading = %q, want it to start with %q", line, want)
			}
			if !strings.HasSuffix(line, "…") || len([]rune(line)) > 4+80+30 {
				t.Fatalf("heading is not shortened: %q", line)
			}
		}
	}
}

func TestBoardRoundTrip(t *testing.T) {
	base := exampleState()
	var cases []board.State
	cases = append(cases,
		board.State{Board: board.Header{ID: "empty"}},
		board.State{Board: board.Header{ID: "p"}, Phases: &board.Phases{}},
		board.State{Board: board.Header{ID: "p"}, Phases: &board.Phases{Phases: []json.RawMessage{
			json.RawMessage("{\n  \"id\": \"pretty\",\n\t\"name\": \"It's \\u2028 odd\"\n}"),
			json.RawMessage(`{"id":"x","n":1.50,"u":"\u00e9é"}`),
		}, CurrentPhaseID: "x"}},
	)
	for i, text := range nastyTexts {
		s := base
		s.Notes = []board.Note{base.Notes[0], base.Notes[1]}
		s.Notes[0].Content = text
		s.Notes[1].Content = text
		if utf8.RuneCountInString(text) < board.MaxNoteContent {
			s.Notes[1].Content = "`" + text
		}
		s.TrackerItems = []board.TrackerItem{base.TrackerItems[0]}
		s.TrackerItems[0].Description = text
		s.Board.Name = fmt.Sprint("case ", i)
		cases = append(cases, s)
	}
	for _, short := range nastyShort {
		s := base
		s.Board.Name = short
		s.Notes = []board.Note{base.Notes[0]}
		s.Notes[0].Title, s.Notes[0].Color = short, short
		s.TrackerItems = []board.TrackerItem{base.TrackerItems[0]}
		it := &s.TrackerItems[0]
		it.Key, it.Summary, it.Status, it.ParentID, it.Type = short, short, short, short, short
		if short != "" {
			s.Notes[0].ID, it.ID = short, short
		}
		cases = append(cases, s)
	}
	withDeleted := base
	withDeleted.Notes = append([]board.Note(nil), base.Notes...)
	withDeleted.Notes[0].DeletedAt = ptr("2026-03-02T00:00:00Z")
	withDeleted.TrackerItems = append([]board.TrackerItem(nil), base.TrackerItems...)
	withDeleted.TrackerItems[1].DeletedAt = ptr("")
	sized := base
	sized.Notes = append([]board.Note(nil), base.Notes...)
	sized.Notes[0].W, sized.Notes[0].H = 480.5, 320 // a board snapshot restores a note's size
	cases = append(cases, withDeleted, base, sized)

	for i, s := range cases {
		doc := changelog.RenderBoard(s)
		got, err := changelog.ParseBoard(doc)
		if err != nil {
			t.Fatalf("case %d: ParseBoard(RenderBoard(s)): %v\ndocument:\n%s", i, err, excerpt(doc))
		}
		if d := diffState(s, got); d != "" {
			t.Fatalf("case %d: round trip (-want +got):\n%s\ndocument:\n%q", i, d, excerpt(doc))
		}
		if again := changelog.RenderBoard(got); string(again) != string(doc) {
			t.Fatalf("case %d: rendering the parsed board gives a different document", i)
		}
	}
}

func TestParseBoard_EmptyListsAreNotNil(t *testing.T) {
	got, err := changelog.ParseBoard(changelog.RenderBoard(board.State{Board: board.Header{ID: "b"}, Phases: &board.Phases{}}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Notes == nil || got.TrackerItems == nil || got.Phases == nil || got.Phases.Phases == nil {
		t.Fatalf("ParseBoard = %+v, want empty non-nil lists", got)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"notes":[],"trackerItems":[]`; !strings.Contains(string(b), want) {
		t.Fatalf("JSON %s lacks %s", b, want)
	}
}

func TestParseBoard_Lenient(t *testing.T) {
	doc := string(changelog.RenderBoard(exampleState()))
	for _, tc := range []struct {
		name string
		edit func(string) string
	}{
		{"FewerBlankLines", func(d string) string {
			for _, r := range [][2]string{{"---\n\n#", "---\n#"}, {"## Notes\n\n", "## Notes\n"}, {"\n\n```yaml\n", "\n```yaml\n"}, {"```\n\n```markdown", "```\n```markdown"}, {"\n\n## Tracker", "\n## Tracker"}} {
				d = strings.ReplaceAll(d, r[0], r[1])
			}
			return d
		}},
		{"MoreBlankLines", func(d string) string { return strings.ReplaceAll(d, "\n\n###", "\n\n\n\n###") }},
		{"NoFinalNewline", func(d string) string { return strings.TrimSuffix(d, "\n") }},
		{"EditedHeadings", func(d string) string {
			return strings.Replace(strings.Replace(d, "# Sprint 12", "# Renamed by hand", 1), "### Retro", "### Something else", 1)
		}},
		{"FieldOrder", func(d string) string {
			return strings.Replace(d, "id: 'team-42'\nname: 'Sprint 12'\n", "name: 'Sprint 12'\nid: team-42\n", 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := changelog.ParseBoard([]byte(tc.edit(doc)))
			if err != nil {
				t.Fatalf("ParseBoard: %v", err)
			}
			if d := diffState(exampleState(), got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseBoard_Invalid(t *testing.T) {
	doc := string(changelog.RenderBoard(exampleState()))
	replace := func(old, new string) string {
		if !strings.Contains(doc, old) {
			t.Fatalf("test setup: the rendered board lacks %q", old)
		}
		return strings.Replace(doc, old, new, 1)
	}
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"Empty", "", []string{"must start with a YAML front-matter block"}},
		{"PlainMarkdown", "# Board\n", []string{"must start with a YAML front-matter block"}},
		{"CRLF", strings.ReplaceAll(doc, "\n", "\r\n"), []string{"line endings must be LF"}},
		{"FrontMatterUnclosed", "---\nformat: corkboard-board/1\nid: b\n", []string{"never closed"}},
		{"NoFormat", replace("format: corkboard-board/1\n", ""), []string{"format: corkboard-board/1", "is missing"}},
		{"WrongFormat", replace("format: corkboard-board/1", "format: corkboard-board/9"), []string{`format must be "corkboard-board/1"`}},
		{"NoteSnapshot", string(changelog.RenderNote(exampleNote())), []string{"note snapshot, not a board snapshot"}},
		{"BadBoardID", replace("id: 'team-42'", "id: 'team 42'"), []string{"id must be 1 to 64 characters"}},
		{"UnknownBoardField", replace("version: 42\n", "version: 42\nowner: me\n"), []string{`unknown field "owner"`, "line 6"}},
		{"PhasesNotMapping", replace("phases:\n  currentPhaseId: 'build'\n", "phases: 3\nx:\n  currentPhaseId: 'build'\n"), []string{"phases must be a mapping"}},
		{"PhaseNotJSON", replace(`'{"id":"plan"`, `'{"id":plan"`), []string{"phases.phases[0] must be an object"}},
		{"PhaseUnknownCurrent", replace("currentPhaseId: 'build'", "currentPhaseId: 'ship'"), []string{"currentPhaseId must be the id of one of the phases"}},
		{"NoBoardHeading", replace("# Sprint 12\n", ""), []string{"line 15", "expected the board heading"}},
		{"NoNotesHeading", replace("## Notes\n", ""), []string{`expected "## Notes"`}},
		{"NoItemsHeading", replace("## Tracker items\n", ""), []string{"note under the heading on line", `unknown field "key"`}},
		{"StrayText", replace("## Tracker items\n", "Some words\n\n## Tracker items\n"), []string{"expected a note heading", `"Some words"`}},
		{"Truncated", doc[:strings.Index(doc, "## Tracker items")], []string{`ends where "## Tracker items" was expected`}},
		{"NoteWithoutYAML", replace("```yaml\nid: 'note-1'", "```json\nid: 'note-1'"), []string{"expected the \"```yaml\" block of a note"}},
		{"YAMLUnclosed", doc[:strings.Index(doc, "id: 'item-2'")], []string{"is never closed by \"```\""}},
		{"TextUnclosed", doc[:strings.Index(doc, "````\nfour ticks")+10], []string{"text block opened by \"`````\" is never closed"}},
		{"NoteNoID", replace("id: 'note-1'\n", ""), []string{"the note has no id"}},
		{"NoteUnknownField", replace("id: 'note-1'\n", "id: 'note-1'\ncontent: 'x'\n"), []string{`unknown field "content"`}},
		{"NoteBadX", replace("x: -12.75", "x: far"), []string{"x must be a number"}},
		{"NoteDuplicate", replace("id: 'note-2'", "id: 'note-1'"), []string{`note id "note-1" appears twice`}},
		{"ItemDuplicate", replace("id: 'item-2'", "id: 'item-1'"), []string{`tracker item id "item-1" appears twice`}},
		{"ItemDescriptionInYAML", replace("key: 'CORK-1'\n", "key: 'CORK-1'\ndescription: 'x'\n"), []string{`unknown field "description"`}},
		{"ItemBadUpdatedAt", replace("updatedAt: '2026-02-27T12:00:00Z'", "updatedAt: 'monday'"), []string{"trackerItem.updatedAt must be an ISO 8601 timestamp"}},
		{"ItemNegativeVersion", replace("version: 30", "version: -30"), []string{"version must not be negative"}},
		{"TrailingGarbage", doc + "\nthe end\n", []string{"expected a tracker item heading", `"the end"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := changelog.ParseBoard([]byte(tc.doc))
			if err == nil {
				t.Fatalf("ParseBoard = %+v, want an error", s)
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}
