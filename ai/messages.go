package ai

import (
	"encoding/json"
	"fmt"
	"strings"

	"corkboard/board"

	"github.com/ollama/ollama/api"
)

// UIMessage is one message of a useChat conversation. Parts of types this
// package does not use (files, sources, data parts) and unknown keys are
// ignored.
type UIMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []UIPart `json:"parts"`
	// Content is the AI SDK 4 message text, used only when Parts is empty.
	Content string `json:"content,omitempty"`
}

// UIPart is one part of a UIMessage: a "text" or "reasoning" part (Text),
// a tool part "tool-<name>" or "dynamic-tool" (ToolCallID, State, Input,
// Output, ErrorText; ToolName for dynamic tools), or a "step-start".
type UIPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	State      string          `json:"state,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	ErrorText  string          `json:"errorText,omitempty"`
}

// toolName returns the tool a part is about, or "" for other parts.
func (p UIPart) toolName() string {
	switch {
	case p.Type == "dynamic-tool":
		return p.ToolName
	case strings.HasPrefix(p.Type, "tool-"):
		return strings.TrimPrefix(p.Type, "tool-")
	}
	return ""
}

// Limits on what a conversation sends to the model. Older messages and
// longer texts are cut, not rejected: the client keeps its whole history.
const (
	maxHistoryMessages = 40
	maxMessageText     = 20000
	maxToolResultText  = 8000
)

// toOllamaMessages converts a useChat history to Ollama chat messages: user
// text, assistant text with its tool calls split at step boundaries, and
// each tool's result as a "tool" message after the call. System messages
// from the client are dropped: the system prompt is the server's.
func toOllamaMessages(msgs []UIMessage) []api.Message {
	if len(msgs) > maxHistoryMessages {
		msgs = msgs[len(msgs)-maxHistoryMessages:]
	}
	var out []api.Message
	for _, m := range msgs {
		switch m.Role {
		case "user":
			if text := messageText(m); text != "" {
				out = append(out, api.Message{Role: "user", Content: text})
			}
		case "assistant":
			out = append(out, assistantMessages(m)...)
		}
	}
	return out
}

func messageText(m UIMessage) string {
	if len(m.Parts) == 0 {
		return clip(m.Content, maxMessageText)
	}
	var texts []string
	for _, p := range m.Parts {
		if p.Type == "text" && strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return clip(strings.Join(texts, "\n\n"), maxMessageText)
}

func assistantMessages(m UIMessage) []api.Message {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil
		}
		return []api.Message{{Role: "assistant", Content: clip(m.Content, maxMessageText)}}
	}
	var (
		out     []api.Message
		cur     api.Message
		results []api.Message
	)
	flush := func() {
		if cur.Content != "" || len(cur.ToolCalls) > 0 {
			cur.Role = "assistant"
			cur.Content = clip(cur.Content, maxMessageText)
			out = append(out, cur)
			out = append(out, results...)
		}
		cur, results = api.Message{}, nil
	}
	for _, p := range m.Parts {
		switch name := p.toolName(); {
		case p.Type == "step-start":
			flush()
		case p.Type == "text":
			if len(cur.ToolCalls) > 0 {
				// Text after a tool call belongs to the next step.
				flush()
			}
			if cur.Content != "" && p.Text != "" {
				cur.Content += "\n\n"
			}
			cur.Content += p.Text
		case name != "" && p.ToolCallID != "":
			args := api.NewToolCallFunctionArguments()
			if len(p.Input) > 0 && json.Unmarshal(p.Input, &args) != nil {
				args = api.NewToolCallFunctionArguments()
			}
			cur.ToolCalls = append(cur.ToolCalls, api.ToolCall{
				ID:       p.ToolCallID,
				Function: api.ToolCallFunction{Index: len(cur.ToolCalls), Name: name, Arguments: args},
			})
			results = append(results, api.Message{Role: "tool", ToolName: name, ToolCallID: p.ToolCallID, Content: toolResultText(p)})
		}
	}
	flush()
	return out
}

// toolResultText is what the model reads as the result of a client-side
// tool: the output the client reported, or the error.
func toolResultText(p UIPart) string {
	switch {
	case p.State == "output-available" && len(p.Output) > 0:
		return clip(string(p.Output), maxToolResultText)
	case p.ErrorText != "":
		b, _ := json.Marshal(map[string]string{"error": clip(p.ErrorText, 1000)})
		return string(b)
	case p.State == "output-denied":
		return `{"error":"The user declined this action."}`
	default:
		return `{"result":"The client did not report a result for this call."}`
	}
}

// BoardNote is a note as the AI features see it: in boardState.notes,
// allNotes and the other requests that send notes.
type BoardNote struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Content string  `json:"content"`
	Color   string  `json:"color,omitempty"`
	Type    string  `json:"type,omitempty"`
	X       float64 `json:"x,omitempty"`
	Y       float64 `json:"y,omitempty"`
}

// BoardState is the client's view of its board sent with chat and subagent
// requests: a subset of a pull answer. Unknown keys are ignored.
type BoardState struct {
	Name         string              `json:"name,omitempty"`
	Notes        []BoardNote         `json:"notes"`
	TrackerItems []board.TrackerItem `json:"trackerItems,omitempty"`
	// Frames and Connectors are the board's structure (docs/sync.md,
	// "Connectors and frames"): the model sees which notes are joined and
	// grouped, and connectNotes may end on a frame.
	Frames     []board.Frame     `json:"frames,omitempty"`
	Connectors []board.Connector `json:"connectors,omitempty"`
}

// Rendering budget for the board in a system prompt (characters).
const (
	maxBoardPrompt      = 24000
	maxNoteInBoard      = 600
	maxItemsInBoard     = 100
	maxRelatedNoteTitle = 200
)

// maxStructureInBoard bounds the frames and the connectors listed in a
// system prompt, each.
const maxStructureInBoard = 200

// renderStructure lists the board's frames (id, title, area) and
// connectors (from → to, label), each up to maxStructureInBoard.
func renderStructure(b *strings.Builder, st BoardState) {
	if len(st.Frames) > 0 {
		fmt.Fprintf(b, "Frames (%d), areas that group notes:\n", len(st.Frames))
		for i, f := range st.Frames {
			if i == maxStructureInBoard {
				fmt.Fprintf(b, "(%d more frames not shown)\n", len(st.Frames)-i)
				break
			}
			fmt.Fprintf(b, "- id=%q title=%q at=(%g,%g) size=%gx%g\n", f.ID, clip(f.Title, 200), f.X, f.Y, f.W, f.H)
		}
	}
	if len(st.Connectors) > 0 {
		fmt.Fprintf(b, "Connectors (%d), arrows between notes or frames:\n", len(st.Connectors))
		for i, c := range st.Connectors {
			if i == maxStructureInBoard {
				fmt.Fprintf(b, "(%d more connectors not shown)\n", len(st.Connectors)-i)
				break
			}
			fmt.Fprintf(b, "- %q -> %q", c.From, c.To)
			if c.Label != "" {
				fmt.Fprintf(b, " label=%q", clip(c.Label, 200))
			}
			b.WriteByte('\n')
		}
	}
}

// renderBoard describes the board compactly for a system prompt: every
// note's id, title, type, colour, position and the start of its content,
// until the budget is spent.
func renderBoard(st BoardState) string {
	var b strings.Builder
	if st.Name != "" {
		fmt.Fprintf(&b, "Board name: %s\n", clip(st.Name, 200))
	}
	if len(st.Notes) == 0 {
		b.WriteString("The board has no notes yet.\n")
	} else {
		fmt.Fprintf(&b, "The board has %d notes:\n", len(st.Notes))
	}
	for i, n := range st.Notes {
		if b.Len() > maxBoardPrompt {
			fmt.Fprintf(&b, "(%d more notes not shown)\n", len(st.Notes)-i)
			break
		}
		fmt.Fprintf(&b, "- id=%q title=%q", n.ID, clip(n.Title, maxRelatedNoteTitle))
		if n.Type != "" {
			fmt.Fprintf(&b, " type=%s", n.Type)
		}
		if n.Color != "" {
			fmt.Fprintf(&b, " color=%s", n.Color)
		}
		fmt.Fprintf(&b, " at=(%g,%g)\n", n.X, n.Y)
		if c := strings.TrimSpace(n.Content); c != "" {
			fmt.Fprintf(&b, "  content: %s\n", strings.ReplaceAll(clip(c, maxNoteInBoard), "\n", "\n  "))
		}
	}
	renderStructure(&b, st)
	if len(st.TrackerItems) > 0 {
		fmt.Fprintf(&b, "Tracker items (%d):\n", len(st.TrackerItems))
		for i, it := range st.TrackerItems {
			if i == maxItemsInBoard || b.Len() > maxBoardPrompt+8000 {
				fmt.Fprintf(&b, "(%d more items not shown)\n", len(st.TrackerItems)-i)
				break
			}
			fmt.Fprintf(&b, "- %s [%s] %s", it.Key, it.Type, clip(it.Summary, 200))
			if it.Status != "" {
				fmt.Fprintf(&b, " (status %s)", it.Status)
			}
			b.WriteByte('\n')
		}
	}
	return strings.TrimSpace(b.String())
}
