package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/ai"
	"corkboard/aifeature"
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
		{"OK", "programmer=qwen2.5-coder:7b,note-ai=qwen3:8b", map[ai.Feature]string{aifeature.Programmer: "qwen2.5-coder:7b", aifeature.NoteAI: "qwen3:8b"}, ""},
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
