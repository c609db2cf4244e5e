package ai

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"corkboard/board"

	"github.com/ollama/ollama/api"
)

// structuredAttempts is how many answers a JSON endpoint accepts from the
// model: the first, and one retry told what was wrong with it.
const structuredAttempts = 2

// structured asks the model of feature f (the run's when "") for JSON,
// passing the named schema as Ollama's format (structured outputs), and
// checks the answer against the same schema, then decodes it and runs
// check, which may also repair the value. When the answer fails, the model
// is asked again with the problem appended, up to attempts answers in all;
// then the error is EUPSTREAM naming the last problem. Upstream failures
// (Ollama down, model error) are returned at once.
func structured[T any](ctx context.Context, r *run, f Feature, schemaName string, msgs []api.Message, attempts int, check func(*T) error) (T, error) {
	var zero T
	sch := mustAssets().schemas[schemaName]
	stream := false
	msgs = slices.Clone(msgs)
	var problem error
	for attempt := 1; attempt <= attempts; attempt++ {
		resp, err := r.call(ctx, f, &api.ChatRequest{
			Messages: msgs,
			Format:   sch.raw,
			Stream:   &stream,
			Options:  map[string]any{"temperature": 0.2},
		}, nil)
		if err != nil {
			return zero, err
		}
		content := unfence(resp.Message.Content)
		problem = sch.validate([]byte(content))
		if problem == nil {
			var v T
			if problem = json.Unmarshal([]byte(content), &v); problem == nil {
				if check != nil {
					problem = check(&v)
				}
				if problem == nil {
					return v, nil
				}
			}
		}
		r.s.log.WarnContext(ctx, "ai: model output rejected", "feature", r.feature, "schema", schemaName, "attempt", attempt, "problem", problem)
		if attempt < attempts {
			retry, err := renderPrompt("retry", map[string]any{"Problem": problem.Error()})
			if err != nil {
				return zero, err
			}
			msgs = append(msgs,
				api.Message{Role: "assistant", Content: clip(resp.Message.Content, 4000)},
				api.Message{Role: "user", Content: retry})
		}
	}
	times := "twice"
	if attempts == 1 {
		times = "once"
	}
	return zero, board.Errorf(board.EUPSTREAM, "The AI model returned invalid output %s (%s). Try again, or use a larger model.", times, clip(problem.Error(), 300))
}

// unfence removes a ``` fence some models put around JSON even when asked
// for bare JSON.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	t = strings.TrimSuffix(t[3:], "```")
	if _, rest, ok := strings.Cut(t, "\n"); ok {
		t = rest
	}
	return strings.TrimSpace(t)
}
