package changelog_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		tb.Fatalf("%s differs from the rendering:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func exampleNote() board.Note {
	return board.Note{
		ID:        "note-7",
		Title:     "Retro: what went well",
		Content:   "# Wins\n\n- shipped the **sync** fix\n- `make test` is green\n\n```go\nfmt.Println(\"hi\")\n```\n",
		X:         120.5,
		Y:         -40,
		Color:     "yellow",
		Type:      "sticky",
		UpdatedAt: "2026-03-01T09:30:00.123Z",
		Version:   41,
	}
}

func TestRenderNote_Golden(t *testing.T) {
	n := exampleNote()
	golden(t, "note.md", changelog.RenderNote(n))

	deleted := n
	deleted.DeletedAt = ptr("2026-03-02T10:00:00Z")
	golden(t, "note-deleted.md", changelog.RenderNote(deleted))

	sized := n
	sized.W, sized.H = 300, 180.5
	golden(t, "note-sized.md", changelog.RenderNote(sized))
	if got, err := changelog.ParseNote(changelog.RenderNote(sized)); err != nil || got.W != 300 || got.H != 180.5 {
		t.Fatalf("ParseNote(note-sized.md)=%+v, %v, want w 300, h 180.5", got, err)
	}

	doc, err := os.ReadFile(filepath.Join("testdata", "note.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := changelog.ParseNote(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffNote(n, got); d != "" {
		t.Fatalf("ParseNote(testdata/note.md) (-want +got):\n%s", d)
	}
}

func TestNoteRoundTrip(t *testing.T) {
	base := exampleNote()
	var cases []board.Note
	for _, c := range nastyTexts {
		n := base
		n.Content = c
		cases = append(cases, n)
	}
	for _, s := range nastyShort {
		n := base
		n.Title, n.Color, n.Type = s, s, s
		if s != "" {
			n.ID = s
		}
		cases = append(cases, n)
	}
	for _, xy := range [][2]float64{{0, 0}, {negZero(), 1}, {1e9, -1e9}, {0.1, 1.0 / 3}, {5e-324, -2.5e-300}, {123456789.123456789, 1e-7}, {1e6, 1.5e-5}} {
		n := base
		n.X, n.Y = xy[0], xy[1]
		cases = append(cases, n)
	}
	for _, wh := range [][2]float64{{board.MinNoteWidth, board.MinNoteHeight}, {board.MaxNoteSize, board.MaxNoteSize}, {220.25, 1.0/3 + 160}} {
		n := base
		n.W, n.H = wh[0], wh[1]
		cases = append(cases, n)
	}
	for _, d := range []*string{nil, ptr(""), ptr("2026-03-02T10:00:00+05:30")} {
		n := base
		n.DeletedAt = d
		cases = append(cases, n)
	}
	long := base
	long.Title = strings.Repeat("t", board.MaxTitleLen)
	long.ID = strings.Repeat("i", board.MaxIDLen)
	long.Version = 1<<63 - 1
	cases = append(cases, long, board.Note{ID: "x"})

	for i, n := range cases {
		if err := n.Validate("note"); err != nil {
			t.Fatalf("case %d is not a valid note: %v", i, err)
		}
		doc := changelog.RenderNote(n)
		got, err := changelog.ParseNote(doc)
		if err != nil {
			t.Fatalf("case %d: ParseNote(RenderNote(n)): %v\ndocument:\n%s", i, err, excerpt(doc))
		}
		if d := diffNote(n, got); d != "" {
			t.Fatalf("case %d: round trip (-want +got):\n%s\ndocument:\n%q", i, d, excerpt(doc))
		}
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func TestParseNote_HandWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want board.Note
	}{
		{
			name: "AnyFieldOrder",
			doc:  "---\nversion: 3\ntype: task\nid: n1\ny: 2\nx: 1.5\ntitle: Buy milk\ncolor: blue\nupdatedAt: 2026-01-02T03:04:05Z\n---\nBody",
			want: board.Note{ID: "n1", Title: "Buy milk", X: 1.5, Y: 2, Color: "blue", Type: "task", UpdatedAt: "2026-01-02T03:04:05Z", Version: 3, Content: "Body"},
		},
		{
			name: "OnlyID",
			doc:  "---\nid: n1\n---\n",
			want: board.Note{ID: "n1"},
		},
		{
			name: "NoNewlineAfterClosingFence",
			doc:  "---\nid: n1\n---",
			want: board.Note{ID: "n1"},
		},
		{
			name: "NoTrailingNewline",
			doc:  "---\nid: n1\n---\nHello\nworld",
			want: board.Note{ID: "n1", Content: "Hello\nworld"},
		},
		{
			name: "OneTrailingNewline",
			doc:  "---\nid: n1\n---\nHello\n",
			want: board.Note{ID: "n1", Content: "Hello"},
		},
		{
			name: "BlankLineAfterFrontMatter",
			doc:  "---\nid: n1\n---\n\nHello\n",
			want: board.Note{ID: "n1", Content: "Hello"},
		},
		{
			name: "CRLF",
			doc:  "---\r\nid: n1\r\ntitle: T\r\nx: 3\r\n---\r\n\r\nLine 1\r\nLine 2\r\n",
			want: board.Note{ID: "n1", Title: "T", X: 3, Content: "Line 1\r\nLine 2"},
		},
		{
			name: "CRLFNoTrailingNewline",
			doc:  "---\r\nid: n1\r\n---\r\nLine 1\r\nLine 2",
			want: board.Note{ID: "n1", Content: "Line 1\r\nLine 2"},
		},
		{
			name: "BOMAndFenceWithTrailingBlanks",
			doc:  "\ufeff--- \nid: n1\n---\t\nx",
			want: board.Note{ID: "n1", Content: "x"},
		},
		{
			name: "DeletedAtNull",
			doc:  "---\nid: n1\ndeletedAt: null\n---\n",
			want: board.Note{ID: "n1"},
		},
		{
			name: "DeletedAtSet",
			doc:  "---\nid: n1\ndeletedAt: 2026-01-02T03:04:05Z\n---\n",
			want: board.Note{ID: "n1", DeletedAt: ptr("2026-01-02T03:04:05Z")},
		},
		{
			name: "ScalarsKeepTheirText",
			doc:  "---\nid: 0123\ntitle: yes\ncolor: 1.50\ntype: ~\n---\n",
			want: board.Note{ID: "0123", Title: "yes", Color: "1.50"},
		},
		{
			name: "QuotedEscapes",
			doc:  "---\nid: \"n\\t1\"\ntitle: 'it''s \"fine\"'\n---\n",
			want: board.Note{ID: "n\t1", Title: `it's "fine"`},
		},
		{
			name: "NumberForms",
			doc:  "---\nid: n1\nx: -7\ny: 2.5e+3\nversion: 0x10\n---\n",
			want: board.Note{ID: "n1", X: -7, Y: 2500, Version: 16},
		},
		{
			name: "BodyHoldsFencesAndFrontMatter",
			doc:  "---\nid: n1\n---\n---\nid: evil\n---\n# Title\n",
			want: board.Note{ID: "n1", Content: "---\nid: evil\n---\n# Title"},
		},
		{
			name: "CommentsInFrontMatter",
			doc:  "---\n# written by hand\nid: n1 # the id\n---\n",
			want: board.Note{ID: "n1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := changelog.ParseNote([]byte(tc.doc))
			if err != nil {
				t.Fatalf("ParseNote: %v", err)
			}
			if d := diffNote(tc.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseNote_Invalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"Empty", "", []string{"must start with a YAML front-matter block"}},
		{"NoFrontMatter", "# Just Markdown\n", []string{"must start with a YAML front-matter block"}},
		{"LeadingBlankLine", "\n---\nid: n1\n---\n", []string{"must start with a YAML front-matter block"}},
		{"OnlyOpeningFence", "---", []string{"never closed"}},
		{"Unclosed", "---\nid: n1\ntitle: x\n", []string{"never closed"}},
		{"NotYAML", "---\nid: n1\ntitle: [unclosed\n---\n", []string{"not valid YAML", "line "}},
		{"TabIndent", "---\nid: n1\n\ttitle: x\n---\n", []string{"not valid YAML"}},
		{"List", "---\n- id\n- n1\n---\n", []string{"YAML mapping"}},
		{"Scalar", "---\njust text\n---\n", []string{"YAML mapping"}},
		{"TwoDocuments", "---\nid: n1\n...\nid: n2\n---\n", []string{"one YAML document"}},
		{"MissingID", "---\ntitle: x\n---\n", []string{"no id"}},
		{"EmptyFrontMatter", "---\n---\nbody\n", []string{"no id"}},
		{"EmptyID", "---\nid: ''\n---\n", []string{"no id"}},
		{"UnknownField", "---\nid: n1\ncolour: red\n---\n", []string{`unknown field "colour"`, "line 3", "color"}},
		{"ContentInFrontMatter", "---\nid: n1\ncontent: x\n---\n", []string{`unknown field "content"`}},
		{"DuplicateField", "---\nid: n1\nx: 1\nx: 2\n---\n", []string{`"x" appears twice`, "line 4"}},
		{"XNotNumber", "---\nid: n1\nx: left\n---\n", []string{"x must be a number", `"left"`, "line 3"}},
		{"XQuotedNumber", "---\nid: n1\nx: '12'\n---\n", []string{"x must be a number"}},
		{"TitleList", "---\nid: n1\ntitle: [a, b]\n---\n", []string{"title must be a string"}},
		{"DeletedAtMap", "---\nid: n1\ndeletedAt: {a: 1}\n---\n", []string{"deletedAt must be a string or null"}},
		{"VersionNegative", "---\nid: n1\nversion: -1\n---\n", []string{"version must not be negative"}},
		{"VersionFraction", "---\nid: n1\nversion: 1.5\n---\n", []string{"version must be a whole number"}},
		{"VersionHuge", "---\nid: n1\nversion: 99999999999999999999\n---\n", []string{"version must be a whole number"}},
		{"XNaN", "---\nid: n1\nx: .nan\n---\n", []string{"note.x must be a finite number"}},
		{"XTooFar", "---\nid: n1\nx: 1e10\n---\n", []string{"note.x must be a finite number"}},
		{"BadUpdatedAt", "---\nid: n1\nupdatedAt: yesterday\n---\n", []string{"note.updatedAt must be an ISO 8601 timestamp"}},
		{"BadDeletedAt", "---\nid: n1\ndeletedAt: soon\n---\n", []string{"note.deletedAt must be an ISO 8601 timestamp"}},
		{"ContentTooLong", "---\nid: n1\n---\n" + strings.Repeat("x", board.MaxNoteContent+1), []string{"note.content must be at most 30000 characters"}},
		{"ContentNotUTF8", "---\nid: n1\n---\n\xff\xfe", []string{"note.content must be valid UTF-8"}},
		{"TitleNotUTF8", "---\nid: n1\ntitle: \xff\n---\n", []string{"not valid YAML"}},
		{"IDTooLong", "---\nid: " + strings.Repeat("i", board.MaxIDLen+1) + "\n---\n", []string{"note.id must be at most 128 characters"}},
		{"BoardSnapshot", string(changelog.RenderBoard(board.State{Board: board.Header{ID: "b1"}})), []string{"board snapshot, not a note snapshot"}},
		{"AliasBomb", "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nid: n1\n---\n", []string{`unknown field "a"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := changelog.ParseNote([]byte(tc.doc))
			if err == nil {
				t.Fatalf("ParseNote = %+v, want an error", n)
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}

func TestRenameRoundTrip(t *testing.T) {
	names := append([]string{strings.Repeat("n", board.MaxBoardNameLen), "Sprint 12", "a\nb", "---"}, nastyShort...)
	for _, name := range names {
		doc := changelog.RenderRename(name)
		got, err := changelog.ParseRename(doc)
		if err != nil {
			t.Fatalf("ParseRename(RenderRename(%q)): %v\ndocument:\n%s", name, err, excerpt(doc))
		}
		if got != name {
			t.Fatalf("ParseRename(RenderRename(%q)) = %q", name, got)
		}
	}
	golden(t, "rename.md", changelog.RenderRename("Sprint 12 — \"final\""))
}

func TestParseRename(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want string
	}{
		{"FrontMatter", "---\nname: Sprint 12\n---\n", "Sprint 12"},
		{"FrontMatterCRLF", "---\r\nname: 'Sprint 12'\r\n---\r\n", "Sprint 12"},
		{"FrontMatterEmptyName", "---\nname: ''\n---\n", ""},
		{"FrontMatterTrailingBlankLines", "---\nname: x\n---\n\n\n", "x"},
		{"BareName", "Sprint 12", "Sprint 12"},
		{"BareNameNewline", "Sprint 12\n", "Sprint 12"},
		{"BareNameCRLF", "Sprint 12\r\n", "Sprint 12"},
		{"BareNameBOM", "\ufeffSprint 12", "Sprint 12"},
		{"BareNameLooksLikeYAML", "name: x", "name: x"},
		{"BareNameWithDashes", "--- draft ---", "--- draft ---"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := changelog.ParseRename([]byte(tc.doc))
			if err != nil {
				t.Fatalf("ParseRename: %v", err)
			}
			if got != tc.want {
				t.Fatalf("ParseRename = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseRename_Invalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"Empty", "", []string{"must hold the new board name"}},
		{"OnlyNewline", "\n", []string{"must hold the new board name"}},
		{"BareMultiLine", "one\ntwo\n", []string{"fit on one line"}},
		{"NoName", "---\ntitle: x\n---\n", []string{`unknown field "title"`}},
		{"EmptyFrontMatter", "---\n---\n", []string{"no name"}},
		{"BodyAfterFrontMatter", "---\nname: x\n---\nmore\n", []string{"nothing may follow"}},
		{"Unclosed", "---\nname: x\n", []string{"never closed"}},
		{"NameList", "---\nname: [a]\n---\n", []string{"name must be a string"}},
		{"TooLong", strings.Repeat("n", board.MaxBoardNameLen+1), []string{"at most 200 characters"}},
		{"NotUTF8", "\xff", []string{"valid UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := changelog.ParseRename([]byte(tc.doc))
			if err == nil {
				t.Fatalf("ParseRename = %q, want an error", got)
			}
			assertInvalid(t, err, tc.want...)
		})
	}
}
