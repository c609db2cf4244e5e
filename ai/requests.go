package ai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"corkboard/board"
)

// Request limits ("characters" are Unicode code points, as in board).
const (
	MaxDocumentText    = 100000 // spec: document-to-notes text
	MaxDocumentNotes   = 15     // spec: notes produced by document-to-notes
	MaxMessages        = 500    // messages in one chat request
	MaxBoardNotes      = 2000   // notes in boardState or allNotes
	MaxTrackerItems    = 2000   // tracker items sent as context
	MaxBoardFrames     = 1000   // frames in boardState (board.DefaultFramesPerBoard)
	MaxBoardConnectors = 5000   // connectors in boardState
	MaxPrompt          = 10000  // a note-ai prompt, a user instruction, free context
	MaxFilename        = 255
	MaxGeneratedItems  = 20 // tracker items one generation returns
	maxPhaseBytes      = 4096
)

// checkText checks a string field's length and encoding.
func checkText(field, s string, max int, required bool) error {
	if required && strings.TrimSpace(s) == "" {
		return board.FieldErrorf(field, "%s is required.", field)
	}
	if !utf8.ValidString(s) {
		return board.FieldErrorf(field, "%s must be valid UTF-8.", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return board.FieldErrorf(field, "%s must be at most %d characters (got %d).", field, max, n)
	}
	return nil
}

// checkBoardID checks the boardId field; an empty one is an error only when
// required.
func checkBoardID(id string, required bool) error {
	if id == "" && !required {
		return nil
	}
	if id == "" {
		return board.FieldErrorf("boardId", "boardId is required.")
	}
	return board.ValidateBoardID("boardId", id)
}

// firstError returns the first non-nil error of checks, which are listed in
// the order a request's fields are checked. Every check is evaluated; they
// are cheap and free of side effects.
func firstError(checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkNoteRef checks what every request about one note names it by: the
// board (required), the note's id and its title (both optional).
func checkNoteRef(boardID, noteID, title string) error {
	return firstError(
		checkBoardID(boardID, true),
		checkText("noteId", noteID, board.MaxIDLen, false),
		checkText("title", title, board.MaxTitleLen, false),
	)
}

// checkEither requires text in a or b; field and message are the error's.
func checkEither(field, message, a, b string) error {
	if strings.TrimSpace(a) == "" && strings.TrimSpace(b) == "" {
		return board.FieldErrorf(field, "%s", message)
	}
	return nil
}

func checkNotes(field string, notes []BoardNote) error {
	if len(notes) > MaxBoardNotes {
		return board.FieldErrorf(field, "%s may hold at most %d notes (got %d).", field, MaxBoardNotes, len(notes))
	}
	for i, n := range notes {
		p := fmt.Sprintf("%s[%d]", field, i)
		if err := checkText(p+".id", n.ID, board.MaxIDLen, true); err != nil {
			return err
		}
		if err := checkText(p+".title", n.Title, board.MaxTitleLen, false); err != nil {
			return err
		}
		if err := checkText(p+".content", n.Content, board.MaxNoteContent, false); err != nil {
			return err
		}
	}
	return nil
}

func checkItems(field string, items []board.TrackerItem) error {
	if len(items) > MaxTrackerItems {
		return board.FieldErrorf(field, "%s may hold at most %d items (got %d).", field, MaxTrackerItems, len(items))
	}
	for i := range items {
		if err := checkItem(fmt.Sprintf("%s[%d]", field, i), &items[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkItem checks one tracker item; a nil one (an optional item left out)
// passes.
func checkItem(path string, it *board.TrackerItem) error {
	if it == nil {
		return nil
	}
	// The timestamps and versions of a pulled item do not matter here.
	cp := *it
	cp.UpdatedAt = ""
	return cp.Validate(path)
}

// Phase is the subagent's currentPhase: either a phase object of the
// board's phase configuration ({id, name, …}) or a plain string.
type Phase struct {
	ID          string
	Name        string
	Description string
	// Raw is the value as sent.
	Raw json.RawMessage
}

// UnmarshalJSON accepts null, a string, or an object with id, name (or
// title, label) and description.
func (p *Phase) UnmarshalJSON(b []byte) error {
	*p = Phase{}
	b = bytes.TrimSpace(b)
	if len(b) > maxPhaseBytes {
		return board.FieldErrorf("currentPhase", "currentPhase must be at most %d bytes of JSON.", maxPhaseBytes)
	}
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p.ID, p.Name = s, s
	default:
		var o struct {
			ID          any    `json:"id"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Label       string `json:"label"`
			Description string `json:"description"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return board.FieldErrorf("currentPhase", "currentPhase must be a phase object or a string.")
		}
		if o.ID != nil {
			p.ID = fmt.Sprint(o.ID)
		}
		p.Name = cmpOr(o.Name, o.Title, o.Label, p.ID)
		p.Description = o.Description
	}
	p.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the phase as it was sent.
func (p Phase) MarshalJSON() ([]byte, error) {
	if len(p.Raw) == 0 {
		return []byte("null"), nil
	}
	return p.Raw, nil
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// ChatRequest is the body useChat posts to chat and subagent:
// {id, messages, trigger, messageId?} plus Corkboard's boardId, boardState
// and (subagent) currentPhase.
type ChatRequest struct {
	ID           string      `json:"id"`
	Messages     []UIMessage `json:"messages"`
	Trigger      string      `json:"trigger"`
	MessageID    string      `json:"messageId,omitempty"`
	BoardID      string      `json:"boardId"`
	BoardState   BoardState  `json:"boardState"`
	CurrentPhase Phase       `json:"currentPhase"`
}

// Validate checks the request; errors are EINVALID and name the field.
func (r *ChatRequest) Validate() error {
	if err := checkBoardID(r.BoardID, true); err != nil {
		return err
	}
	if r.Trigger != "" && r.Trigger != "submit-message" && r.Trigger != "regenerate-message" {
		return board.FieldErrorf("trigger", "trigger must be submit-message or regenerate-message.")
	}
	if len(r.Messages) == 0 {
		return board.FieldErrorf("messages", "messages must hold at least one message.")
	}
	if len(r.Messages) > MaxMessages {
		return board.FieldErrorf("messages", "messages may hold at most %d messages (got %d).", MaxMessages, len(r.Messages))
	}
	hasUser := false
	for i, m := range r.Messages {
		if !slices.Contains([]string{"system", "user", "assistant"}, m.Role) {
			return board.FieldErrorf(fmt.Sprintf("messages[%d].role", i), "messages[%d].role must be system, user or assistant.", i)
		}
		for j, p := range m.Parts {
			if !utf8.ValidString(p.Text) {
				return board.FieldErrorf(fmt.Sprintf("messages[%d].parts[%d].text", i, j), "messages[%d].parts[%d].text must be valid UTF-8.", i, j)
			}
		}
		hasUser = hasUser || m.Role == "user" && messageText(m) != ""
	}
	if !hasUser {
		return board.FieldErrorf("messages", "messages must hold a user message with text.")
	}
	return firstError(
		checkText("boardState.name", r.BoardState.Name, board.MaxBoardNameLen, false),
		checkNotes("boardState.notes", r.BoardState.Notes),
		checkItems("boardState.trackerItems", r.BoardState.TrackerItems),
		checkStructure(r.BoardState),
	)
}

// checkStructure checks boardState's frames and connectors as a push
// would (their counts are bounded while decoding).
func checkStructure(st BoardState) error {
	for i := range st.Frames {
		if err := st.Frames[i].Validate(fmt.Sprintf("boardState.frames[%d]", i)); err != nil {
			return err
		}
	}
	for i := range st.Connectors {
		if err := st.Connectors[i].Validate(fmt.Sprintf("boardState.connectors[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// NoteAIRequest is the body of note-ai and note-ai/{command} (useCompletion
// posts {prompt, …body}). Prompt is required for note-ai and optional for a
// command.
type NoteAIRequest struct {
	BoardID     string      `json:"boardId"`
	NoteID      string      `json:"noteId"`
	Prompt      string      `json:"prompt"`
	NoteTitle   string      `json:"noteTitle,omitempty"`
	NoteContent string      `json:"noteContent"`
	AllNotes    []BoardNote `json:"allNotes"`
}

// Validate checks the request for note-ai; see ValidateCommand for
// commands.
func (r *NoteAIRequest) Validate() error {
	return r.validate(true)
}

// ValidateCommand checks the request for a note-ai command, where the
// prompt may be empty.
func (r *NoteAIRequest) ValidateCommand() error {
	return r.validate(false)
}

func (r *NoteAIRequest) validate(promptRequired bool) error {
	return firstError(
		checkBoardID(r.BoardID, true),
		checkText("noteId", r.NoteID, board.MaxIDLen, false),
		checkText("prompt", r.Prompt, MaxPrompt, promptRequired),
		checkText("noteTitle", r.NoteTitle, board.MaxTitleLen, false),
		checkText("noteContent", r.NoteContent, board.MaxNoteContent, false),
		checkNotes("allNotes", r.AllNotes),
	)
}

// FrontmatterRequest asks for a note's front matter after note AI wrote it.
type FrontmatterRequest struct {
	BoardID string `json:"boardId"`
	NoteID  string `json:"noteId"`
	Title   string `json:"title"`
	Content string `json:"content"`
	// AllNotes are the candidates for relationships (content optional).
	AllNotes []BoardNote `json:"allNotes"`
}

// Validate checks the request; errors are EINVALID and name the field.
func (r *FrontmatterRequest) Validate() error {
	return firstError(
		checkNoteRef(r.BoardID, r.NoteID, r.Title),
		checkText("content", r.Content, board.MaxNoteContent, false),
		checkEither("content", "title or content is required.", r.Title, r.Content),
		checkNotes("allNotes", r.AllNotes),
	)
}

// DocumentRequest is a pasted or uploaded document to turn into notes.
type DocumentRequest struct {
	// BoardID is optional: a document may be imported before the board
	// has been claimed.
	BoardID  string `json:"boardId,omitempty"`
	Text     string `json:"text"`
	Filename string `json:"filename,omitempty"`
}

// Validate checks the request; Text may hold at most MaxDocumentText code
// points.
func (r *DocumentRequest) Validate() error {
	return firstError(
		checkBoardID(r.BoardID, false),
		checkText("text", r.Text, MaxDocumentText, true),
		checkText("filename", r.Filename, MaxFilename, false),
	)
}

// AnalyzeNoteRequest asks for improvement suggestions on one note.
type AnalyzeNoteRequest struct {
	BoardID string `json:"boardId"`
	NoteID  string `json:"noteId,omitempty"`
	Title   string `json:"title"`
	Content string `json:"content"`
	// Focus optionally says what to look for ("clarity", "missing
	// acceptance criteria", …).
	Focus string `json:"focus,omitempty"`
}

// Validate checks the request; errors are EINVALID and name the field.
func (r *AnalyzeNoteRequest) Validate() error {
	return firstError(
		checkNoteRef(r.BoardID, r.NoteID, r.Title),
		checkText("content", r.Content, board.MaxNoteContent, true),
		checkText("focus", r.Focus, MaxPrompt, false),
	)
}

// RewriteNoteRequest asks for a rewrite of a note's content, or of
// SelectedText within it when given.
type RewriteNoteRequest struct {
	BoardID      string `json:"boardId"`
	NoteID       string `json:"noteId,omitempty"`
	Title        string `json:"title,omitempty"`
	Content      string `json:"content"`
	SelectedText string `json:"selectedText,omitempty"`
	Instruction  string `json:"instruction"`
}

// Validate checks the request; errors are EINVALID and name the field.
func (r *RewriteNoteRequest) Validate() error {
	return firstError(
		checkNoteRef(r.BoardID, r.NoteID, r.Title),
		checkText("content", r.Content, board.MaxNoteContent, r.SelectedText == ""),
		checkText("selectedText", r.SelectedText, board.MaxNoteContent, false),
		checkText("instruction", r.Instruction, MaxPrompt, true),
	)
}

// Tracker generation modes.
const (
	ModeGenerateStep     = "generate_step"
	ModeRegenerateItems  = "regenerate_items"
	ModeGenerateChildren = "generate_children"
)

// Tracker item types that generation produces, from the top of the
// hierarchy down; the step after the last is "done".
var trackerSteps = []string{"epic", "story", "task"}

// TrackerSteps returns the tracker steps (item types) generation knows, top
// down.
func TrackerSteps() []string { return slices.Clone(trackerSteps) }

// TrackerGenerateRequest asks for new tracker items.
type TrackerGenerateRequest struct {
	BoardID string `json:"boardId"`
	// Mode is generate_step, regenerate_items or generate_children.
	Mode string `json:"mode"`
	// Step is the item type generate_step produces: epic, story or task.
	Step string `json:"step,omitempty"`
	// ParentID is the existing item generate_children breaks down.
	ParentID string `json:"parentId,omitempty"`
	// ItemIDs are the existing items regenerate_items replaces.
	ItemIDs []string `json:"itemIds,omitempty"`
	// Instruction is an optional wish from the user.
	Instruction string `json:"instruction,omitempty"`
	// Context is optional free text about the product or project.
	Context string `json:"context,omitempty"`
	// Count is how many items to aim for, 1 to 20; 0 lets the model choose.
	Count int `json:"count,omitempty"`
	// Items are the board's current tracker items.
	Items []board.TrackerItem `json:"items"`
	// Notes are board notes to draw on (optional).
	Notes []BoardNote `json:"notes,omitempty"`
}

// Validate checks the request, including that the IDs it names exist in
// Items; errors are EINVALID and name the field.
func (r *TrackerGenerateRequest) Validate() error {
	if err := firstError(
		checkBoardID(r.BoardID, true),
		checkItems("items", r.Items),
		checkNotes("notes", r.Notes),
		checkText("instruction", r.Instruction, MaxPrompt, false),
		checkText("context", r.Context, MaxPrompt, false),
	); err != nil {
		return err
	}
	if r.Count < 0 || r.Count > MaxGeneratedItems {
		return board.FieldErrorf("count", "count must be between 1 and %d, or 0 to let the model choose.", MaxGeneratedItems)
	}
	has := func(id string) bool {
		return slices.ContainsFunc(r.Items, func(it board.TrackerItem) bool { return it.ID == id })
	}
	switch r.Mode {
	case ModeGenerateStep:
		if !slices.Contains(trackerSteps, r.Step) {
			return board.FieldErrorf("step", "step must be one of %s.", strings.Join(trackerSteps, ", "))
		}
	case ModeGenerateChildren:
		if r.ParentID == "" {
			return board.FieldErrorf("parentId", "parentId is required for generate_children.")
		}
		if !has(r.ParentID) {
			return board.FieldErrorf("parentId", "parentId must be the id of one of items.")
		}
	case ModeRegenerateItems:
		if len(r.ItemIDs) == 0 {
			return board.FieldErrorf("itemIds", "itemIds must name at least one item for regenerate_items.")
		}
		if len(r.ItemIDs) > MaxGeneratedItems {
			return board.FieldErrorf("itemIds", "itemIds may name at most %d items.", MaxGeneratedItems)
		}
		for i, id := range r.ItemIDs {
			if !has(id) {
				return board.FieldErrorf(fmt.Sprintf("itemIds[%d]", i), "itemIds[%d] must be the id of one of items.", i)
			}
		}
	default:
		return board.FieldErrorf("mode", "mode must be one of %s, %s, %s.", ModeGenerateStep, ModeRegenerateItems, ModeGenerateChildren)
	}
	return nil
}

// TrackerAnalyzeRequest asks for improvement suggestions on one work item.
type TrackerAnalyzeRequest struct {
	BoardID string             `json:"boardId"`
	Item    board.TrackerItem  `json:"item"`
	Parent  *board.TrackerItem `json:"parent,omitempty"`
	Focus   string             `json:"focus,omitempty"`
}

// Validate checks the request; errors are EINVALID and name the field.
func (r *TrackerAnalyzeRequest) Validate() error {
	return firstError(
		checkBoardID(r.BoardID, true),
		checkItem("item", &r.Item),
		checkEither("item.summary", "item.summary or item.description is required.", r.Item.Summary, r.Item.Description),
		checkItem("parent", r.Parent),
		checkText("focus", r.Focus, MaxPrompt, false),
	)
}

// TrackerRewriteRequest asks for a rewrite of one field of a work item, or
// of SelectedText within it.
type TrackerRewriteRequest struct {
	BoardID string            `json:"boardId"`
	Item    board.TrackerItem `json:"item"`
	// Field is "summary" or "description".
	Field        string `json:"field"`
	SelectedText string `json:"selectedText,omitempty"`
	Instruction  string `json:"instruction"`
}

// Validate checks the request; errors are EINVALID and name the field.
func (r *TrackerRewriteRequest) Validate() error {
	if err := firstError(
		checkBoardID(r.BoardID, true),
		checkItem("item", &r.Item),
	); err != nil {
		return err
	}
	if r.Field != "summary" && r.Field != "description" {
		return board.FieldErrorf("field", "field must be summary or description.")
	}
	return firstError(
		checkText("selectedText", r.SelectedText, board.MaxItemDescription, false),
		checkText("instruction", r.Instruction, MaxPrompt, true),
	)
}

// fieldText returns the current text of the field a rewrite targets.
func (r *TrackerRewriteRequest) fieldText() string {
	if r.Field == "summary" {
		return r.Item.Summary
	}
	return r.Item.Description
}
