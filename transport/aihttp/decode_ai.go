package aihttp

import (
	"encoding/json"

	"corkboard/ai"
	"corkboard/board"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqbody"
)

// Shapes of the AI request bodies. They are lenient: the AI SDK's
// clients add keys of their own, which are skipped (still checked for
// depth, duplicates and UTF-8). Their arrays are bounded by the ai
// package's limits, and by maxMessageParts.

// maxMessageParts bounds the parts of one chat message. The spec leaves it
// open; a message is a text, a few reasoning steps and tool calls, far
// below it.
const maxMessageParts = 1000

// The AI shapes skip keys they do not declare.

// boardNoteShape is a note sent as context.
var boardNoteShape = jsondec.NewShape(jsondec.Skip[ai.BoardNote],
	jsondec.String("id", func(n *ai.BoardNote) *string { return &n.ID }),
	jsondec.String("title", func(n *ai.BoardNote) *string { return &n.Title }),
	jsondec.String("content", func(n *ai.BoardNote) *string { return &n.Content }),
	jsondec.String("color", func(n *ai.BoardNote) *string { return &n.Color }),
	jsondec.String("type", func(n *ai.BoardNote) *string { return &n.Type }),
	jsondec.Float64("x", func(n *ai.BoardNote) *float64 { return &n.X }),
	jsondec.Float64("y", func(n *ai.BoardNote) *float64 { return &n.Y }),
)

// boardNotes declares a field of notes sent as context.
func boardNotes[T any](name string, at func(*T) *[]ai.BoardNote) jsondec.Field[T] {
	return jsondec.Array(name, ai.MaxBoardNotes, at, boardNoteShape.Decode)
}

// contextItems declares a field of tracker items sent as context.
func contextItems[T any](name string, at func(*T) *[]board.TrackerItem) jsondec.Field[T] {
	return jsondec.Array(name, ai.MaxTrackerItems, at, reqbody.ContextItemShape.Decode)
}

var boardStateShape = jsondec.NewShape(jsondec.Skip[ai.BoardState],
	jsondec.String("name", func(st *ai.BoardState) *string { return &st.Name }),
	boardNotes("notes", func(st *ai.BoardState) *[]ai.BoardNote { return &st.Notes }),
	contextItems("trackerItems", func(st *ai.BoardState) *[]board.TrackerItem { return &st.TrackerItems }),
	jsondec.Array("frames", ai.MaxBoardFrames, func(st *ai.BoardState) *[]board.Frame { return &st.Frames }, reqbody.ContextFrameShape.Decode),
	jsondec.Array("connectors", ai.MaxBoardConnectors, func(st *ai.BoardState) *[]board.Connector { return &st.Connectors }, reqbody.ContextConnectorShape.Decode),
)

var messageShape = jsondec.NewShape(jsondec.Skip[ai.UIMessage],
	jsondec.String("id", func(m *ai.UIMessage) *string { return &m.ID }),
	jsondec.String("role", func(m *ai.UIMessage) *string { return &m.Role }),
	jsondec.String("content", func(m *ai.UIMessage) *string { return &m.Content }),
	jsondec.Array("parts", maxMessageParts, func(m *ai.UIMessage) *[]ai.UIPart { return &m.Parts }, partShape.Decode),
)

var partShape = jsondec.NewShape(jsondec.Skip[ai.UIPart],
	jsondec.String("type", func(p *ai.UIPart) *string { return &p.Type }),
	jsondec.String("text", func(p *ai.UIPart) *string { return &p.Text }),
	jsondec.String("toolCallId", func(p *ai.UIPart) *string { return &p.ToolCallID }),
	jsondec.String("toolName", func(p *ai.UIPart) *string { return &p.ToolName }),
	jsondec.String("state", func(p *ai.UIPart) *string { return &p.State }),
	jsondec.String("errorText", func(p *ai.UIPart) *string { return &p.ErrorText }),
	jsondec.Raw("input", limitAIBoardBody, func(p *ai.UIPart) *json.RawMessage { return &p.Input }),
	jsondec.Raw("output", limitAIBoardBody, func(p *ai.UIPart) *json.RawMessage { return &p.Output }),
)

// chatBodyShape is a chat or subagent request; currentPhase stays raw for
// ai.Phase to read.
var chatBodyShape = jsondec.NewShape(jsondec.Skip[chatBody],
	jsondec.String("id", func(b *chatBody) *string { return &b.ID }),
	jsondec.Array("messages", ai.MaxMessages, func(b *chatBody) *[]ai.UIMessage { return &b.Messages }, messageShape.Decode),
	jsondec.String("trigger", func(b *chatBody) *string { return &b.Trigger }),
	jsondec.String("messageId", func(b *chatBody) *string { return &b.MessageID }),
	jsondec.String("boardId", func(b *chatBody) *string { return &b.BoardID }),
	jsondec.Object("boardState", func(b *chatBody) *ai.BoardState { return &b.BoardState }, boardStateShape),
	jsondec.Raw("currentPhase", limitAIBoardBody, func(b *chatBody) *json.RawMessage { return &b.CurrentPhase }),
)

var noteAIRequestShape = jsondec.NewShape(jsondec.Skip[ai.NoteAIRequest],
	jsondec.String("boardId", func(r *ai.NoteAIRequest) *string { return &r.BoardID }),
	jsondec.String("noteId", func(r *ai.NoteAIRequest) *string { return &r.NoteID }),
	jsondec.String("prompt", func(r *ai.NoteAIRequest) *string { return &r.Prompt }),
	jsondec.String("noteTitle", func(r *ai.NoteAIRequest) *string { return &r.NoteTitle }),
	jsondec.String("noteContent", func(r *ai.NoteAIRequest) *string { return &r.NoteContent }),
	boardNotes("allNotes", func(r *ai.NoteAIRequest) *[]ai.BoardNote { return &r.AllNotes }),
)

var frontmatterRequestShape = jsondec.NewShape(jsondec.Skip[ai.FrontmatterRequest],
	jsondec.String("boardId", func(r *ai.FrontmatterRequest) *string { return &r.BoardID }),
	jsondec.String("noteId", func(r *ai.FrontmatterRequest) *string { return &r.NoteID }),
	jsondec.String("title", func(r *ai.FrontmatterRequest) *string { return &r.Title }),
	jsondec.String("content", func(r *ai.FrontmatterRequest) *string { return &r.Content }),
	boardNotes("allNotes", func(r *ai.FrontmatterRequest) *[]ai.BoardNote { return &r.AllNotes }),
)

// decodeAIStrings decodes an AI body made only of string fields, skipping
// other keys.
func decodeAIStrings(fields map[string]*string) func(*jsondec.Decoder) error {
	return func(d *jsondec.Decoder) error {
		return d.Object(func(key []byte) error {
			if dst, ok := fields[string(key)]; ok {
				return d.String(dst)
			}
			return d.Skip()
		})
	}
}

var trackerGenerateRequestShape = jsondec.NewShape(jsondec.Skip[ai.TrackerGenerateRequest],
	jsondec.String("boardId", func(r *ai.TrackerGenerateRequest) *string { return &r.BoardID }),
	jsondec.String("mode", func(r *ai.TrackerGenerateRequest) *string { return &r.Mode }),
	jsondec.String("step", func(r *ai.TrackerGenerateRequest) *string { return &r.Step }),
	jsondec.String("parentId", func(r *ai.TrackerGenerateRequest) *string { return &r.ParentID }),
	jsondec.ArrayKeepEmpty("itemIds", ai.MaxGeneratedItems, func(r *ai.TrackerGenerateRequest) *[]string { return &r.ItemIDs }, (*jsondec.Decoder).String),
	jsondec.String("instruction", func(r *ai.TrackerGenerateRequest) *string { return &r.Instruction }),
	jsondec.String("context", func(r *ai.TrackerGenerateRequest) *string { return &r.Context }),
	jsondec.Int("count", func(r *ai.TrackerGenerateRequest) *int { return &r.Count }),
	contextItems("items", func(r *ai.TrackerGenerateRequest) *[]board.TrackerItem { return &r.Items }),
	boardNotes("notes", func(r *ai.TrackerGenerateRequest) *[]ai.BoardNote { return &r.Notes }),
)

var trackerAnalyzeRequestShape = jsondec.NewShape(jsondec.Skip[ai.TrackerAnalyzeRequest],
	jsondec.String("boardId", func(r *ai.TrackerAnalyzeRequest) *string { return &r.BoardID }),
	jsondec.Object("item", func(r *ai.TrackerAnalyzeRequest) *board.TrackerItem { return &r.Item }, reqbody.ContextItemShape),
	jsondec.OptObject("parent", func(r *ai.TrackerAnalyzeRequest) **board.TrackerItem { return &r.Parent }, reqbody.ContextItemShape),
	jsondec.String("focus", func(r *ai.TrackerAnalyzeRequest) *string { return &r.Focus }),
)

var trackerRewriteRequestShape = jsondec.NewShape(jsondec.Skip[ai.TrackerRewriteRequest],
	jsondec.String("boardId", func(r *ai.TrackerRewriteRequest) *string { return &r.BoardID }),
	jsondec.Object("item", func(r *ai.TrackerRewriteRequest) *board.TrackerItem { return &r.Item }, reqbody.ContextItemShape),
	jsondec.String("field", func(r *ai.TrackerRewriteRequest) *string { return &r.Field }),
	jsondec.String("selectedText", func(r *ai.TrackerRewriteRequest) *string { return &r.SelectedText }),
	jsondec.String("instruction", func(r *ai.TrackerRewriteRequest) *string { return &r.Instruction }),
)
