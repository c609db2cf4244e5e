package transport

import (
	"corkboard/ai"
	"corkboard/board"
	"corkboard/transport/jsondec"
)

// Decoders of the AI request bodies. They are lenient: the AI SDK's
// clients add keys of their own, which are skipped (still checked for
// depth, duplicates and UTF-8). Their arrays are bounded by the ai
// package's limits, and by maxMessageParts.

// maxMessageParts bounds the parts of one chat message. The spec leaves it
// open; a message is a text, a few reasoning steps and tool calls, far
// below it.
const maxMessageParts = 1000

// skipUnknown is what the AI decoders do with keys they do not know.
func skipUnknown(d *jsondec.Decoder) error { return d.Skip() }

// decodeBoardNotes decodes a list of notes sent as context.
func decodeBoardNotes(d *jsondec.Decoder, dst *[]ai.BoardNote) error {
	*dst = (*dst)[:0]
	if d.Null() {
		return nil
	}
	return d.Array(ai.MaxBoardNotes, func(int) error {
		*dst = append(*dst, ai.BoardNote{})
		n := &(*dst)[len(*dst)-1]
		return d.Object(func(key []byte) error {
			switch string(key) {
			case "id":
				return d.String(&n.ID)
			case "title":
				return d.String(&n.Title)
			case "content":
				return d.String(&n.Content)
			case "color":
				return d.String(&n.Color)
			case "type":
				return d.String(&n.Type)
			case "x":
				return d.Float64(&n.X)
			case "y":
				return d.Float64(&n.Y)
			}
			return skipUnknown(d)
		})
	})
}

// decodeItems decodes a list of tracker items sent as context.
func decodeItems(d *jsondec.Decoder, dst *[]board.TrackerItem) error {
	*dst = (*dst)[:0]
	if d.Null() {
		return nil
	}
	return d.Array(ai.MaxTrackerItems, func(int) error {
		*dst = append(*dst, board.TrackerItem{})
		return decodeItem(d, &(*dst)[len(*dst)-1], false)
	})
}

func decodeBoardState(d *jsondec.Decoder, st *ai.BoardState) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "name":
			return d.String(&st.Name)
		case "notes":
			return decodeBoardNotes(d, &st.Notes)
		case "trackerItems":
			return decodeItems(d, &st.TrackerItems)
		}
		return skipUnknown(d)
	})
}

func decodeMessages(d *jsondec.Decoder, dst *[]ai.UIMessage) error {
	*dst = (*dst)[:0]
	if d.Null() {
		return nil
	}
	return d.Array(ai.MaxMessages, func(int) error {
		*dst = append(*dst, ai.UIMessage{})
		m := &(*dst)[len(*dst)-1]
		return d.Object(func(key []byte) error {
			switch string(key) {
			case "id":
				return d.String(&m.ID)
			case "role":
				return d.String(&m.Role)
			case "content":
				return d.String(&m.Content)
			case "parts":
				m.Parts = nil
				if d.Null() {
					return nil
				}
				return d.Array(maxMessageParts, func(int) error {
					m.Parts = append(m.Parts, ai.UIPart{})
					return decodePart(d, &m.Parts[len(m.Parts)-1])
				})
			}
			return skipUnknown(d)
		})
	})
}

func decodePart(d *jsondec.Decoder, p *ai.UIPart) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "type":
			return d.String(&p.Type)
		case "text":
			return d.String(&p.Text)
		case "toolCallId":
			return d.String(&p.ToolCallID)
		case "toolName":
			return d.String(&p.ToolName)
		case "state":
			return d.String(&p.State)
		case "errorText":
			return d.String(&p.ErrorText)
		case "input":
			raw, err := d.Raw(limitAIBoardBody)
			p.Input = raw
			return err
		case "output":
			raw, err := d.Raw(limitAIBoardBody)
			p.Output = raw
			return err
		}
		return skipUnknown(d)
	})
}

// decodeChatBody decodes a chat or subagent request; currentPhase stays
// raw for ai.Phase to read.
func decodeChatBody(d *jsondec.Decoder, b *chatBody) error {
	r := &b.ChatRequest
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "id":
			return d.String(&r.ID)
		case "messages":
			return decodeMessages(d, &r.Messages)
		case "trigger":
			return d.String(&r.Trigger)
		case "messageId":
			return d.String(&r.MessageID)
		case "boardId":
			return d.String(&r.BoardID)
		case "boardState":
			return decodeBoardState(d, &r.BoardState)
		case "currentPhase":
			raw, err := d.Raw(limitAIBoardBody)
			b.CurrentPhase = raw
			return err
		}
		return skipUnknown(d)
	})
}

func decodeNoteAIRequest(d *jsondec.Decoder, r *ai.NoteAIRequest) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "boardId":
			return d.String(&r.BoardID)
		case "noteId":
			return d.String(&r.NoteID)
		case "prompt":
			return d.String(&r.Prompt)
		case "noteTitle":
			return d.String(&r.NoteTitle)
		case "noteContent":
			return d.String(&r.NoteContent)
		case "allNotes":
			return decodeBoardNotes(d, &r.AllNotes)
		}
		return skipUnknown(d)
	})
}

func decodeFrontmatterRequest(d *jsondec.Decoder, r *ai.FrontmatterRequest) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "boardId":
			return d.String(&r.BoardID)
		case "noteId":
			return d.String(&r.NoteID)
		case "title":
			return d.String(&r.Title)
		case "content":
			return d.String(&r.Content)
		case "allNotes":
			return decodeBoardNotes(d, &r.AllNotes)
		}
		return skipUnknown(d)
	})
}

// decodeAIStrings decodes an AI body made only of string fields, skipping
// other keys.
func decodeAIStrings(fields map[string]*string) func(*jsondec.Decoder) error {
	return func(d *jsondec.Decoder) error {
		return d.Object(func(key []byte) error {
			if dst, ok := fields[string(key)]; ok {
				return d.String(dst)
			}
			return skipUnknown(d)
		})
	}
}

func decodeTrackerGenerateRequest(d *jsondec.Decoder, r *ai.TrackerGenerateRequest) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "boardId":
			return d.String(&r.BoardID)
		case "mode":
			return d.String(&r.Mode)
		case "step":
			return d.String(&r.Step)
		case "parentId":
			return d.String(&r.ParentID)
		case "itemIds":
			r.ItemIDs = nil
			if d.Null() {
				return nil
			}
			return decodeStrings(d, ai.MaxGeneratedItems, &r.ItemIDs)
		case "instruction":
			return d.String(&r.Instruction)
		case "context":
			return d.String(&r.Context)
		case "count":
			return d.Int(&r.Count)
		case "items":
			return decodeItems(d, &r.Items)
		case "notes":
			return decodeBoardNotes(d, &r.Notes)
		}
		return skipUnknown(d)
	})
}

func decodeTrackerAnalyzeRequest(d *jsondec.Decoder, r *ai.TrackerAnalyzeRequest) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "boardId":
			return d.String(&r.BoardID)
		case "item":
			return decodeItem(d, &r.Item, false)
		case "parent":
			if d.Null() {
				r.Parent = nil
				return nil
			}
			r.Parent = &board.TrackerItem{}
			return decodeItem(d, r.Parent, false)
		case "focus":
			return d.String(&r.Focus)
		}
		return skipUnknown(d)
	})
}

func decodeTrackerRewriteRequest(d *jsondec.Decoder, r *ai.TrackerRewriteRequest) error {
	return d.Object(func(key []byte) error {
		switch string(key) {
		case "boardId":
			return d.String(&r.BoardID)
		case "item":
			return decodeItem(d, &r.Item, false)
		case "field":
			return d.String(&r.Field)
		case "selectedText":
			return d.String(&r.SelectedText)
		case "instruction":
			return d.String(&r.Instruction)
		}
		return skipUnknown(d)
	})
}
