package billing

import (
	"strings"

	"corkboard/aifeature"
	"corkboard/board"
)

// Feature names one AI feature: aifeature's list of names, which ai's
// model slots use too. Its string value is the name used in configuration
// (-models), usage records and logs.
type Feature = aifeature.Name

// FeatureSpec is one row of the feature table: what a call costs and which
// model it runs on.
type FeatureSpec struct {
	// Name is the feature's name.
	Name Feature
	// Route is the endpoint that runs the feature; "" for a part of
	// another feature that is no endpoint of its own.
	Route string
	// Cost is the credits one call is charged; 0 for a part of another
	// feature, which that feature's cost pays for.
	Cost int
	// Model is the feature whose -models override this one runs on: its
	// own name, or the feature it shares a model with.
	Model Feature
}

// features is the one table of AI features. A cost reflects the model work
// a call can cause: one short completion is 1, an agentic loop or a
// structured analysis is 2, a long generation is 3, a whole document is 5.
var features = []FeatureSpec{
	{aifeature.Chat, "POST /api/canvas/chat", 1, aifeature.Chat},
	{aifeature.Subagent, "POST /api/canvas/subagent", 2, aifeature.Subagent},
	{aifeature.NoteAI, "POST /api/canvas/note-ai", 2, aifeature.NoteAI},
	{aifeature.NoteAICommand, "POST /api/canvas/note-ai/{command}", 2, aifeature.NoteAI},
	{aifeature.Programmer, "", 0, aifeature.Programmer},
	{aifeature.GenerateFrontmatter, "POST /api/canvas/generate-frontmatter", 1, aifeature.GenerateFrontmatter},
	{aifeature.DocumentToNotes, "POST /api/canvas/document-to-notes", 5, aifeature.DocumentToNotes},
	{aifeature.NotesAnalyze, "POST /api/canvas/notes/analyze", 2, aifeature.NotesAnalyze},
	{aifeature.NotesRewrite, "POST /api/canvas/notes/rewrite", 1, aifeature.NotesRewrite}, // charged to the board owner
	{aifeature.TrackerGenerate, "POST /api/canvas/tracker/generate", 3, aifeature.TrackerGenerate},
	{aifeature.TrackerAnalyze, "POST /api/canvas/tracker/analyze", 2, aifeature.TrackerAnalyze},
	{aifeature.TrackerRewrite, "POST /api/canvas/tracker/rewrite", 1, aifeature.TrackerRewrite},
}

// Features returns the feature table, in the order of the spec's table of
// AI endpoints. The caller may change the copy it gets.
func Features() []FeatureSpec {
	return append([]FeatureSpec(nil), features...)
}

// LookupFeature returns the row of the feature called name.
func LookupFeature(name Feature) (FeatureSpec, bool) {
	for _, f := range features {
		if f.Name == name {
			return f, true
		}
	}
	return FeatureSpec{}, false
}

// Cost returns the credits one call of feature is charged, or EINVALID
// for a name that is not in the table or a feature that is not charged on
// its own: a misspelt feature must fail where it is wired, never run free
// or at a guessed price.
func Cost(feature Feature) (int, error) {
	f, ok := LookupFeature(feature)
	switch {
	case !ok:
		return 0, board.Errorf(board.EINVALID, "Unknown AI feature %q (features are %s).", feature, strings.Join(featureNames(func(FeatureSpec) bool { return true }), ", "))
	case f.Cost == 0:
		return 0, board.Errorf(board.EINVALID, "AI feature %q is not charged on its own: it runs inside another feature.", feature)
	}
	return f.Cost, nil
}

// ModelKeys returns the names a model override may be given for: the
// features that do not share another feature's model.
func ModelKeys() []Feature {
	var out []Feature
	for _, f := range features {
		if f.Model == f.Name {
			out = append(out, f.Name)
		}
	}
	return out
}

// ParseModels parses per-feature model overrides written as
// "feature=model,feature=model" (e.g. "programmer=qwen2.5-coder:7b"), the
// form a flag or an environment variable gives them in. Empty means none.
// An unknown feature, one that shares another feature's model, a missing
// model or a feature given twice is EINVALID naming the entry.
func ParseModels(s string) (map[Feature]string, error) {
	out := map[Feature]string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, model, ok := strings.Cut(item, "=")
		f, model := Feature(strings.TrimSpace(name)), strings.TrimSpace(model)
		if !ok || f == "" || model == "" {
			return nil, board.Errorf(board.EINVALID, "Model override %q must look like <feature>=<model>.", item)
		}
		spec, known := LookupFeature(f)
		switch {
		case !known:
			return nil, board.Errorf(board.EINVALID, "Model override %q: unknown feature %q (features with a model are %s).", item, f, strings.Join(featureNames(ownModel), ", "))
		case spec.Model != f:
			return nil, board.Errorf(board.EINVALID, "Model override %q: %s runs on the model of %s; override that.", item, f, spec.Model)
		}
		if _, dup := out[f]; dup {
			return nil, board.Errorf(board.EINVALID, "Model override %q: %s is set twice.", item, f)
		}
		out[f] = model
	}
	return out, nil
}

func ownModel(f FeatureSpec) bool { return f.Model == f.Name }

func featureNames(keep func(FeatureSpec) bool) []string {
	var out []string
	for _, f := range features {
		if keep(f) {
			out = append(out, string(f.Name))
		}
	}
	return out
}
