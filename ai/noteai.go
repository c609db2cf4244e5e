package ai

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"corkboard/aifeature"
	"corkboard/board"

	"github.com/ollama/ollama/api"
)

// MaxSteps is the spec's limit of the note-ai agentic loop: model calls
// 1..MaxSteps-1 may use tools, call MaxSteps is made without tools so that
// the model must answer.
const MaxSteps = 6

// commands maps each note-ai command to the writing guide it follows.
var commands = map[string]string{
	"generate-prd":      "prd",
	"generate-epic":     "epic",
	"generate-story":    "story",
	"generate-decision": "decision",
	"generate-feedback": "feedback",
	"generate-dev-task": "dev-task",
	"generate-qa-test":  "qa-test",
}

// Commands returns the note-ai commands, sorted.
func Commands() []string {
	return slices.Sorted(maps.Keys(commands))
}

func commandPrompt(c string) string { return "note-ai-" + c + ".md" }
func commandSkill(c string) string  { return commands[c] }

// NoteAI writes a note for req.Prompt as a stream of EventText whose text
// is "TITLE: <title>\n---\n<body>", with an agentic loop of at most
// MaxSteps model calls that may search and read the board's notes
// (req.AllNotes), load a writing guide, and delegate a technical question
// to the programmer model. The loop's own tool calls are the server's
// business and are not events. EventStart comes just before the first
// text of the note; errors follow Chat: before it they are returned for
// the caller to answer; after it they end the stream with an EventError
// and wrap ErrStreamed.
func (s *Service) NoteAI(ctx context.Context, req NoteAIRequest, sink Sink) error {
	if err := req.Validate(); err != nil {
		return err
	}
	system, err := renderPrompt("note-ai", map[string]any{"Skills": strings.Join(Skills(), ", "), "MaxSteps": MaxSteps})
	if err != nil {
		return err
	}
	return s.noteLoop(ctx, system, req, sink)
}

// NoteCommand runs one note-ai command (see Commands) like NoteAI, with the
// command's own system prompt and writing guide. An unknown command is an
// EINVALID error on field "command" whose message lists the commands.
func (s *Service) NoteCommand(ctx context.Context, command string, req NoteAIRequest, sink Sink) error {
	skill, ok := commands[command]
	if !ok {
		return &board.Error{Code: board.EINVALID, Field: "command",
			Message: fmt.Sprintf("Unknown command %q. Available commands: %s.", clip(command, 64), strings.Join(Commands(), ", "))}
	}
	if err := req.ValidateCommand(); err != nil {
		return err
	}
	system, err := renderPrompt(strings.TrimSuffix(commandPrompt(command), ".md"), map[string]any{
		"Skill":    mustAssets().skills[skill],
		"Skills":   strings.Join(Skills(), ", "),
		"MaxSteps": MaxSteps,
	})
	if err != nil {
		return err
	}
	return s.noteLoop(ctx, system, req, sink)
}

func (s *Service) noteLoop(ctx context.Context, system string, req NoteAIRequest, sink Sink) error {
	r := s.newRun(aifeature.NoteAI)
	defer r.report(ctx)
	ctx, cancel := withDeadline(ctx, s.cfg.Timeout)
	defer cancel()

	user, err := renderPrompt("note-ai-request", map[string]any{
		"Prompt":      strings.TrimSpace(req.Prompt),
		"NoteTitle":   req.NoteTitle,
		"NoteContent": clip(req.NoteContent, 12000),
		"NoteCount":   len(req.AllNotes),
	})
	if err != nil {
		return err
	}
	out := newEmitter(ctx, sink, s.cfg.NewID)
	f := &noteFormatter{out: out.text, fallbackTitle: req.NoteTitle}
	fail := out.fail
	msgs := []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	for step := 1; step <= MaxSteps; step++ {
		creq := &api.ChatRequest{Messages: msgs}
		if step < MaxSteps {
			creq.Tools = toolsFor(noteToolNames)
		} else {
			final, err := renderPrompt("note-ai-final", nil)
			if err != nil {
				return fail(err)
			}
			msgs = append(msgs, api.Message{Role: "user", Content: final})
			creq.Messages = msgs
		}
		resp, err := r.call(ctx, "", creq, func(cr api.ChatResponse) error {
			f.write(cr.Message.Content)
			return out.err
		})
		if err != nil {
			return fail(err)
		}
		calls := resp.Message.ToolCalls
		if step == MaxSteps {
			calls = nil
		}
		if f.endStep(len(calls) > 0) {
			break
		}
		if len(calls) == 0 {
			// Neither an answer nor a tool call.
			if step == MaxSteps {
				return fail(board.Errorf(board.EUPSTREAM, "The AI model returned an empty note."))
			}
			nudge, err := renderPrompt("note-ai-final", nil)
			if err != nil {
				return fail(err)
			}
			msgs = append(msgs, api.Message{Role: "user", Content: nudge})
			continue
		}
		msgs = append(msgs, api.Message{Role: "assistant", Content: resp.Message.Content, ToolCalls: calls})
		for _, tc := range calls {
			result, err := s.runNoteTool(ctx, r, req, tc)
			if err != nil {
				return fail(err)
			}
			msgs = append(msgs, api.Message{Role: "tool", ToolName: tc.Function.Name, ToolCallID: tc.ID, Content: result})
		}
	}
	return out.finish(r.usage) // the sink's error, if a write of the last step failed
}

// runNoteTool executes one tool call of the note-ai loop and returns the
// JSON the model reads as its result. Bad arguments and unknown notes are
// results too (the model can correct itself); only a request that ended
// is an error.
func (s *Service) runNoteTool(ctx context.Context, r *run, req NoteAIRequest, tc api.ToolCall) (string, error) {
	c := checkToolCall(tc, noteToolNames, nil, s.cfg.NewID)
	if c.ErrorText != "" {
		s.log.WarnContext(ctx, "ai: model sent an invalid tool call", "feature", aifeature.NoteAI, "tool", c.Name, "error", c.ErrorText)
		return jsonText(map[string]string{"error": c.ErrorText}), nil
	}
	str := func(k string) string { v, _ := c.Args[k].(string); return v }
	switch c.Name {
	case "searchNotes":
		limit := 5
		if v, ok := c.Args["limit"].(float64); ok {
			limit = int(v)
		}
		hits := searchNotes(req.AllNotes, str("query"), limit)
		res := map[string]any{"results": hits, "notesOnBoard": len(req.AllNotes)}
		if len(hits) == 0 {
			res["hint"] = "No note matches; try other words, or write without them."
		}
		return jsonText(res), nil
	case "readNote":
		id := str("id")
		for _, n := range req.AllNotes {
			if n.ID == id {
				return jsonText(map[string]string{"id": n.ID, "title": n.Title, "type": n.Type, "content": clip(n.Content, 12000)}), nil
			}
		}
		if id == req.NoteID && req.NoteID != "" {
			return jsonText(map[string]string{"id": id, "title": req.NoteTitle, "content": clip(req.NoteContent, 12000)}), nil
		}
		return jsonText(map[string]string{"error": fmt.Sprintf("There is no note with id %q; use searchNotes to find ids.", id)}), nil
	case "loadSkill":
		name := str("name")
		return jsonText(map[string]string{"name": name, "guide": mustAssets().skills[name]}), nil
	case "delegateToProgrammer":
		answer, err := s.askProgrammer(ctx, r, str("question"), str("context"))
		if err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			s.log.WarnContext(ctx, "ai: programmer delegate failed", "error", err)
			return jsonText(map[string]string{"error": "The programmer could not answer: " + board.ErrorMessage(err)}), nil
		}
		return jsonText(map[string]string{"answer": answer}), nil
	}
	return jsonText(map[string]string{"error": "Unknown tool."}), nil
}

// askProgrammer is the delegateToProgrammer tool: one non-streamed call
// with the code-focused prompt, on aifeature.Programmer's model.
func (s *Service) askProgrammer(ctx context.Context, r *run, question, extra string) (string, error) {
	system, err := renderPrompt("programmer", nil)
	if err != nil {
		return "", err
	}
	user := question
	if strings.TrimSpace(extra) != "" {
		user += "\n\nContext:\n" + extra
	}
	stream := false
	resp, err := r.call(ctx, aifeature.Programmer, &api.ChatRequest{
		Messages: []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Stream:   &stream,
	}, nil)
	if err != nil {
		return "", err
	}
	answer := strings.TrimSpace(resp.Message.Content)
	if answer == "" {
		return "", board.Errorf(board.EUPSTREAM, "empty answer")
	}
	return clip(answer, maxToolResultText), nil
}

// noteHit is one searchNotes result.
type noteHit struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// searchNotes ranks notes by how often the query's words occur in their
// title (counted three times) and content; without usable words it lists
// the first notes.
func searchNotes(notes []BoardNote, query string, limit int) []noteHit {
	limit = min(max(limit, 1), 10)
	var terms []string
	for _, t := range strings.Fields(strings.ToLower(query)) {
		if t = strings.Trim(t, ".,;:!?\"'()[]{}"); len([]rune(t)) >= 2 {
			terms = append(terms, t)
		}
	}
	type scored struct {
		hit   noteHit
		score int
		order int
	}
	var found []scored
	for i, n := range notes {
		title, content := strings.ToLower(n.Title), strings.ToLower(n.Content)
		score, first := 0, -1
		for _, t := range terms {
			score += 3*min(strings.Count(title, t), 10) + min(strings.Count(content, t), 10)
			if j := strings.Index(content, t); j >= 0 {
				// ToLower maps rune to rune, so rune offsets agree.
				if k := utf8.RuneCountInString(content[:j]); first < 0 || k < first {
					first = k
				}
			}
		}
		if len(terms) > 0 && score == 0 {
			continue
		}
		found = append(found, scored{hit: noteHit{ID: n.ID, Title: n.Title, Snippet: snippet(n.Content, first)}, score: score, order: i})
	}
	slices.SortStableFunc(found, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	hits := make([]noteHit, 0, min(limit, len(found)))
	for _, f := range found[:min(limit, len(found))] {
		hits = append(hits, f.hit)
	}
	return hits
}

// snippet returns about 240 characters of content around rune offset at
// (the start when at < 0).
func snippet(content string, at int) string {
	r := []rune(content)
	start := min(max(at-80, 0), len(r))
	end := min(start+240, len(r))
	s := strings.Join(strings.Fields(string(r[start:end])), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(r) {
		s += "…"
	}
	return s
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return `{"error":"internal"}`
	}
	return string(b)
}
