package board

import (
	"math"
)

// Connectors and frames are Corkboard's extension beside the spec's notes
// and tracker items (docs/sync.md, "Connectors and frames"): rows with
// versions, tombstones, merges and extra fields like notes, in push keys
// and pull lists of their own that are left out when empty, so that a
// client that knows only the spec sees nothing new.

// Connector styles and dashes. An empty Style is an arrow and an empty
// Dash is solid: a client that sets neither draws the common case.
const (
	StyleArrow  = "arrow"
	StyleLine   = "line"
	DashSolid   = "solid"
	DashDashed  = "dashed"
	MaxLabelLen = 200 // connector label, characters
	// MaxFrameTitleLen bounds a frame's title, in characters.
	MaxFrameTitleLen = 200
	// MinFrameSize and MaxFrameSize bound a frame's w and h: large enough
	// to grab, small enough that a board's layout stays sane while holding
	// many notes of the largest size.
	MinFrameSize = 40
	MaxFrameSize = 100_000
	// MaxUpsertedConnectors and MaxUpsertedFrames bound one push's lists,
	// as the spec's 500 bounds notes.
	MaxUpsertedConnectors = 500
	MaxUpsertedFrames     = 500
)

// Connector is a line or arrow from one note or frame to another. On pull,
// Version is the board version that last changed it and DeletedAt is null
// for a live connector.
type Connector struct {
	ID string `json:"id"`
	// From and To are the IDs of the notes or frames the connector joins:
	// each must be a live note or frame of the board once the push applies
	// (docs/sync.md, "Connectors and frames").
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
	// Style is "arrow" (an arrowhead at To) or "line"; "" is an arrow.
	Style string `json:"style"`
	// Dash is "solid" or "dashed"; "" is solid.
	Dash      string  `json:"dash"`
	Color     string  `json:"color"`
	UpdatedAt string  `json:"updatedAt"`
	Version   int64   `json:"version"`
	DeletedAt *string `json:"deletedAt"`
	// BaseVersion is as Note's: merge with it, replace without.
	BaseVersion int64 `json:"-"`
	// Extra holds the fields a client sent that are none of the above.
	Extra []Field `json:"-"`
}

// Frame is a named rectangle of the board that holds the notes drawn in it.
type Frame struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Color string  `json:"color"`
	// Locked frames are changed and deleted by the board's owner only
	// (rights.go): the server refuses anyone else's push that touches one,
	// and only the owner may set or clear the flag.
	Locked    bool    `json:"locked"`
	UpdatedAt string  `json:"updatedAt"`
	Version   int64   `json:"version"`
	DeletedAt *string `json:"deletedAt"`
	// BaseVersion is as Note's: merge with it, replace without.
	BaseVersion int64 `json:"-"`
	// Extra holds the fields a client sent that are none of the above.
	Extra []Field `json:"-"`
	// LockedSent reports that a push carried "locked" (as Note's).
	LockedSent bool `json:"-"`
}

// ConnectorChanges lists upserted connectors and deleted connector IDs.
type ConnectorChanges struct {
	Upserted []Connector `json:"upserted"`
	Deleted  []string    `json:"deleted"`
}

// FrameChanges lists upserted frames and deleted frame IDs.
type FrameChanges struct {
	Upserted []Frame  `json:"upserted"`
	Deleted  []string `json:"deleted"`
}

// ConnectorFields are the JSON names of Connector's own fields.
var ConnectorFields = []string{"id", "from", "to", "label", "style", "dash", "color", "updatedAt", "version", "deletedAt", "baseVersion"}

// FrameFields are the JSON names of Frame's own fields.
var FrameFields = []string{"id", "title", "x", "y", "w", "h", "color", "locked", "updatedAt", "version", "deletedAt", "baseVersion"}

// Validate checks a connector as upserted by a client; path is its place
// in the request, e.g. "connectors.upserted[3]". Whether its ends exist is
// the store's check, which sees the board.
func (c *Connector) Validate(path string) error {
	if err := checkLens(path, []lenCheck{
		{"id", c.ID, MaxIDLen, true},
		{"from", c.From, MaxIDLen, true},
		{"to", c.To, MaxIDLen, true},
		{"label", c.Label, MaxLabelLen, false},
		{"color", c.Color, MaxShortField, false},
	}); err != nil {
		return err
	}
	if c.From == c.To {
		return FieldErrorf(path+".to", "%s.to must differ from %s.from: a connector joins two things.", path, path)
	}
	if c.Style != "" && c.Style != StyleArrow && c.Style != StyleLine {
		return FieldErrorf(path+".style", "%s.style must be %q or %q.", path, StyleArrow, StyleLine)
	}
	if c.Dash != "" && c.Dash != DashSolid && c.Dash != DashDashed {
		return FieldErrorf(path+".dash", "%s.dash must be %q or %q.", path, DashSolid, DashDashed)
	}
	return checkRowTail(path, c.UpdatedAt, c.BaseVersion, ConnectorFields, c.Extra)
}

// Validate checks a frame as upserted by a client.
func (f *Frame) Validate(path string) error {
	if err := checkLens(path, []lenCheck{
		{"id", f.ID, MaxIDLen, true},
		{"title", f.Title, MaxFrameTitleLen, false},
		{"color", f.Color, MaxShortField, false},
	}); err != nil {
		return err
	}
	if err := checkCoord(path+".x", f.X); err != nil {
		return err
	}
	if err := checkCoord(path+".y", f.Y); err != nil {
		return err
	}
	for _, s := range []struct {
		name string
		v    float64
	}{{"w", f.W}, {"h", f.H}} {
		if math.IsNaN(s.v) || s.v < MinFrameSize || s.v > MaxFrameSize {
			p := path + "." + s.name
			return FieldErrorf(p, "%s must be a number from %d to %d.", p, MinFrameSize, MaxFrameSize)
		}
	}
	return checkRowTail(path, f.UpdatedAt, f.BaseVersion, FrameFields, f.Extra)
}

// validateStructure checks a push's connectors and frames: the list
// limits first (as decoding does), then each row, then the deleted IDs.
func (p *Push) validateStructure() error {
	return firstError(
		checkListLen("connectors.upserted", "connectors", len(p.Connectors.Upserted), MaxUpsertedConnectors),
		checkListLen("frames.upserted", "frames", len(p.Frames.Upserted), MaxUpsertedFrames),
		validateEach("connectors.upserted", p.Connectors.Upserted),
		validateEach("frames.upserted", p.Frames.Upserted),
		validateIDs("connectors.deleted", p.Connectors.Deleted),
		validateIDs("frames.deleted", p.Frames.Deleted),
	)
}

// HasStructure reports whether p upserts or deletes a connector or frame.
func (p *Push) HasStructure() bool {
	return len(p.Connectors.Upserted)+len(p.Connectors.Deleted)+len(p.Frames.Upserted)+len(p.Frames.Deleted) > 0
}

// MissingEnd is the error of a push whose connector names an end that is
// neither a live note nor a live frame of the board once the push applies:
// EINVALID naming the end's field. The whole push is refused.
func MissingEnd(path, end, id string) *Error {
	f := path + "." + end
	return FieldErrorf(f, "%s names %q, which is neither a note nor a frame of this board. Nothing was applied.", f, id)
}

// MergeConnector merges a connector the way MergeNote merges a note: from
// and to move together as one value (a reconnection), label, style, dash,
// color and each extra field are one value each.
func MergeConnector(base, theirs, mine Connector) (merged Connector, overlap bool) {
	merged = theirs
	merged.UpdatedAt = mine.UpdatedAt
	merged.BaseVersion = 0
	merged.From, merged.To = mergePair(base.From, base.To, theirs.From, theirs.To, mine.From, mine.To)
	merged.Label = mergeValue(base.Label, theirs.Label, mine.Label)
	merged.Style = mergeValue(base.Style, theirs.Style, mine.Style)
	merged.Dash = mergeValue(base.Dash, theirs.Dash, mine.Dash)
	merged.Color = mergeValue(base.Color, theirs.Color, mine.Color)
	merged.Extra = mergeExtra(base.Extra, theirs.Extra, mine.Extra)
	return merged, false
}

// MergeFrame merges a frame: x and y move together as one position, w and
// h as one size apart from it; title, color, locked and each extra field
// are one value each.
func MergeFrame(base, theirs, mine Frame) (merged Frame, overlap bool) {
	merged = theirs
	merged.UpdatedAt = mine.UpdatedAt
	merged.BaseVersion = 0
	merged.X, merged.Y = mergePair(base.X, base.Y, theirs.X, theirs.Y, mine.X, mine.Y)
	merged.W, merged.H = mergePair(base.W, base.H, theirs.W, theirs.H, mine.W, mine.H)
	merged.Title = mergeValue(base.Title, theirs.Title, mine.Title)
	merged.Color = mergeValue(base.Color, theirs.Color, mine.Color)
	merged.Locked = mergeValue(base.Locked, theirs.Locked, mine.Locked)
	merged.Extra = mergeExtra(base.Extra, theirs.Extra, mine.Extra)
	return merged, false
}

// connectorJSON is Connector without its methods, for encoding/json.
type connectorJSON Connector

// MarshalJSON writes the connector's own fields, then its extra fields in
// the order the client sent them.
func (c Connector) MarshalJSON() ([]byte, error) {
	return marshalRow(connectorJSON(c), ConnectorFields, c.Extra)
}

// UnmarshalJSON reads a connector: keys that are not its own become Extra.
func (c *Connector) UnmarshalJSON(data []byte) error {
	var f connectorJSON
	extra, null, err := unmarshalRow(data, ConnectorFields, map[string]any{"id": &f.ID, "from": &f.From, "to": &f.To, "label": &f.Label,
		"style": &f.Style, "dash": &f.Dash, "color": &f.Color, "updatedAt": &f.UpdatedAt, "version": &f.Version, "deletedAt": &f.DeletedAt})
	if err != nil || null {
		return err
	}
	f.Extra = extra
	*c = Connector(f)
	return nil
}

// frameJSON is Frame without its methods, for encoding/json.
type frameJSON Frame

// MarshalJSON writes the frame's own fields, then its extra fields in the
// order the client sent them.
func (f Frame) MarshalJSON() ([]byte, error) {
	return marshalRow(frameJSON(f), FrameFields, f.Extra)
}

// UnmarshalJSON reads a frame: keys that are not its own become Extra.
func (f *Frame) UnmarshalJSON(data []byte) error {
	var g frameJSON
	extra, null, err := unmarshalRow(data, FrameFields, map[string]any{"id": &g.ID, "title": &g.Title, "x": &g.X, "y": &g.Y, "w": &g.W, "h": &g.H,
		"color": &g.Color, "locked": &g.Locked, "updatedAt": &g.UpdatedAt, "version": &g.Version, "deletedAt": &g.DeletedAt})
	if err != nil || null {
		return err
	}
	g.Extra = extra
	*f = Frame(g)
	return nil
}
