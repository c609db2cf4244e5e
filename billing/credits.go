package billing

// AI feature names, one per AI endpoint. They key the credit cost table and
// name the feature in usage records and logs.
const (
	FeatureChat                = "chat"                 // POST /api/canvas/chat
	FeatureSubagent            = "subagent"             // POST /api/canvas/subagent
	FeatureNoteAI              = "note-ai"              // POST /api/canvas/note-ai
	FeatureNoteAICommand       = "note-ai-command"      // POST /api/canvas/note-ai/{command}
	FeatureGenerateFrontmatter = "generate-frontmatter" // POST /api/canvas/generate-frontmatter
	FeatureDocumentToNotes     = "document-to-notes"    // POST /api/canvas/document-to-notes
	FeatureNotesAnalyze        = "notes-analyze"        // POST /api/canvas/notes/analyze
	FeatureNotesRewrite        = "notes-rewrite"        // POST /api/canvas/notes/rewrite (charged to the board owner)
	FeatureTrackerGenerate     = "tracker-generate"     // POST /api/canvas/tracker/generate
	FeatureTrackerAnalyze      = "tracker-analyze"      // POST /api/canvas/tracker/analyze
	FeatureTrackerRewrite      = "tracker-rewrite"      // POST /api/canvas/tracker/rewrite
)

// costs is the one table of credit costs. A cost reflects the model work a
// call can cause: one short completion is 1, an agentic loop or a structured
// analysis is 2, a long generation is 3, a whole document is 5.
var costs = map[string]int{
	FeatureChat:                1,
	FeatureSubagent:            2,
	FeatureNoteAI:              2,
	FeatureNoteAICommand:       2,
	FeatureGenerateFrontmatter: 1,
	FeatureDocumentToNotes:     5,
	FeatureNotesAnalyze:        2,
	FeatureNotesRewrite:        1,
	FeatureTrackerGenerate:     3,
	FeatureTrackerAnalyze:      2,
	FeatureTrackerRewrite:      1,
}

// Features returns every AI feature name, in the order of the spec's table of
// AI endpoints.
func Features() []string {
	return []string{
		FeatureChat, FeatureSubagent, FeatureNoteAI, FeatureNoteAICommand,
		FeatureGenerateFrontmatter, FeatureDocumentToNotes, FeatureNotesAnalyze,
		FeatureNotesRewrite, FeatureTrackerGenerate, FeatureTrackerAnalyze,
		FeatureTrackerRewrite,
	}
}

// KnownFeature reports whether name is one of the AI feature names.
func KnownFeature(name string) bool {
	_, ok := costs[name]
	return ok
}

// Cost returns the credits one call of feature costs. An unknown feature
// costs 1, so that an endpoint wired with a misspelt name is still metered
// rather than free.
func Cost(feature string) int {
	if c, ok := costs[feature]; ok {
		return c
	}
	return 1
}
