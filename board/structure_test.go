package board_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"corkboard/board"
)

func validConnector() board.Connector {
	return board.Connector{ID: "c1", From: "n1", To: "n2", Label: "depends on", Style: "arrow", Dash: "dashed", Color: "red"}
}

func validFrame() board.Frame {
	return board.Frame{ID: "f1", Title: "Risks", X: -10, Y: 20, W: 800, H: 600, Color: "blue"}
}

func TestConnectorValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(c *board.Connector)
		field string // "" = valid
	}{
		{"OK", func(*board.Connector) {}, ""},
		{"DefaultsEmpty", func(c *board.Connector) { c.Style, c.Dash, c.Label, c.Color = "", "", "", "" }, ""},
		{"Line", func(c *board.Connector) { c.Style = "line" }, ""},
		{"LabelAtLimit", func(c *board.Connector) { c.Label = strings.Repeat("é", board.MaxLabelLen) }, ""},
		{"LabelPastLimit", func(c *board.Connector) { c.Label = strings.Repeat("é", board.MaxLabelLen+1) }, "c.label"},
		{"NoID", func(c *board.Connector) { c.ID = "" }, "c.id"},
		{"NoFrom", func(c *board.Connector) { c.From = "" }, "c.from"},
		{"NoTo", func(c *board.Connector) { c.To = "" }, "c.to"},
		{"ToItself", func(c *board.Connector) { c.To = c.From }, "c.to"},
		{"LongEnd", func(c *board.Connector) { c.To = strings.Repeat("x", board.MaxIDLen+1) }, "c.to"},
		{"BadStyle", func(c *board.Connector) { c.Style = "Arrow" }, "c.style"},
		{"BadDash", func(c *board.Connector) { c.Dash = "dotted" }, "c.dash"},
		{"BadUpdatedAt", func(c *board.Connector) { c.UpdatedAt = "yesterday" }, "c.updatedAt"},
		{"NegativeBase", func(c *board.Connector) { c.BaseVersion = -1 }, "c.baseVersion"},
		{"ExtraShadows", func(c *board.Connector) { c.Extra = []board.Field{{Name: "From", Value: []byte(`1`)}} }, "c.From"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConnector()
			tc.edit(&c)
			assertField(t, c.Validate("c"), tc.field)
		})
	}
}

func TestFrameValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(f *board.Frame)
		field string
	}{
		{"OK", func(*board.Frame) {}, ""},
		{"SmallestAndLargest", func(f *board.Frame) { f.W, f.H = board.MinFrameSize, board.MaxFrameSize }, ""},
		{"TooNarrow", func(f *board.Frame) { f.W = board.MinFrameSize - 0.001 }, "f.w"},
		{"TooTall", func(f *board.Frame) { f.H = board.MaxFrameSize + 0.001 }, "f.h"},
		{"NoSize", func(f *board.Frame) { f.W, f.H = 0, 0 }, "f.w"},
		{"NaNHeight", func(f *board.Frame) { f.H = math.NaN() }, "f.h"},
		{"InfX", func(f *board.Frame) { f.X = math.Inf(1) }, "f.x"},
		{"TitleAtLimit", func(f *board.Frame) { f.Title = strings.Repeat("a", board.MaxFrameTitleLen) }, ""},
		{"TitlePastLimit", func(f *board.Frame) { f.Title = strings.Repeat("a", board.MaxFrameTitleLen+1) }, "f.title"},
		{"NoID", func(f *board.Frame) { f.ID = "" }, "f.id"},
		{"LongColor", func(f *board.Frame) { f.Color = strings.Repeat("c", board.MaxShortField+1) }, "f.color"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := validFrame()
			tc.edit(&f)
			assertField(t, f.Validate("f"), tc.field)
		})
	}
}

func assertField(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("Validate: %v, want nil", err)
		}
		return
	}
	var e *board.Error
	if !errors.As(err, &e) || e.Code != board.EINVALID || e.Field != field {
		t.Fatalf("Validate: %v, want EINVALID naming %s", err, field)
	}
}

// TestPushStructureLimits checks the per-push list limits at their edges:
// N passes, N+1 fails naming the list.
func TestPushStructureLimits(t *testing.T) {
	conns := func(n int) []board.Connector {
		out := make([]board.Connector, n)
		for i := range out {
			out[i] = validConnector()
		}
		return out
	}
	frames := func(n int) []board.Frame {
		out := make([]board.Frame, n)
		for i := range out {
			out[i] = validFrame()
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		push  board.Push
		field string
	}{
		{"ConnectorsAtLimit", board.Push{Connectors: board.ConnectorChanges{Upserted: conns(board.MaxUpsertedConnectors)}}, ""},
		{"ConnectorsPastLimit", board.Push{Connectors: board.ConnectorChanges{Upserted: conns(board.MaxUpsertedConnectors + 1)}}, "connectors.upserted"},
		{"FramesAtLimit", board.Push{Frames: board.FrameChanges{Upserted: frames(board.MaxUpsertedFrames)}}, ""},
		{"FramesPastLimit", board.Push{Frames: board.FrameChanges{Upserted: frames(board.MaxUpsertedFrames + 1)}}, "frames.upserted"},
		{"DeletedAtLimit", board.Push{Frames: board.FrameChanges{Deleted: make([]string, board.MaxDeletedPerPush)}}, "frames.deleted[0]"},
		{"DeletedPastLimit", board.Push{Connectors: board.ConnectorChanges{Deleted: make([]string, board.MaxDeletedPerPush+1)}}, "connectors.deleted"},
		{"RowNamed", board.Push{Connectors: board.ConnectorChanges{Upserted: []board.Connector{validConnector(), {ID: "c2", From: "a"}}}}, "connectors.upserted[1].to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertField(t, tc.push.Validate(), tc.field)
		})
	}
}

func TestStructureJSONKeepsExtraFields(t *testing.T) {
	in := `{"id":"c1","from":"n1","to":"f1","label":"x","style":"line","dash":"solid","color":"","updatedAt":"","version":3,"deletedAt":null,"weight":2,"Z":{"a":1}}`
	var c board.Connector
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Extra), 2; got != want {
		t.Fatalf("len(Extra)=%d, want %d", got, want)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Fatalf("round trip:\n got %s\nwant %s", out, in)
	}
	fin := `{"id":"f1","title":"T","x":1,"y":2,"w":100,"h":50,"color":"","locked":true,"updatedAt":"","version":1,"deletedAt":null,"z":9}`
	var f board.Frame
	if err := json.Unmarshal([]byte(fin), &f); err != nil {
		t.Fatal(err)
	}
	if fout, _ := json.Marshal(f); string(fout) != fin || !f.Locked {
		t.Fatalf("frame round trip:\n got %s\nwant %s", fout, fin)
	}
}

// TestChangesLeaveStructureOut checks that a pull answer without
// connectors or frames has exactly the spec's keys.
func TestChangesLeaveStructureOut(t *testing.T) {
	b, err := json.Marshal(board.Changes{Notes: []board.Note{}, DeletedNoteIDs: []string{}, TrackerItems: []board.TrackerItem{},
		DeletedTrackerItemIDs: []string{}, Connectors: []board.Connector{}, DeletedFrameIDs: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"connectors", "deletedConnectorIds", "frames", "deletedFrameIds"} {
		if _, ok := keys[k]; ok {
			t.Errorf("%s present in %s", k, b)
		}
	}
	b, _ = json.Marshal(board.Changes{Frames: []board.Frame{validFrame()}})
	if !strings.Contains(string(b), `"frames":[{"id":"f1"`) {
		t.Errorf("frames missing from %s", b)
	}
}

func TestMergeConnectorAndFrame(t *testing.T) {
	base := validConnector()
	theirs, mine := base, base
	theirs.Label = "blocks"
	mine.To, mine.Color = "n3", "green"
	got, _ := board.MergeConnector(base, theirs, mine)
	if got.Label != "blocks" || got.To != "n3" || got.From != "n1" || got.Color != "green" {
		t.Errorf("MergeConnector=%+v", got)
	}
	fb := validFrame()
	ft, fm := fb, fb
	ft.X, ft.Y = 500, 500                                // a move
	fm.W, fm.H, fm.Title = 1000, 900, "Risks and issues" // a resize and a rename
	fg, _ := board.MergeFrame(fb, ft, fm)
	if fg.X != 500 || fg.Y != 500 || fg.W != 1000 || fg.H != 900 || fg.Title != "Risks and issues" {
		t.Errorf("MergeFrame=%+v", fg)
	}
}
