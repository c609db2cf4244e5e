package billing_test

import (
	"strings"
	"testing"

	"corkboard/aifeature"
	"corkboard/billing"
	"corkboard/board"
)

func TestCost(t *testing.T) {
	tests := []struct {
		feature billing.Feature
		want    int
		wantErr string
	}{
		{aifeature.Chat, 1, ""},
		{aifeature.Subagent, 2, ""},
		{aifeature.NoteAI, 2, ""},
		{aifeature.NoteAICommand, 2, ""},
		{aifeature.GenerateFrontmatter, 1, ""},
		{aifeature.DocumentToNotes, 5, ""},
		{aifeature.NotesAnalyze, 2, ""},
		{aifeature.NotesRewrite, 1, ""},
		{aifeature.TrackerGenerate, 3, ""},
		{aifeature.TrackerAnalyze, 2, ""},
		{aifeature.TrackerRewrite, 1, ""},
		{aifeature.Programmer, 0, "not charged on its own"},
		{"poetry", 0, "Unknown AI feature"},
		{"chat ", 0, "Unknown AI feature"},
		{"", 0, "Unknown AI feature"},
	}
	for _, tt := range tests {
		t.Run(string(tt.feature), func(t *testing.T) {
			got, err := billing.Cost(tt.feature)
			if tt.wantErr != "" {
				if board.ErrorCode(err) != board.EINVALID || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Cost(%q) err=%v, want EINVALID %q", tt.feature, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Cost(%q): %v", tt.feature, err)
			}
			if got != tt.want {
				t.Fatalf("Cost(%q)=%d, want %d", tt.feature, got, tt.want)
			}
		})
	}
}

// TestFeatures checks the table itself: unique names, every endpoint
// charged, every model a feature runs on is a feature with its own model.
func TestFeatures(t *testing.T) {
	seen := map[billing.Feature]bool{}
	for _, f := range billing.Features() {
		if seen[f.Name] {
			t.Errorf("feature %q listed twice", f.Name)
		}
		seen[f.Name] = true
		if (f.Route != "") != (f.Cost > 0) {
			t.Errorf("%s: route %q with cost %d; an endpoint costs at least 1, a part costs 0", f.Name, f.Route, f.Cost)
		}
		m, ok := billing.LookupFeature(f.Model)
		if !ok || m.Model != m.Name {
			t.Errorf("%s runs on the model of %q, which is not a feature with its own model", f.Name, f.Model)
		}
	}
	if got, want := len(seen), 12; got != want {
		t.Fatalf("len(Features())=%d, want %d", got, want)
	}
	// The copy is the caller's.
	fs := billing.Features()
	fs[0].Cost = 99
	if c, _ := billing.Cost(fs[0].Name); c == 99 {
		t.Fatal("changing Features()'s result changed the table")
	}
}

func TestParseModels(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[billing.Feature]string
		wantErr string
	}{
		{"Empty", "", map[billing.Feature]string{}, ""},
		{"OK", " programmer=qwen2.5-coder:7b, document-to-notes = qwen3:8b ,", map[billing.Feature]string{
			aifeature.Programmer: "qwen2.5-coder:7b", aifeature.DocumentToNotes: "qwen3:8b",
		}, ""},
		{"ErrUnknownFeature", "poetry=x", nil, `unknown feature "poetry"`},
		{"ErrSharedModel", "note-ai-command=x", nil, "runs on the model of note-ai"},
		{"ErrNoModel", "chat=", nil, "<feature>=<model>"},
		{"ErrNoEquals", "chat", nil, "<feature>=<model>"},
		{"ErrTwice", "chat=a,chat=b", nil, "set twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := billing.ParseModels(tt.in)
			if tt.wantErr != "" {
				if board.ErrorCode(err) != board.EINVALID || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseModels(%q) err=%v, want EINVALID %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseModels(%q): %v", tt.in, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ParseModels(%q)=%v, want %v", tt.in, got, tt.want)
			}
			for f, m := range tt.want {
				if got[f] != m {
					t.Fatalf("ParseModels(%q)[%s]=%q, want %q", tt.in, f, got[f], m)
				}
			}
		})
	}
}
