// Package aifeature names the AI features: the one list of names that ai
// (a model slot per feature) and billing (the feature table: what a call
// costs, which model it runs on) both use, so that neither adapter imports
// the other and no test has to keep two lists equal. A name is what
// configuration (-models), usage records and logs say.
package aifeature

// Name names one AI feature.
type Name string

// The AI features, in the order of the spec's table of AI endpoints.
// NoteAICommand (note-ai's slash commands) runs on NoteAI's model;
// Programmer is no endpoint: note-ai delegates code questions to it, and it
// may run on a model of its own.
const (
	Chat                Name = "chat"
	Subagent            Name = "subagent"
	NoteAI              Name = "note-ai"
	NoteAICommand       Name = "note-ai-command"
	Programmer          Name = "programmer"
	GenerateFrontmatter Name = "generate-frontmatter"
	DocumentToNotes     Name = "document-to-notes"
	NotesAnalyze        Name = "notes-analyze"
	NotesRewrite        Name = "notes-rewrite"
	TrackerGenerate     Name = "tracker-generate"
	TrackerAnalyze      Name = "tracker-analyze"
	TrackerRewrite      Name = "tracker-rewrite"
)
