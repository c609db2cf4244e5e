package ai_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/aifeature"
	"corkboard/board"
)

func TestCheckModels(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		fake := aitest.New(t, nil, aitest.WithModels("qwen3:4b", "qwen2.5-coder:latest"))
		svc, _ := newService(t, fake, func(c *ai.Config) {
			c.Models = map[ai.Feature]string{aifeature.Programmer: "qwen2.5-coder"} // implicit :latest
		})
		if err := svc.CheckModels(t.Context()); err != nil {
			t.Fatalf("CheckModels: %v", err)
		}
	})
	t.Run("ErrMissing", func(t *testing.T) {
		fake := aitest.New(t, nil, aitest.WithModels("llama3.2:3b"))
		svc, _ := newService(t, fake, func(c *ai.Config) {
			c.Models = map[ai.Feature]string{aifeature.Programmer: "qwen2.5-coder:7b"}
		})
		be := wantCode(t, svc.CheckModels(t.Context()), board.EUNAVAILABLE)
		for _, want := range []string{`"qwen3:4b"`, `"qwen2.5-coder:7b"`, "ollama pull qwen3:4b", fake.URL} {
			if !strings.Contains(be.Message, want) {
				t.Errorf("message %q does not mention %s", be.Message, want)
			}
		}
	})
	t.Run("ErrDown", func(t *testing.T) {
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close()
		svc, err := ai.New(ai.Config{OllamaURL: down.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		be := wantCode(t, svc.CheckModels(t.Context()), board.EUNAVAILABLE)
		if !strings.Contains(be.Message, "cannot reach Ollama") {
			t.Errorf("message = %q", be.Message)
		}
	})
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ai.Config
		wantErr string
	}{
		{"Defaults", ai.Config{}, ""},
		{"HostPort", ai.Config{OllamaURL: "localhost:11434"}, ""},
		{"ErrScheme", ai.Config{OllamaURL: "ftp://x"}, "invalid Ollama URL"},
		{"ErrEmptyOverride", ai.Config{Models: map[ai.Feature]string{aifeature.Chat: " "}}, "empty model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, err := ai.New(tt.cfg, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got := svc.Model(aifeature.Chat); got != ai.DefaultModel {
					t.Errorf("Model(chat) = %q, want %q", got, ai.DefaultModel)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New: err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestModelOverride(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.JSON(ai.Rewrite{Rewritten: "ok"})), aitest.WithModels("qwen3:4b", "qwen3:8b"))
	svc, usage := newService(t, fake, func(c *ai.Config) {
		c.Models = map[ai.Feature]string{aifeature.NotesRewrite: "qwen3:8b"}
		c.NumCtx = 16384
	})
	if _, err := svc.NotesRewrite(t.Context(), ai.RewriteNoteRequest{BoardID: "b1", Content: "x", Instruction: "y"}); err != nil {
		t.Fatal(err)
	}
	req := fake.Requests()[0]
	if req.Model != "qwen3:8b" {
		t.Errorf("model = %q, want the override", req.Model)
	}
	if got, _ := req.Options["num_ctx"].(float64); got != 16384 {
		t.Errorf("num_ctx = %v, want 16384", req.Options["num_ctx"])
	}
	if u := usage(); len(u) != 1 || u[0].Model != "qwen3:8b" {
		t.Errorf("usage = %+v", u)
	}
}

func TestValidate(t *testing.T) {
	items := `"items":[{"id":"e1","type":"epic","summary":"Login"}]`
	tests := []struct {
		name      string
		body      string
		into      interface{ Validate() error }
		wantField string // "" = valid
	}{
		{"ChatOK", `{"boardId":"b1","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"},{"type":"source-url","url":"x"}]}],"unknown":1}`, &ai.ChatRequest{}, ""},
		{"ChatNoBoard", `{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, &ai.ChatRequest{}, "boardId"},
		{"ChatNoMessages", `{"boardId":"b1","messages":[]}`, &ai.ChatRequest{}, "messages"},
		{"ChatNoUserText", `{"boardId":"b1","messages":[{"role":"assistant","parts":[{"type":"text","text":"hi"}]}]}`, &ai.ChatRequest{}, "messages"},
		{"ChatBadRole", `{"boardId":"b1","messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"tool"}]}`, &ai.ChatRequest{}, "messages[1].role"},
		{"ChatBadTrigger", `{"boardId":"b1","trigger":"x","messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, &ai.ChatRequest{}, "trigger"},
		{"ChatNoteWithoutID", `{"boardId":"b1","boardState":{"notes":[{"title":"x"}]},"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, &ai.ChatRequest{}, "boardState.notes[0].id"},
		{"ChatPhaseString", `{"boardId":"b1","currentPhase":"Build","messages":[{"role":"user","content":"hi"}]}`, &ai.ChatRequest{}, ""},
		{"NoteAIOK", `{"boardId":"b1","prompt":"Write","allNotes":[]}`, &ai.NoteAIRequest{}, ""},
		{"NoteAINoPrompt", `{"boardId":"b1","prompt":"  "}`, &ai.NoteAIRequest{}, "prompt"},
		{"NoteAIContentTooLong", `{"boardId":"b1","prompt":"x","noteContent":"` + strings.Repeat("a", board.MaxNoteContent+1) + `"}`, &ai.NoteAIRequest{}, "noteContent"},
		{"FrontmatterEmpty", `{"boardId":"b1"}`, &ai.FrontmatterRequest{}, "content"},
		{"DocumentNoBoardOK", `{"text":"hello"}`, &ai.DocumentRequest{}, ""},
		{"DocumentEmpty", `{"text":""}`, &ai.DocumentRequest{}, "text"},
		{"DocumentBadBoard", `{"text":"x","boardId":"a/b"}`, &ai.DocumentRequest{}, "boardId"},
		{"AnalyzeNoContent", `{"boardId":"b1","title":"x"}`, &ai.AnalyzeNoteRequest{}, "content"},
		{"RewriteNoInstruction", `{"boardId":"b1","content":"x"}`, &ai.RewriteNoteRequest{}, "instruction"},
		{"RewriteSelectionOnly", `{"boardId":"b1","selectedText":"x","instruction":"y"}`, &ai.RewriteNoteRequest{}, ""},
		{"TrackerStepOK", `{"boardId":"b1","mode":"generate_step","step":"story",` + items + `}`, &ai.TrackerGenerateRequest{}, ""},
		{"TrackerBadMode", `{"boardId":"b1","mode":"everything"}`, &ai.TrackerGenerateRequest{}, "mode"},
		{"TrackerBadStep", `{"boardId":"b1","mode":"generate_step","step":"saga"}`, &ai.TrackerGenerateRequest{}, "step"},
		{"TrackerChildrenNoParent", `{"boardId":"b1","mode":"generate_children",` + items + `}`, &ai.TrackerGenerateRequest{}, "parentId"},
		{"TrackerChildrenUnknownParent", `{"boardId":"b1","mode":"generate_children","parentId":"zz",` + items + `}`, &ai.TrackerGenerateRequest{}, "parentId"},
		{"TrackerRegenUnknown", `{"boardId":"b1","mode":"regenerate_items","itemIds":["e1","zz"],` + items + `}`, &ai.TrackerGenerateRequest{}, "itemIds[1]"},
		{"TrackerCount", `{"boardId":"b1","mode":"generate_step","step":"epic","count":21}`, &ai.TrackerGenerateRequest{}, "count"},
		{"TrackerItemNoID", `{"boardId":"b1","mode":"generate_step","step":"epic","items":[{"summary":"x"}]}`, &ai.TrackerGenerateRequest{}, "items[0].id"},
		{"TrackerAnalyzeEmpty", `{"boardId":"b1","item":{"id":"i1"}}`, &ai.TrackerAnalyzeRequest{}, "item.summary"},
		{"TrackerRewriteBadField", `{"boardId":"b1","item":{"id":"i1"},"field":"key","instruction":"x"}`, &ai.TrackerRewriteRequest{}, "field"},
		{"TrackerRewriteOK", `{"boardId":"b1","item":{"id":"i1","summary":"s"},"field":"summary","instruction":"x"}`, &ai.TrackerRewriteRequest{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(tt.body), tt.into); err != nil {
				t.Fatalf("decode: %v", err)
			}
			err := tt.into.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if be := wantCode(t, err, board.EINVALID); be.Field != tt.wantField {
				t.Errorf("field = %q (%s), want %q", be.Field, be.Message, tt.wantField)
			}
		})
	}
}

func TestPhaseJSON(t *testing.T) {
	tests := []struct {
		in, id, name string
	}{
		{`"Build"`, "Build", "Build"},
		{`{"id":"p2","name":"Discovery"}`, "p2", "Discovery"},
		{`{"id":3,"title":"Ship"}`, "3", "Ship"},
		{`null`, "", ""},
	}
	for _, tt := range tests {
		var p ai.Phase
		if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if p.ID != tt.id || p.Name != tt.name {
			t.Errorf("%s: got id=%q name=%q", tt.in, p.ID, p.Name)
		}
	}
}
