package billing_test

import (
	"testing"

	"corkboard/billing"
)

func TestCost(t *testing.T) {
	tests := []struct {
		feature string
		want    int
	}{
		{billing.FeatureChat, 1},
		{billing.FeatureSubagent, 2},
		{billing.FeatureNoteAI, 2},
		{billing.FeatureNoteAICommand, 2},
		{billing.FeatureGenerateFrontmatter, 1},
		{billing.FeatureDocumentToNotes, 5},
		{billing.FeatureNotesAnalyze, 2},
		{billing.FeatureNotesRewrite, 1},
		{billing.FeatureTrackerGenerate, 3},
		{billing.FeatureTrackerAnalyze, 2},
		{billing.FeatureTrackerRewrite, 1},
		{"no-such-feature", 1}, // unknown features are metered, never free
		{"", 1},
	}
	for _, tt := range tests {
		t.Run(tt.feature, func(t *testing.T) {
			if got := billing.Cost(tt.feature); got != tt.want {
				t.Fatalf("Cost(%q)=%d, want %d", tt.feature, got, tt.want)
			}
		})
	}
}

func TestFeatures(t *testing.T) {
	features := billing.Features()
	if got, want := len(features), 11; got != want {
		t.Fatalf("len(Features())=%d, want %d (one per AI endpoint of the spec)", got, want)
	}
	seen := map[string]bool{}
	for _, f := range features {
		if seen[f] {
			t.Errorf("feature %q listed twice", f)
		}
		seen[f] = true
		if !billing.KnownFeature(f) {
			t.Errorf("KnownFeature(%q)=false: it has no row in the cost table", f)
		}
		if billing.Cost(f) < 1 {
			t.Errorf("Cost(%q)=%d, want at least 1", f, billing.Cost(f))
		}
	}
	if billing.KnownFeature("chat ") {
		t.Error(`KnownFeature("chat ")=true`)
	}
}
