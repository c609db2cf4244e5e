package reqbody

import (
	"bytes"
	"encoding/json"

	"corkboard/board"
	"corkboard/transport/jsondec"
)

// One shape per request type, declared over the streaming decoder
// (jsondec.Shape): each field once, with its JSON name, its bound and where
// it goes. What a shape does with keys it does not declare is the
// endpoint's rule (docs/api.md): the push envelope and board ignore them,
// rows keep them as extra fields, the other Corkboard bodies refuse them.
// Every array has its limit here, checked as it is read.

// PushShape is a push. Unknown keys of the envelope and of board are
// ignored, so that newer clients can send more.
var PushShape = jsondec.NewShape(jsondec.Skip[board.Push],
	jsondec.Int64("clientVersion", func(p *board.Push) *int64 { return &p.ClientVersion }),
	jsondec.OptObject("board", func(p *board.Push) **board.BoardPatch { return &p.Board }, BoardPatchShape),
	jsondec.Object("notes", func(p *board.Push) *board.NoteChanges { return &p.Notes },
		changesShape(func(c *board.NoteChanges) (*[]board.Note, *[]string) { return &c.Upserted, &c.Deleted }, board.MaxUpsertedNotes, pushNoteShape)),
	jsondec.Object("trackerItems", func(p *board.Push) *board.ItemChanges { return &p.TrackerItems },
		changesShape(func(c *board.ItemChanges) (*[]board.TrackerItem, *[]string) { return &c.Upserted, &c.Deleted }, board.MaxUpsertedItems, pushItemShape)),
	jsondec.Object("frames", func(p *board.Push) *board.FrameChanges { return &p.Frames },
		changesShape(func(c *board.FrameChanges) (*[]board.Frame, *[]string) { return &c.Upserted, &c.Deleted }, board.MaxUpsertedFrames, pushFrameShape)),
	jsondec.Object("connectors", func(p *board.Push) *board.ConnectorChanges { return &p.Connectors },
		changesShape(func(c *board.ConnectorChanges) (*[]board.Connector, *[]string) { return &c.Upserted, &c.Deleted }, board.MaxUpsertedConnectors, pushConnectorShape)),
)

var BoardPatchShape = jsondec.NewShape(jsondec.Skip[board.BoardPatch],
	jsondec.String("name", func(b *board.BoardPatch) *string { return &b.Name }),
	jsondec.String("updatedAt", func(b *board.BoardPatch) *string { return &b.UpdatedAt }),
)

// changesShape is the shape of one kind of row's changes in a push,
// {"upserted": [row, ...], "deleted": [id, ...]}: at most maxUpserted rows
// of shape row, at most board.MaxDeletedPerPush IDs; other keys are
// ignored. lists gives the two slices of a C. A new kind of row in a push
// declares its changes with it.
func changesShape[C, R any](lists func(*C) (*[]R, *[]string), maxUpserted int, row *jsondec.Shape[R]) *jsondec.Shape[C] {
	return jsondec.NewShape(jsondec.Skip[C],
		jsondec.Array("upserted", maxUpserted, func(c *C) *[]R { u, _ := lists(c); return u }, row.Decode),
		jsondec.ArrayKeepEmpty("deleted", board.MaxDeletedPerPush, func(c *C) *[]string { _, del := lists(c); return del }, (*jsondec.Decoder).String),
	)
}

// noteFields are a note's fields, as a push's rows send them.
var noteFields = rowFields(noteTail,
	jsondec.String("id", func(n *board.Note) *string { return &n.ID }),
	jsondec.String("title", func(n *board.Note) *string { return &n.Title }),
	jsondec.String("content", func(n *board.Note) *string { return &n.Content }),
	jsondec.Float64("x", func(n *board.Note) *float64 { return &n.X }),
	jsondec.Float64("y", func(n *board.Note) *float64 { return &n.Y }),
	jsondec.Func("w", func(d *jsondec.Decoder, n *board.Note) error { return decodeNoteSize(d, &n.W, board.MinNoteWidth) }),
	jsondec.Func("h", func(d *jsondec.Decoder, n *board.Note) error { return decodeNoteSize(d, &n.H, board.MinNoteHeight) }),
	jsondec.String("color", func(n *board.Note) *string { return &n.Color }),
	jsondec.String("type", func(n *board.Note) *string { return &n.Type }),
	// locked is the owner's to change; createdBy is read and then set by
	// the store (board.SettleRights).
	jsondec.Func("locked", func(d *jsondec.Decoder, n *board.Note) error { n.LockedSent = true; return d.Bool(&n.Locked) }),
	jsondec.String("createdBy", func(n *board.Note) *string { return &n.CreatedBy }),
)

// pushNoteShape is a push's note: keys it does not know are kept in Extra.
var pushNoteShape = pushRowShape(board.NoteFields, func(n *board.Note) *[]board.Field { return &n.Extra }, noteFields)

// itemFields are a tracker item's fields.
var itemFields = rowFields(itemTail,
	jsondec.String("id", func(it *board.TrackerItem) *string { return &it.ID }),
	jsondec.String("key", func(it *board.TrackerItem) *string { return &it.Key }),
	jsondec.String("type", func(it *board.TrackerItem) *string { return &it.Type }),
	jsondec.String("summary", func(it *board.TrackerItem) *string { return &it.Summary }),
	jsondec.String("description", func(it *board.TrackerItem) *string { return &it.Description }),
	jsondec.String("status", func(it *board.TrackerItem) *string { return &it.Status }),
	jsondec.String("parentId", func(it *board.TrackerItem) *string { return &it.ParentID }),
)

// pushItemShape is a push's tracker item: keys it does not know are kept
// in Extra. ContextItemShape, the item an AI request sends as context,
// skips them.
var (
	pushItemShape    = pushRowShape(board.ItemFields, func(it *board.TrackerItem) *[]board.Field { return &it.Extra }, itemFields)
	ContextItemShape = jsondec.NewShape(jsondec.Skip[board.TrackerItem], itemFields...)
)

// frameFields are a frame's fields (docs/sync.md, "Connectors and
// frames").
var frameFields = rowFields(frameTail,
	jsondec.String("id", func(f *board.Frame) *string { return &f.ID }),
	jsondec.String("title", func(f *board.Frame) *string { return &f.Title }),
	jsondec.Float64("x", func(f *board.Frame) *float64 { return &f.X }),
	jsondec.Float64("y", func(f *board.Frame) *float64 { return &f.Y }),
	jsondec.Float64("w", func(f *board.Frame) *float64 { return &f.W }),
	jsondec.Float64("h", func(f *board.Frame) *float64 { return &f.H }),
	jsondec.String("color", func(f *board.Frame) *string { return &f.Color }),
	jsondec.Func("locked", func(d *jsondec.Decoder, f *board.Frame) error { f.LockedSent = true; return d.Bool(&f.Locked) }),
)

// pushFrameShape is a push's frame: keys it does not know are kept in
// Extra. ContextFrameShape, a frame an AI request sends as context, skips
// them.
var (
	pushFrameShape    = pushRowShape(board.FrameFields, func(f *board.Frame) *[]board.Field { return &f.Extra }, frameFields)
	ContextFrameShape = jsondec.NewShape(jsondec.Skip[board.Frame], frameFields...)
)

// connectorFields are a connector's fields.
var connectorFields = rowFields(connectorTail,
	jsondec.String("id", func(c *board.Connector) *string { return &c.ID }),
	jsondec.String("from", func(c *board.Connector) *string { return &c.From }),
	jsondec.String("to", func(c *board.Connector) *string { return &c.To }),
	jsondec.String("label", func(c *board.Connector) *string { return &c.Label }),
	jsondec.String("style", func(c *board.Connector) *string { return &c.Style }),
	jsondec.String("dash", func(c *board.Connector) *string { return &c.Dash }),
	jsondec.String("color", func(c *board.Connector) *string { return &c.Color }),
)

// pushConnectorShape is a push's connector: keys it does not know are
// kept in Extra; ContextConnectorShape skips them.
var (
	pushConnectorShape    = pushRowShape(board.ConnectorFields, func(c *board.Connector) *[]board.Field { return &c.Extra }, connectorFields)
	ContextConnectorShape = jsondec.NewShape(jsondec.Skip[board.Connector], connectorFields...)
)

// rowTail points at what every kind of row carries after its own fields.
type rowTail struct {
	updatedAt   *string
	version     *int64
	deletedAt   **string
	baseVersion *int64
}

// noteTail is a Note's rowTail.
func noteTail(n *board.Note) rowTail {
	return rowTail{&n.UpdatedAt, &n.Version, &n.DeletedAt, &n.BaseVersion}
}

// itemTail is a TrackerItem's rowTail.
func itemTail(it *board.TrackerItem) rowTail {
	return rowTail{&it.UpdatedAt, &it.Version, &it.DeletedAt, &it.BaseVersion}
}

// frameTail is a Frame's rowTail.
func frameTail(f *board.Frame) rowTail {
	return rowTail{&f.UpdatedAt, &f.Version, &f.DeletedAt, &f.BaseVersion}
}

// connectorTail is a Connector's rowTail.
func connectorTail(c *board.Connector) rowTail {
	return rowTail{&c.UpdatedAt, &c.Version, &c.DeletedAt, &c.BaseVersion}
}

// rowFields is a kind of row's own fields, then the ones every kind of
// row has (updatedAt, version, deletedAt, baseVersion) where tail says.
func rowFields[R any](tail func(*R) rowTail, own ...jsondec.Field[R]) []jsondec.Field[R] {
	return append(own,
		jsondec.String("updatedAt", func(r *R) *string { return tail(r).updatedAt }),
		jsondec.Int64("version", func(r *R) *int64 { return tail(r).version }),
		jsondec.OptString("deletedAt", func(r *R) **string { return tail(r).deletedAt }),
		jsondec.Func("baseVersion", func(d *jsondec.Decoder, r *R) error { return decodeBaseVersion(d, tail(r).baseVersion) }),
	)
}

// pushRowShape is a push's row of fields: the keys it does not know
// (known: the row's JSON names) are kept in the extra fields extra gives.
func pushRowShape[R any](known []string, extra func(*R) *[]board.Field, fields []jsondec.Field[R]) *jsondec.Shape[R] {
	return jsondec.NewShape(func(d *jsondec.Decoder, key []byte, r *R) error {
		return decodeExtra(d, key, known, extra(r))
	}, fields...)
}

// decodeNoteSize decodes a note's w or h: null is no size, as absent. 0
// is refused here because the note keeps "no size" as 0, so Validate could
// not tell a 0 that was sent from one that was not.
func decodeNoteSize(d *jsondec.Decoder, dst *float64, min float64) error {
	if d.Null() {
		*dst = 0
		return nil
	}
	if err := d.Float64(dst); err != nil {
		return err
	}
	if *dst == 0 {
		return d.Errorf("%s must be a number from %g to %g.", min, float64(board.MaxNoteSize))
	}
	return nil
}

// decodeBaseVersion reads a row's baseVersion (docs/sync.md, "How a push
// is merged"); null is taken as absent, like a row without it.
func decodeBaseVersion(d *jsondec.Decoder, dst *int64) error {
	if d.Null() {
		*dst = 0
		return nil
	}
	return d.Int64(dst)
}

// decodeExtra keeps the value of key, a field the row does not know, in
// extra, within the limits of board.MaxExtraFields and board.MaxExtraBytes.
// A name that differs from a known field only in case is refused: clients
// decoding case-insensitively (encoding/json) would take it for the known
// one.
func decodeExtra(d *jsondec.Decoder, key []byte, known []string, extra *[]board.Field) error {
	name := string(key)
	if board.ShadowsField(known, name) {
		return d.Errorf("Unknown field %q: it differs from a known field only in case.")
	}
	if len(*extra) == board.MaxExtraFields {
		return d.Errorf("%s: a row may carry at most %d fields besides its own.", board.MaxExtraFields)
	}
	raw, err := d.Raw(board.MaxExtraBytes)
	if err != nil {
		return err
	}
	if bytes.ContainsAny(raw, " \t\r\n") {
		// Stored compact, so that sizes and round trips do not depend on
		// the sender's spacing.
		var v bytes.Buffer
		if err := json.Compact(&v, raw); err != nil {
			return d.Errorf("%s is not valid JSON.")
		}
		raw = v.Bytes()
	}
	f := board.Field{Name: name, Value: raw}
	if board.ExtraSize(*extra)+len(f.Name)+len(f.Value) > board.MaxExtraBytes {
		return d.Errorf("%s: the extra fields of a row may hold at most %d bytes of JSON.", board.MaxExtraBytes)
	}
	*extra = append(*extra, f)
	return nil
}
