package ai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/ai/aitest"

	"github.com/google/go-cmp/cmp"
)

const validBlock = "```json\n" + `{"suggestions":[{"label":"Write the PRD","prompt":"Draft the PRD"},{"label":"List risks","prompt":"What are the risks?"},{"label":"Plan tests","prompt":"Plan the QA tests"}]}` + "\n```"

func subagentRequest(t *testing.T) ai.ChatRequest {
	t.Helper()
	req := chatRequest("What should we do next?")
	if err := json.Unmarshal([]byte(`{"id":"discovery","name":"Discovery","description":"Understand the problem"}`), &req.CurrentPhase); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSubagent_SuggestionBlock(t *testing.T) {
	reask := ai.Suggestions{Suggestions: []ai.Suggestion{
		{Label: "Interview users", Prompt: "Plan five user interviews"},
		{Label: "Map the journey", Prompt: "Sketch the current user journey"},
		{Label: "Collect metrics", Prompt: "Which numbers describe the problem today?"},
	}}
	tests := []struct {
		name      string
		replies   []aitest.Reply
		wantCalls int
		// want is the block that must end the streamed text; nil means
		// the synthesised one.
		want *ai.Suggestions
	}{
		{
			name:      "ModelWroteBlock",
			replies:   []aitest.Reply{aitest.Text("Talk to users first.\n\n", validBlock, "\n")},
			wantCalls: 1,
			want: &ai.Suggestions{Suggestions: []ai.Suggestion{
				{Label: "Write the PRD", Prompt: "Draft the PRD"}, {Label: "List risks", Prompt: "What are the risks?"}, {Label: "Plan tests", Prompt: "Plan the QA tests"},
			}},
		},
		{
			name:      "MissingBlockReasked",
			replies:   []aitest.Reply{aitest.Text("Talk to users first."), aitest.JSON(reask)},
			wantCalls: 2,
			want:      &reask,
		},
		{
			name: "TwoSuggestionsReasked",
			replies: []aitest.Reply{
				aitest.Text("Talk to users.\n```json\n{\"suggestions\":[{\"label\":\"a\",\"prompt\":\"b\"},{\"label\":\"c\",\"prompt\":\"d\"}]}\n```"),
				aitest.JSON(reask),
			},
			wantCalls: 2,
			want:      &reask,
		},
		{
			name:      "ToolCallOnlyReasked",
			replies:   []aitest.Reply{aitest.Calls(aitest.ToolCall{Name: "createPlaceholderNote", Args: `{"title":"User interviews"}`}), aitest.JSON(reask)},
			wantCalls: 2,
			want:      &reask,
		},
		{
			name:      "ReaskFailsSynthesised",
			replies:   []aitest.Reply{aitest.Text("Talk to users first."), aitest.JSON(`{"suggestions":"none"}`)},
			wantCalls: 2,
		},
		{
			name:      "ReaskErrorSynthesised",
			replies:   []aitest.Reply{aitest.Text("Talk to users first."), {Status: 500, Error: "boom"}},
			wantCalls: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, aitest.Seq(tt.replies...))
			svc, usage := newService(t, fake)
			rec := &recorder{}
			if err := svc.Subagent(t.Context(), subagentRequest(t), rec); err != nil {
				t.Fatalf("Subagent: %v", err)
			}
			checkSuggestionEvents(t, rec.kinds(), tt.wantCalls == 2)
			got, ok := ai.ParseSuggestions(rec.text())
			if !ok {
				t.Fatalf("streamed text does not end with a valid suggestion block: %q", rec.text())
			}
			if tt.want != nil {
				if diff := cmp.Diff(*tt.want, got); diff != "" {
					t.Errorf("suggestions (-want +got):\n%s", diff)
				}
			} else if !strings.Contains(got.Suggestions[0].Label, "Discovery") {
				t.Errorf("synthesised suggestions ignore the phase: %+v", got)
			}
			checkSubagentCalls(t, fake.Calls(), tt.wantCalls)
			if u := usage(); len(u) != 1 || u[0].Calls != tt.wantCalls {
				t.Errorf("usage = %+v, want one report of %d calls", u, tt.wantCalls)
			}
		})
	}
}

// checkSuggestionEvents checks that the events start and finish, and
// that a block the server added (added) is a text of its own after a
// text-end.
func checkSuggestionEvents(t *testing.T, kinds []string, added bool) {
	t.Helper()
	if kinds[0] != "start" || kinds[len(kinds)-1] != "finish" {
		t.Fatalf("event kinds = %v", kinds)
	}
	if added != (len(kinds) >= 3 && kinds[len(kinds)-3] == "text-end" && kinds[len(kinds)-2] == "text") {
		t.Errorf("event kinds = %v, want the added block after a text-end: %v", kinds, added)
	}
}

// checkSubagentCalls checks the subagent's model calls: want of them, the
// first naming the phase, and a second, if any, a non-streamed structured
// re-ask without tools.
func checkSubagentCalls(t *testing.T, calls []aitest.Call, want int) {
	t.Helper()
	if len(calls) != want {
		t.Fatalf("model calls = %d, want %d", len(calls), want)
	}
	if !strings.Contains(calls[0].Request.Messages[0].Content, `phase "Discovery"`) ||
		!strings.Contains(calls[0].Request.Messages[0].Content, "Understand the problem") {
		t.Errorf("system prompt does not name the phase: %q", calls[0].Request.Messages[0].Content)
	}
	if want == 2 {
		re := calls[1].Request
		if re.Stream == nil || *re.Stream || len(re.Format) == 0 || len(re.Tools) != 0 {
			t.Errorf("re-ask: stream=%v format=%s tools=%d, want a non-streamed structured call without tools", re.Stream, re.Format, len(re.Tools))
		}
	}
}

func TestParseSuggestions(t *testing.T) {
	tests := []struct {
		name string
		text string
		ok   bool
	}{
		{"OK", "Hi.\n\n" + validBlock, true},
		{"TrailingSpace", validBlock + "\n\n  ", true},
		{"AfterEarlierBlock", "```json\n{}\n```\nmore\n" + validBlock, true},
		{"TextAfterBlock", validBlock + "\nBye", false},
		{"NotJSONFence", strings.Replace(validBlock, "```json", "```yaml", 1), false},
		{"NoBlock", "Just text", false},
		{"BadJSON", "```json\n{suggestions:\n```", false},
		{"ExtraKey", "```json\n" + `{"suggestions":[{"label":"a","prompt":"b","x":1},{"label":"a","prompt":"b"},{"label":"a","prompt":"b"}]}` + "\n```", false},
		{"FourItems", "```json\n" + `{"suggestions":[{"label":"a","prompt":"b"},{"label":"a","prompt":"b"},{"label":"a","prompt":"b"},{"label":"a","prompt":"b"}]}` + "\n```", false},
		{"EmptyLabel", "```json\n" + `{"suggestions":[{"label":"","prompt":"b"},{"label":"a","prompt":"b"},{"label":"a","prompt":"b"}]}` + "\n```", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := ai.ParseSuggestions(tt.text); ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
		})
	}
}

func FuzzParseSuggestions(f *testing.F) {
	f.Add("Hi.\n\n" + validBlock)
	f.Add("```json\n```")
	f.Add("``````")
	f.Fuzz(func(t *testing.T, text string) {
		sug, ok := ai.ParseSuggestions(text)
		if !ok {
			return
		}
		if len(sug.Suggestions) != 3 {
			t.Fatalf("accepted %d suggestions", len(sug.Suggestions))
		}
		// What it accepts, rendered again, parses to the same thing.
		again, ok := ai.ParseSuggestions(sug.Fenced())
		if !ok || !cmp.Equal(sug, again) {
			t.Fatalf("Fenced() does not round-trip: %q", sug.Fenced())
		}
	})
}
