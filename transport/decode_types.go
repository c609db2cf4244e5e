package transport

import (
	"bytes"
	"encoding/json"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/transport/jsondec"
)

// One decode function per request type, over the streaming decoder. Each
// is a switch on the keys the type knows; what it does with the others is
// the endpoint's rule (docs/api.md): the push envelope and board ignore
// them, rows keep them as extra fields, the other Corkboard bodies refuse
// them. Every array has its limit here, checked as it is read.

// unknownField refuses a key a strict body does not know; the decoder is
// at its value, so the error names it.
func unknownField(d *jsondec.Decoder) error {
	return d.Errorf("Unknown field %q.")
}

// decodePush decodes a push. Unknown keys of the envelope and of board are
// ignored, so that newer clients can send more.
func decodePush(d *jsondec.Decoder, p *board.Push) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "clientVersion":
			return d.Int64(&p.ClientVersion)
		case "board":
			if d.Null() {
				p.Board = nil
				return nil
			}
			p.Board = &board.BoardPatch{}
			return decodeBoardPatch(d, p.Board)
		case "notes":
			return d.Object(func(key []byte) error {
				switch string(key) {
				case "upserted":
					p.Notes.Upserted = p.Notes.Upserted[:0]
					if d.Null() {
						return nil
					}
					return d.Array(board.MaxUpsertedNotes, func(int) error {
						p.Notes.Upserted = append(p.Notes.Upserted, board.Note{})
						return decodeNote(d, &p.Notes.Upserted[len(p.Notes.Upserted)-1], true)
					})
				case "deleted":
					return decodeIDs(d, &p.Notes.Deleted)
				}
				return d.Skip()
			})
		case "trackerItems":
			return d.Object(func(key []byte) error {
				switch string(key) {
				case "upserted":
					p.TrackerItems.Upserted = p.TrackerItems.Upserted[:0]
					if d.Null() {
						return nil
					}
					return d.Array(board.MaxUpsertedItems, func(int) error {
						p.TrackerItems.Upserted = append(p.TrackerItems.Upserted, board.TrackerItem{})
						return decodeItem(d, &p.TrackerItems.Upserted[len(p.TrackerItems.Upserted)-1], true)
					})
				case "deleted":
					return decodeIDs(d, &p.TrackerItems.Deleted)
				}
				return d.Skip()
			})
		case "frames":
			return decodeRowChanges(d, board.MaxUpsertedFrames, &p.Frames.Upserted, &p.Frames.Deleted, decodeFrame)
		case "connectors":
			return decodeRowChanges(d, board.MaxUpsertedConnectors, &p.Connectors.Upserted, &p.Connectors.Deleted, decodeConnector)
		}
		return d.Skip()
	})
}

// decodeRowChanges decodes {"upserted": [...], "deleted": [...]} of one
// table: at most max rows, each read by row; other keys are ignored, as
// in the spec's tables.
func decodeRowChanges[T any](d *jsondec.Decoder, max int, upserted *[]T, deleted *[]string, row func(*jsondec.Decoder, *T) error) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "upserted":
			*upserted = (*upserted)[:0]
			if d.Null() {
				return nil
			}
			return d.Array(max, func(int) error {
				var zero T
				*upserted = append(*upserted, zero)
				return row(d, &(*upserted)[len(*upserted)-1])
			})
		case "deleted":
			return decodeIDs(d, deleted)
		}
		return d.Skip()
	})
}

// decodeFrame decodes a pushed frame; keys it does not know are kept in
// f.Extra.
func decodeFrame(d *jsondec.Decoder, f *board.Frame) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.String(&f.ID)
		case "title":
			return d.String(&f.Title)
		case "x":
			return d.Float64(&f.X)
		case "y":
			return d.Float64(&f.Y)
		case "w":
			return d.Float64(&f.W)
		case "h":
			return d.Float64(&f.H)
		case "color":
			return d.String(&f.Color)
		case "locked":
			return d.Bool(&f.Locked)
		case "updatedAt":
			return d.String(&f.UpdatedAt)
		case "version":
			return d.Int64(&f.Version)
		case "deletedAt":
			return decodeOptionalString(d, &f.DeletedAt)
		case "baseVersion":
			return decodeBaseVersion(d, &f.BaseVersion)
		}
		return decodeExtra(d, key, board.FrameFields, &f.Extra)
	})
}

// decodeConnector decodes a pushed connector; keys it does not know are
// kept in c.Extra.
func decodeConnector(d *jsondec.Decoder, c *board.Connector) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.String(&c.ID)
		case "from":
			return d.String(&c.From)
		case "to":
			return d.String(&c.To)
		case "label":
			return d.String(&c.Label)
		case "style":
			return d.String(&c.Style)
		case "dash":
			return d.String(&c.Dash)
		case "color":
			return d.String(&c.Color)
		case "updatedAt":
			return d.String(&c.UpdatedAt)
		case "version":
			return d.Int64(&c.Version)
		case "deletedAt":
			return decodeOptionalString(d, &c.DeletedAt)
		case "baseVersion":
			return decodeBaseVersion(d, &c.BaseVersion)
		}
		return decodeExtra(d, key, board.ConnectorFields, &c.Extra)
	})
}

func decodeBoardPatch(d *jsondec.Decoder, b *board.BoardPatch) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "name":
			return d.String(&b.Name)
		case "updatedAt":
			return d.String(&b.UpdatedAt)
		}
		return d.Skip()
	})
}

// decodeIDs decodes a list of deleted IDs; null leaves it empty.
func decodeIDs(d *jsondec.Decoder, ids *[]string) error {
	*ids = (*ids)[:0]
	if d.Null() {
		return nil
	}
	return decodeStrings(d, board.MaxDeletedPerPush, ids)
}

// decodeStrings decodes an array of at most max strings.
func decodeStrings(d *jsondec.Decoder, max int, dst *[]string) error {
	if *dst == nil {
		*dst = []string{}
	}
	return d.Array(max, func(int) error {
		*dst = append(*dst, "")
		return d.String(&(*dst)[len(*dst)-1])
	})
}

// decodeNote decodes a note. With extra, keys the note does not know are
// kept in n.Extra (a push's rows); without, they are skipped (AI context).
func decodeNote(d *jsondec.Decoder, n *board.Note, extra bool) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.String(&n.ID)
		case "title":
			return d.String(&n.Title)
		case "content":
			return d.String(&n.Content)
		case "x":
			return d.Float64(&n.X)
		case "y":
			return d.Float64(&n.Y)
		case "w":
			return decodeNoteSize(d, &n.W, board.MinNoteWidth)
		case "h":
			return decodeNoteSize(d, &n.H, board.MinNoteHeight)
		case "color":
			return d.String(&n.Color)
		case "type":
			return d.String(&n.Type)
		case "updatedAt":
			return d.String(&n.UpdatedAt)
		case "version":
			return d.Int64(&n.Version)
		case "deletedAt":
			return decodeOptionalString(d, &n.DeletedAt)
		case "baseVersion":
			return decodeBaseVersion(d, &n.BaseVersion)
		}
		if !extra {
			return d.Skip()
		}
		return decodeExtra(d, key, board.NoteFields, &n.Extra)
	})
}

// decodeItem decodes a tracker item; extra as for decodeNote.
func decodeItem(d *jsondec.Decoder, it *board.TrackerItem, extra bool) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.String(&it.ID)
		case "key":
			return d.String(&it.Key)
		case "type":
			return d.String(&it.Type)
		case "summary":
			return d.String(&it.Summary)
		case "description":
			return d.String(&it.Description)
		case "status":
			return d.String(&it.Status)
		case "parentId":
			return d.String(&it.ParentID)
		case "updatedAt":
			return d.String(&it.UpdatedAt)
		case "version":
			return d.Int64(&it.Version)
		case "deletedAt":
			return decodeOptionalString(d, &it.DeletedAt)
		case "baseVersion":
			return decodeBaseVersion(d, &it.BaseVersion)
		}
		if !extra {
			return d.Skip()
		}
		return decodeExtra(d, key, board.ItemFields, &it.Extra)
	})
}

// decodeBaseVersion reads a row's baseVersion (docs/sync.md, "How a push
// is merged"); null is taken as absent, like a row without it.
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

func decodeBaseVersion(d *jsondec.Decoder, dst *int64) error {
	if d.Null() {
		*dst = 0
		return nil
	}
	return d.Int64(dst)
}

func decodeOptionalString(d *jsondec.Decoder, dst **string) error {
	if d.Null() {
		*dst = nil
		return nil
	}
	var s string
	err := d.String(&s)
	*dst = &s
	return err
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

// decodeAppendLog decodes a POST /log body. boardState is only checked to
// be an object (or null): the server renders current.md from its own
// state, so it is read through and not kept.
func decodeAppendLog(d *jsondec.Decoder, req *appendLogRequest) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "entries":
			if d.Null() {
				req.Entries = nil
				return nil
			}
			req.Entries = []changelog.Entry{}
			return d.Array(changelog.MaxEntries, func(int) error {
				req.Entries = append(req.Entries, changelog.Entry{})
				e := &req.Entries[len(req.Entries)-1]
				return d.Object(func(key []byte) error {
					switch string(key) {
					case "noteId":
						return d.String(&e.NoteID)
					case "action":
						return d.String(&e.Action)
					case "content":
						return d.String(&e.Content)
					}
					return unknownField(d)
				})
			})
		case "boardState":
			if d.Null() {
				return nil
			}
			return d.Object(func([]byte) error { return d.Skip() })
		}
		return unknownField(d)
	})
}

// decodeStringFields decodes an object of string fields, refusing other
// keys: the shape of the small Corkboard bodies (auth, invites, restore).
func decodeStringFields(fields map[string]*string) func(*jsondec.Decoder) error {
	return func(d *jsondec.Decoder) error {
		return d.Object(func(key []byte) error {
			if dst, ok := fields[string(key)]; ok {
				return d.String(dst)
			}
			return unknownField(d)
		})
	}
}

// decodePhasesRequest decodes PATCH /access: {"phases": {"phases": [...],
// "currentPhaseId": "..."}}. Each phase is kept as the exact JSON sent.
func decodePhasesRequest(d *jsondec.Decoder, req *phasesRequest) error {
	return d.Object(func(key []byte) error {
		if string(key) != "phases" {
			return unknownField(d)
		}
		if d.Null() {
			req.Phases = nil
			return nil
		}
		ph := &board.Phases{}
		req.Phases = ph
		return d.Object(func(key []byte) error {
			switch string(key) {
			case "currentPhaseId":
				return d.String(&ph.CurrentPhaseID)
			case "phases":
				ph.Phases = nil
				if d.Null() {
					return nil
				}
				ph.Phases = []json.RawMessage{}
				return d.Array(board.MaxPhases, func(int) error {
					raw, err := d.Raw(board.MaxPhaseBytes)
					ph.Phases = append(ph.Phases, raw)
					return err
				})
			}
			return unknownField(d)
		})
	})
}

// decodeClientMessage decodes a live message; the push stays raw, to be
// decoded by decodePush once the message's id is known and access checked.
func decodeClientMessage(d *jsondec.Decoder, m *clientMessage) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "type":
			return d.String(&m.Type)
		case "id":
			return d.String(&m.ID)
		case "push":
			raw, err := d.Raw(liveReadLimit)
			m.Push = raw
			return err
		case "idempotencyKey":
			return d.String(&m.IdempotencyKey)
		case "x":
			return decodeOptionalFloat(d, &m.X)
		case "y":
			return decodeOptionalFloat(d, &m.Y)
		case "noteId":
			if d.Null() {
				m.NoteID = nil
				return nil
			}
			var s string
			m.NoteID = &s
			return d.String(m.NoteID)
		}
		return unknownField(d)
	})
}

func decodeOptionalFloat(d *jsondec.Decoder, dst **float64) error {
	if d.Null() {
		*dst = nil
		return nil
	}
	var f float64
	err := d.Float64(&f)
	*dst = &f
	return err
}
