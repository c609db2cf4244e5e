package changelog_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
)

func structureState() board.State {
	s := exampleState()
	s.Frames = []board.Frame{
		{ID: "frame-2", Title: "", X: 0, Y: 0, W: 40, H: 100000, Color: "", UpdatedAt: "2026-03-01T10:00:00Z", Version: 42},
		{ID: "frame-1", Title: "Retro *board*", X: -20.5, Y: 10, W: 900, H: 640, Color: "green", Locked: true,
			UpdatedAt: "2026-03-01T09:30:00Z", Version: 41, Extra: []board.Field{{Name: "z", Value: []byte(`3`)}}},
	}
	s.Connectors = []board.Connector{
		{ID: "conn-2", From: "note-1", To: "frame-1", Style: board.StyleLine, Dash: board.DashSolid, UpdatedAt: "2026-03-01T10:00:00Z", Version: 42},
		{ID: "conn-1", From: "note-7", To: "note-2", Label: "leads to", Style: board.StyleArrow, Dash: board.DashDashed, Color: "red",
			UpdatedAt: "2026-03-01T09:45:00Z", Version: 41, Extra: []board.Field{{Name: "weight", Value: []byte(`{"w":2}`)}}},
	}
	return s
}

// TestRenderBoardStructure_Golden: frames and connectors follow the
// tracker items, sorted by id, and parse back to the same rows.
func TestRenderBoardStructure_Golden(t *testing.T) {
	s := structureState()
	golden(t, "board-structure.md", changelog.RenderBoard(s))
	doc, err := os.ReadFile(filepath.Join("testdata", "board-structure.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := changelog.ParseBoard(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffState(s, got); d != "" {
		t.Fatalf("ParseBoard(testdata/board-structure.md) (-want +got):\n%s", d)
	}
	for _, want := range []string{"\n## Frames\n\n### Retro \\*board\\*\n", "\n### Untitled frame\n", "\n## Connectors\n\n### leads to\n", "\n### note-1 → frame-1\n", "locked: true\n"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("snapshot lacks %q", want)
		}
	}
	// A board without them renders as it always did: no new heading.
	if doc := changelog.RenderBoard(exampleState()); bytes.Contains(doc, []byte("## Frames")) || bytes.Contains(doc, []byte("## Connectors")) {
		t.Errorf("a board without frames or connectors renders their headings")
	}
	// Connectors alone, without frames: their section follows the items.
	s.Frames = nil
	s.Connectors = s.Connectors[1:]
	got, err = changelog.ParseBoard(changelog.RenderBoard(s))
	if err != nil || len(got.Connectors) != 1 || got.Frames != nil {
		t.Fatalf("ParseBoard of connectors alone: %+v, %v", got.Connectors, err)
	}
}

func TestParseBoardStructure_Errors(t *testing.T) {
	doc := string(changelog.RenderBoard(structureState()))
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"DanglingConnector", `to: 'note-2'`, `to: 'note-9'`, `ends on "note-9"`},
		{"FrameTooSmall", "w: 40\n", "w: 39\n", "frame.w must be a number from 40"},
		{"LockedNotBool", "locked: true", `locked: 'yes'`, "must be true or false"},
		{"BadStyle", `style: 'line'`, `style: 'curve'`, "connector.style"},
		{"UnknownField", `label: 'leads to'`, "label: 'leads to'\nwidth: 3", "width"},
		{"ConnectorsBeforeFrames", "## Frames", "## Connectorz", "found \"## Connectorz\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(doc, tc.old, tc.new, 1)
			if bad == doc {
				t.Fatalf("%q is not in the document", tc.old)
			}
			_, err := changelog.ParseBoard([]byte(bad))
			if err == nil || board.ErrorCode(err) != board.EINVALID || !strings.Contains(board.ErrorMessage(err), tc.want) {
				t.Fatalf("ParseBoard: %v, want EINVALID mentioning %q", err, tc.want)
			}
		})
	}
}

// TestBoardWriterStructureOrder: rows out of section order are refused.
func TestBoardWriterStructureOrder(t *testing.T) {
	var b bytes.Buffer
	bw := changelog.NewBoardWriter(&b, board.Header{ID: "b"}, nil)
	bw.Connector(board.Connector{ID: "c1", From: "a", To: "b"})
	bw.Frame(board.Frame{ID: "f1", W: 100, H: 100})
	if err := bw.End(); err == nil || !strings.Contains(err.Error(), "after a later section") {
		t.Fatalf("End: %v, want the frame refused after the connectors", err)
	}
}
