package transport

import (
	"encoding/json"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/transport/jsondec"
)

// The shapes of the bodies only transport's own routes take; the board's
// row shapes, which the live channel and the AI routes take too, are
// reqbody's.

// appendLogShape is a POST /log body. boardState is only checked to be an
// object (or null): the server renders current.md from its own state, so
// it is read through and not kept.
var appendLogShape = jsondec.NewShape(jsondec.Refuse[appendLogRequest],
	jsondec.ArrayKeepEmpty("entries", changelog.MaxEntries, func(r *appendLogRequest) *[]changelog.Entry { return &r.Entries }, logEntryShape.Decode),
	jsondec.Func("boardState", func(d *jsondec.Decoder, _ *appendLogRequest) error {
		if d.Null() {
			return nil
		}
		return d.Object(func([]byte) error { return d.Skip() })
	}),
)

var logEntryShape = jsondec.NewShape(jsondec.Refuse[changelog.Entry],
	jsondec.String("noteId", func(e *changelog.Entry) *string { return &e.NoteID }),
	jsondec.String("action", func(e *changelog.Entry) *string { return &e.Action }),
	jsondec.String("content", func(e *changelog.Entry) *string { return &e.Content }),
)

// decodeStringFields decodes an object of string fields, refusing other
// keys: the shape of the small Corkboard bodies (auth, invites, restore).
func decodeStringFields(fields map[string]*string) func(*jsondec.Decoder) error {
	return func(d *jsondec.Decoder) error {
		return d.Object(func(key []byte) error {
			if dst, ok := fields[string(key)]; ok {
				return d.String(dst)
			}
			return jsondec.Refuse[struct{}](d, key, nil)
		})
	}
}

// phasesRequestShape is a PATCH /access body: {"phases": {"phases": [...],
// "currentPhaseId": "..."}}. Each phase is kept as the exact JSON sent.
var phasesRequestShape = jsondec.NewShape(jsondec.Refuse[phasesRequest],
	jsondec.OptObject("phases", func(r *phasesRequest) **board.Phases { return &r.Phases }, phasesShape),
)

var phasesShape = jsondec.NewShape(jsondec.Refuse[board.Phases],
	jsondec.String("currentPhaseId", func(ph *board.Phases) *string { return &ph.CurrentPhaseID }),
	jsondec.ArrayKeepEmpty("phases", board.MaxPhases, func(ph *board.Phases) *[]json.RawMessage { return &ph.Phases },
		func(d *jsondec.Decoder, dst *json.RawMessage) error {
			raw, err := d.Raw(board.MaxPhaseBytes)
			*dst = raw
			return err
		}),
)
