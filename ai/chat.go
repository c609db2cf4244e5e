package ai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ollama/ollama/api"

	"corkboard/aifeature"
)

// Chat answers a board chat as a stream of events on sink: the model's
// text as EventText and each of its tool calls (createNote, updateNote,
// deleteNote, expandNote, summarizeBoard, createPlaceholderNote) as an
// EventToolCall with validated arguments, or with ErrorText when they were
// rejected. The board itself is not changed: the client applies the calls
// and, if it wants the model to continue, asks again with the tool outputs
// in the history.
//
// EventStart comes with the model's first line. Before it, errors are
// returned for the caller to answer: EINVALID (400), EUNAVAILABLE (503),
// EUPSTREAM (502). After it they end the stream with an EventError and are
// returned wrapping ErrStreamed. A cancelled ctx (client gone) or an error
// from sink cancels the model call.
func (s *Service) Chat(ctx context.Context, req ChatRequest, sink Sink) error {
	if err := req.Validate(); err != nil {
		return err
	}
	system, err := renderPrompt("chat", map[string]any{"Board": renderBoard(req.BoardState)})
	if err != nil {
		return err
	}
	return s.boardChat(ctx, aifeature.Chat, system, req, sink, nil)
}

// Subagent answers like Chat with a system prompt built around
// req.CurrentPhase, and makes sure the answer's text ends with a fenced
// ```json block holding exactly three suggested next actions
// ({"suggestions":[{"label","prompt"}×3]}): when the model's text lacks a
// valid block, the model is asked once more for just the block (structured
// output), and when that fails too, a block is synthesised from the phase.
// An added block follows an EventTextEnd, as a text of its own.
func (s *Service) Subagent(ctx context.Context, req ChatRequest, sink Sink) error {
	if err := req.Validate(); err != nil {
		return err
	}
	phase := req.CurrentPhase
	system, err := renderPrompt("subagent", map[string]any{
		"Board":            renderBoard(req.BoardState),
		"Phase":            cmpOr(phase.Name, "(no phase set)"),
		"PhaseDescription": phase.Description,
		"PhaseJSON":        string(phase.Raw),
	})
	if err != nil {
		return err
	}
	return s.boardChat(ctx, aifeature.Subagent, system, req, sink, func(ctx context.Context, r *run, msgs []api.Message, answer string) *Suggestions {
		return s.ensureSuggestions(ctx, r, msgs, answer, phase)
	})
}

// suggestFunc returns the suggestion block to append to an answer, or
// nil when the answer already ends with a valid one.
type suggestFunc func(ctx context.Context, r *run, msgs []api.Message, answer string) *Suggestions

func (s *Service) boardChat(ctx context.Context, f Feature, system string, req ChatRequest, sink Sink, suggest suggestFunc) error {
	r := s.newRun(f)
	defer r.report(ctx)
	ctx, cancel := withDeadline(ctx, s.cfg.Timeout)
	defer cancel()

	turn := newTurnChecker(req.BoardState, s.cfg.NewID)
	msgs := append([]api.Message{{Role: "system", Content: system}}, toOllamaMessages(req.Messages)...)
	out := newEmitter(ctx, sink, s.cfg.NewID)
	var calls []checkedCall
	answer, err := r.call(ctx, "", &api.ChatRequest{Messages: msgs, Tools: toolsFor(boardToolNames)}, func(cr api.ChatResponse) error {
		// The first line, even one without content, starts the answer:
		// from here on the model is known to be answering.
		out.begin()
		out.reasoning(cr.Message.Thinking)
		out.text(cr.Message.Content)
		for _, tc := range cr.Message.ToolCalls {
			c := turn.check(tc)
			if c.ErrorText != "" {
				s.log.WarnContext(ctx, "ai: model sent an invalid tool call", "feature", f, "tool", c.Name, "error", c.ErrorText)
			}
			calls = append(calls, c)
			out.tool(c)
		}
		return out.err
	})
	if err != nil {
		return out.fail(err)
	}
	if err := out.begin(); err != nil { // an answer with no line but done
		return out.fail(err)
	}
	if suggest != nil {
		text := answer.Message.Content
		history := append(msgs, api.Message{Role: "assistant", Content: answerForHistory(text, calls)})
		if block := suggest(ctx, r, history, text); block != nil {
			if ctx.Err() != nil {
				return out.fail(s.upstreamError(ctx, r.usage.Model, ctx.Err()))
			}
			sep := ""
			if strings.TrimSpace(text) != "" {
				sep = "\n\n"
			}
			out.textEnd() // the block is a text of its own
			out.text(sep + block.Fenced())
		}
	}
	return out.finish(r.usage)
}

// answerForHistory is the assistant turn as the model should remember it
// when asked for suggestions: its text, and which tools it called.
func answerForHistory(text string, calls []checkedCall) string {
	var b strings.Builder
	b.WriteString(text)
	for _, c := range calls {
		if c.ErrorText == "" {
			fmt.Fprintf(&b, "\n(called %s with %s)", c.Name, clip(string(c.Input), 500))
		}
	}
	return strings.TrimSpace(b.String())
}

// Suggestion is one suggested next action of the subagent: a short label
// for a button and the prompt the client sends when it is clicked.
type Suggestion struct {
	Label  string `json:"label"`
	Prompt string `json:"prompt"`
}

// Suggestions is the subagent's fenced JSON block:
// {"suggestions":[…exactly 3…]}.
type Suggestions struct {
	Suggestions []Suggestion `json:"suggestions"`
}

// Fenced renders the block as it ends an answer.
func (s Suggestions) Fenced() string {
	b, _ := json.MarshalIndent(s, "", "  ")
	return "```json\n" + string(b) + "\n```"
}

// ParseSuggestions extracts the fenced ```json block that ends text (only
// white space may follow it) and checks it against the suggestions schema:
// exactly three suggestions with non-empty labels and prompts. ok is false
// when there is no such block or it is invalid.
func ParseSuggestions(text string) (sug Suggestions, ok bool) {
	t := strings.TrimRight(text, " \t\r\n")
	if !strings.HasSuffix(t, "```") {
		return Suggestions{}, false
	}
	t = t[:len(t)-3]
	open := strings.LastIndex(t, "```")
	if open < 0 {
		return Suggestions{}, false
	}
	info, body, found := strings.Cut(t[open+3:], "\n")
	if !found || !strings.EqualFold(strings.TrimSpace(info), "json") {
		return Suggestions{}, false
	}
	if err := mustAssets().schemas["suggestions"].validate([]byte(body)); err != nil {
		return Suggestions{}, false
	}
	if err := json.Unmarshal([]byte(body), &sug); err != nil {
		return Suggestions{}, false
	}
	return sug, true
}

// ensureSuggestions implements the subagent's block policy: nothing to add
// when the answer ends with a valid block; else one structured re-ask; else
// a block synthesised from the phase.
func (s *Service) ensureSuggestions(ctx context.Context, r *run, history []api.Message, answer string, phase Phase) *Suggestions {
	if _, ok := ParseSuggestions(answer); ok {
		return nil
	}
	prompt, err := renderPrompt("subagent-suggestions", map[string]any{"Phase": cmpOr(phase.Name, "(no phase set)")})
	if err == nil {
		msgs := append(history, api.Message{Role: "user", Content: prompt})
		var sug Suggestions
		if sug, err = structured[Suggestions](ctx, r, "", "suggestions", msgs, 1, nil); err == nil {
			return &sug
		}
	}
	if ctx.Err() == nil {
		s.log.WarnContext(ctx, "ai: subagent suggestions synthesised", "error", err)
	}
	sug := synthesiseSuggestions(phase)
	return &sug
}

// synthesiseSuggestions is the last resort when the model gives no usable
// block: three generic but phase-aware next actions.
func synthesiseSuggestions(phase Phase) Suggestions {
	name := cmpOr(phase.Name, "this phase")
	return Suggestions{Suggestions: []Suggestion{
		{Label: "What's next in " + clip(name, 40), Prompt: fmt.Sprintf("What are the most important next steps for the %s phase, given the board?", name)},
		{Label: "Fill the gaps", Prompt: fmt.Sprintf("Which notes are missing for the %s phase? Create placeholder notes for them.", name)},
		{Label: "Summarize the board", Prompt: "Summarize the board and point out open questions."},
	}}
}
