package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/billing"
)

// TestModelsFlag checks that -models is parsed against billing's feature
// table and that an unknown feature stops the server before it opens
// anything.
func TestModelsFlag(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[ai.Feature]string
		wantErr string
	}{
		{"Empty", "", map[ai.Feature]string{}, ""},
		{"OK", "programmer=qwen2.5-coder:7b,note-ai=qwen3:8b", map[ai.Feature]string{ai.FeatureProgrammer: "qwen2.5-coder:7b", ai.FeatureNoteAI: "qwen3:8b"}, ""},
		{"ErrUnknown", "poetry=qwen3:8b", nil, `-models: Model override "poetry=qwen3:8b": unknown feature "poetry"`},
		{"ErrShared", "note-ai-command=qwen3:8b", nil, "runs on the model of note-ai"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildModels(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("buildModels(%q) err=%v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("buildModels(%q): %v", tt.in, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("buildModels(%q)=%v, want %v", tt.in, got, tt.want)
			}
			for f, m := range tt.want {
				if got[f] != m {
					t.Fatalf("buildModels(%q)[%s]=%q, want %q", tt.in, f, got[f], m)
				}
			}
		})
	}

	t.Run("ErrAtStartUp", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", data, "-models", "poetry=qwen3:8b"}, func(string) string { return "" }, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), `unknown feature "poetry"`) {
			t.Fatalf("run err=%v, want the unknown feature named", err)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("data folder created before the configuration was checked (stat err=%v)", err)
		}
	})
}

// TestAIFeaturesAreInTheTable checks ai's model slots against billing's one
// table of features: every name ai reads a model for is a feature that may
// have its own model, and every such feature is one ai reads.
func TestAIFeaturesAreInTheTable(t *testing.T) {
	slots := []ai.Feature{
		ai.FeatureChat, ai.FeatureSubagent, ai.FeatureNoteAI, ai.FeatureProgrammer,
		ai.FeatureFrontmatter, ai.FeatureDocumentToNotes, ai.FeatureNotesAnalyze,
		ai.FeatureNotesRewrite, ai.FeatureTrackerGenerate, ai.FeatureTrackerAnalyze,
		ai.FeatureTrackerRewrite,
	}
	keys := map[billing.Feature]bool{}
	for _, k := range billing.ModelKeys() {
		keys[k] = true
	}
	for _, s := range slots {
		if !keys[billing.Feature(s)] {
			t.Errorf("ai reads a model for %q, which billing's table does not list as a feature with its own model", s)
		}
		delete(keys, billing.Feature(s))
	}
	for k := range keys {
		t.Errorf("billing lists %q as a feature with its own model, but ai has no such model slot", k)
	}
}
