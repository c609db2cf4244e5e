package ai

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"corkboard/aifeature"
	"corkboard/board"

	"github.com/ollama/ollama/api"
)

// Frontmatter is generate-frontmatter's answer: a one-paragraph description
// of the note and its relationships to other notes of the board.
type Frontmatter struct {
	Description   string         `json:"description"`
	Relationships []Relationship `json:"relationships"`
}

// Relationship links the note to another note. Type is one of relates_to,
// depends_on, blocks, part_of, duplicates; Title is filled in by the server
// from allNotes.
type Relationship struct {
	NoteID string `json:"noteId"`
	Title  string `json:"title"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// DocumentNotes is document-to-notes' answer: 1 to MaxDocumentNotes notes.
type DocumentNotes struct {
	Notes []DocumentNote `json:"notes"`
}

// DocumentNote is one note proposed from a document.
type DocumentNote struct {
	Title          string `json:"title"`
	Content        string `json:"content"`
	SuggestedColor string `json:"suggestedColor"`
	SuggestedType  string `json:"suggestedType"`
}

// Analysis is the answer of notes/analyze and tracker/analyze.
type Analysis struct {
	Suggestions []Advice `json:"suggestions"`
}

// Advice is one analysis suggestion. SectionText is an exact excerpt of the
// analysed text (or "" when the advice is about the whole text); each
// action is a one-click rewrite the client can send to the matching rewrite
// endpoint with selectedText = SectionText.
type Advice struct {
	SectionText string         `json:"sectionText"`
	Advice      string         `json:"advice"`
	Actions     []AdviceAction `json:"actions"`
}

// AdviceAction is a suggested fix: a button label and the instruction for
// the rewrite endpoint.
type AdviceAction struct {
	Label       string `json:"label"`
	Instruction string `json:"instruction"`
}

// Rewrite is the answer of notes/rewrite and tracker/rewrite: the new text
// of the selection when one was sent, else of the whole content or field.
type Rewrite struct {
	Rewritten string `json:"rewritten"`
}

// TrackerGeneration is tracker/generate's answer.
type TrackerGeneration struct {
	Items               []GeneratedItem `json:"items"`
	RecommendedNextStep NextStep        `json:"recommendedNextStep"`
}

// GeneratedItem is a proposed tracker item; the client gives it an id and
// key when the user accepts it. ParentID is an existing item's id or "";
// ReplacesID (regenerate_items) names the item it replaces.
type GeneratedItem struct {
	Type        string `json:"type"`
	Summary     string `json:"summary"`
	Description string `json:"description"`
	ParentID    string `json:"parentId"`
	ReplacesID  string `json:"replacesId,omitempty"`
}

// NextStep is what the model recommends generating next: Step is epic,
// story, task, or done.
type NextStep struct {
	Step   string `json:"step"`
	Reason string `json:"reason"`
}

// promptDoc builds a user message of labelled sections.
type promptDoc struct{ b strings.Builder }

func (d *promptDoc) section(name, body string) {
	body = strings.TrimSpace(body)
	if body == "" {
		return
	}
	if d.b.Len() > 0 {
		d.b.WriteString("\n\n")
	}
	fmt.Fprintf(&d.b, "## %s\n%s", name, body)
}

func (d *promptDoc) String() string { return d.b.String() }

// jsonCall runs one JSON endpoint: the system prompt file named like the
// feature, the user message, the schema, two attempts, and check. tracker
// caps the request at the tracker deadline.
func jsonCall[T any](ctx context.Context, s *Service, f Feature, schemaName, user string, tracker bool, check func(*T) error) (*T, error) {
	r := s.newRun(f)
	defer r.report(ctx)
	timeout := s.cfg.Timeout
	if tracker {
		timeout = min(timeout, s.trackerDeadline)
	}
	ctx, cancel := withDeadline(ctx, timeout)
	defer cancel()
	system, err := renderPrompt(string(f), nil)
	if err != nil {
		return nil, err
	}
	msgs := []api.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	v, err := structured(ctx, r, "", schemaName, msgs, structuredAttempts, check)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// GenerateFrontmatter describes a note and finds its relationships among
// req.AllNotes. Relationships naming an unknown note or the note itself are
// dropped.
func (s *Service) GenerateFrontmatter(ctx context.Context, req FrontmatterRequest) (*Frontmatter, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d promptDoc
	d.section("Note title", req.Title)
	d.section("Note content", clip(req.Content, 12000))
	titles := map[string]string{}
	var others strings.Builder
	for _, n := range req.AllNotes {
		if n.ID == req.NoteID || len(titles) == 200 {
			continue
		}
		titles[n.ID] = n.Title
		fmt.Fprintf(&others, "- id=%q title=%q %s\n", n.ID, clip(n.Title, 200), clip(strings.Join(strings.Fields(n.Content), " "), 160))
	}
	d.section("Other notes on the board", cmpOr(others.String(), "(none)"))
	return jsonCall(ctx, s, aifeature.GenerateFrontmatter, "frontmatter", d.String(), false, func(fm *Frontmatter) error {
		fm.Description = strings.TrimSpace(fm.Description)
		kept := fm.Relationships[:0]
		seen := map[string]bool{}
		for _, rel := range fm.Relationships {
			title, ok := titles[rel.NoteID]
			if !ok || seen[rel.NoteID] {
				continue
			}
			seen[rel.NoteID] = true
			rel.Title = title
			kept = append(kept, rel)
		}
		fm.Relationships = kept
		return nil
	})
}

// DocumentToNotes splits a document into 1 to MaxDocumentNotes notes. More
// are trimmed; none is a validation failure (the model is asked again).
func (s *Service) DocumentToNotes(ctx context.Context, req DocumentRequest) (*DocumentNotes, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d promptDoc
	d.section("File name", req.Filename)
	d.section("Document", req.Text)
	return jsonCall(ctx, s, aifeature.DocumentToNotes, "document-notes", d.String(), false, func(dn *DocumentNotes) error {
		if len(dn.Notes) > MaxDocumentNotes {
			dn.Notes = dn.Notes[:MaxDocumentNotes]
		}
		for i := range dn.Notes {
			dn.Notes[i].Title = cleanTitle(dn.Notes[i].Title)
			dn.Notes[i].Content = strings.TrimSpace(dn.Notes[i].Content)
		}
		return nil
	})
}

// NotesAnalyze suggests improvements to one note.
func (s *Service) NotesAnalyze(ctx context.Context, req AnalyzeNoteRequest) (*Analysis, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d promptDoc
	d.section("Focus", req.Focus)
	d.section("Note title", req.Title)
	d.section("Note content", req.Content)
	return analyze(ctx, s, aifeature.NotesAnalyze, d.String(), req.Content)
}

// TrackerAnalyze suggests improvements to one tracker work item.
func (s *Service) TrackerAnalyze(ctx context.Context, req TrackerAnalyzeRequest) (*Analysis, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d promptDoc
	d.section("Focus", req.Focus)
	if req.Parent != nil {
		d.section("Parent item", describeItem(*req.Parent, 2000))
	}
	d.section("Work item", describeItem(req.Item, board.MaxItemDescription))
	return analyze(ctx, s, aifeature.TrackerAnalyze, d.String(), req.Item.Summary+"\n"+req.Item.Description)
}

func analyze(ctx context.Context, s *Service, f Feature, user, source string) (*Analysis, error) {
	return jsonCall(ctx, s, f, "analysis", user, false, func(a *Analysis) error {
		for i := range a.Suggestions {
			a.Suggestions[i].SectionText = locate(source, a.Suggestions[i].SectionText)
		}
		return nil
	})
}

// locate returns the exact excerpt of source that excerpt quotes: itself
// when it occurs verbatim, else the passage that matches it ignoring case
// and white space, else "" (the advice then applies to the whole text).
// Small models often re-space or re-case what they quote.
func locate(source, excerpt string) string {
	excerpt = strings.TrimSpace(excerpt)
	if excerpt == "" || strings.Contains(source, excerpt) {
		return excerpt
	}
	words := strings.Fields(excerpt)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	re, err := regexp.Compile(`(?i)` + strings.Join(words, `\s+`))
	if err != nil {
		return ""
	}
	return re.FindString(source)
}

// NotesRewrite rewrites a note's content, or the selected text in it,
// following req.Instruction.
func (s *Service) NotesRewrite(ctx context.Context, req RewriteNoteRequest) (*Rewrite, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d promptDoc
	d.section("Instruction", req.Instruction)
	d.section("Note title", req.Title)
	if req.SelectedText != "" {
		d.section("Note content (context only)", clip(req.Content, 12000))
		d.section("Text to rewrite", req.SelectedText)
	} else {
		d.section("Text to rewrite", req.Content)
	}
	return rewrite(ctx, s, aifeature.NotesRewrite, d.String(), false)
}

// TrackerRewrite rewrites a work item's summary or description, or the
// selected text in it. A rewritten summary is one line.
func (s *Service) TrackerRewrite(ctx context.Context, req TrackerRewriteRequest) (*Rewrite, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d promptDoc
	d.section("Instruction", req.Instruction)
	d.section("Work item", describeItem(req.Item, 12000))
	d.section("Field", req.Field)
	d.section("Text to rewrite", cmpOr(req.SelectedText, req.fieldText(), "(empty)"))
	return rewrite(ctx, s, aifeature.TrackerRewrite, d.String(), req.Field == "summary" && req.SelectedText == "")
}

func rewrite(ctx context.Context, s *Service, f Feature, user string, oneLine bool) (*Rewrite, error) {
	return jsonCall(ctx, s, f, "rewrite", user, false, func(rw *Rewrite) error {
		rw.Rewritten = strings.TrimSpace(rw.Rewritten)
		if oneLine {
			rw.Rewritten = clip(strings.Join(strings.Fields(rw.Rewritten), " "), board.MaxItemSummaryLen)
		}
		if rw.Rewritten == "" {
			return fmt.Errorf("at /rewritten: the rewritten text is empty")
		}
		return nil
	})
}

func describeItem(it board.TrackerItem, maxDesc int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "id=%q key=%q type=%q", it.ID, it.Key, it.Type)
	if it.ParentID != "" {
		fmt.Fprintf(&b, " parentId=%q", it.ParentID)
	}
	if it.Status != "" {
		fmt.Fprintf(&b, " status=%q", it.Status)
	}
	fmt.Fprintf(&b, "\nSummary: %s", it.Summary)
	if d := strings.TrimSpace(it.Description); d != "" {
		fmt.Fprintf(&b, "\nDescription:\n%s", clip(d, maxDesc))
	}
	return b.String()
}

// childType is the type of the items one level below t.
func childType(t string) string {
	switch strings.ToLower(t) {
	case "epic":
		return "story"
	default:
		return "task"
	}
}

// TrackerGenerate proposes tracker items in one of three modes (see
// TrackerGenerateRequest) within TrackerDeadline. Types and parents are set
// by the server where the mode decides them; parent and replaced IDs the
// model invents are cleared.
func (s *Service) TrackerGenerate(ctx context.Context, req TrackerGenerateRequest) (*TrackerGeneration, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	byID := make(map[string]board.TrackerItem, len(req.Items))
	for _, it := range req.Items {
		byID[it.ID] = it
	}
	return jsonCall(ctx, s, aifeature.TrackerGenerate, "tracker-generation", trackerPrompt(req, byID), true, func(g *TrackerGeneration) error {
		tidyGeneration(req, byID, g)
		return nil
	})
}

// trackerPrompt is the prompt of a TrackerGenerate request: the board's
// context, notes and items (clipped), then the task its mode asks for.
func trackerPrompt(req TrackerGenerateRequest, byID map[string]board.TrackerItem) string {
	var items strings.Builder
	for i, it := range req.Items {
		if i < 300 {
			fmt.Fprintf(&items, "- id=%q key=%q type=%q parentId=%q summary=%q\n", it.ID, it.Key, it.Type, it.ParentID, clip(it.Summary, 200))
		}
	}
	var notes strings.Builder
	for i, n := range req.Notes {
		if i == 100 {
			break
		}
		fmt.Fprintf(&notes, "### %s\n%s\n", clip(n.Title, 200), clip(n.Content, 800))
	}
	var d promptDoc
	d.section("Project context", req.Context)
	d.section("Board notes", notes.String())
	d.section("Existing tracker items", cmpOr(items.String(), "(none)"))
	switch req.Mode {
	case ModeGenerateStep:
		d.section("Task", fmt.Sprintf("Generate new items of type %q. For each, set parentId to the id of the existing item it belongs under, or \"\" if none fits.", req.Step))
	case ModeGenerateChildren:
		p := byID[req.ParentID]
		d.section("Task", fmt.Sprintf("Break this item down into items of type %q:\n%s", childType(p.Type), describeItem(p, 4000)))
	case ModeRegenerateItems:
		var b strings.Builder
		for _, id := range req.ItemIDs {
			fmt.Fprintf(&b, "%s\n\n", describeItem(byID[id], 2000))
		}
		d.section("Task", "Write a better replacement for each of these items and set replacesId to the id of the item it replaces:\n"+b.String())
	}
	if req.Count > 0 {
		d.section("Number of items", fmt.Sprintf("Aim for %d items.", req.Count))
	}
	d.section("User instruction", req.Instruction)
	return d.String()
}

// tidyGeneration bounds what the model proposed and overrides what the
// request's mode decides: the count, clean summaries, types and parents,
// and no reference to an item the request did not name.
func tidyGeneration(req TrackerGenerateRequest, byID map[string]board.TrackerItem, g *TrackerGeneration) {
	limit := MaxGeneratedItems
	if req.Count > 0 {
		limit = req.Count
	}
	if len(g.Items) > limit {
		g.Items = g.Items[:limit]
	}
	replace := map[string]bool{}
	for _, id := range req.ItemIDs {
		replace[id] = true
	}
	for i := range g.Items {
		it := &g.Items[i]
		it.Summary = clip(strings.Join(strings.Fields(it.Summary), " "), board.MaxItemSummaryLen)
		it.Description = strings.TrimSpace(it.Description)
		if _, ok := byID[it.ParentID]; !ok {
			it.ParentID = ""
		}
		if !replace[it.ReplacesID] {
			it.ReplacesID = ""
		}
		switch req.Mode {
		case ModeGenerateStep:
			it.Type, it.ReplacesID = req.Step, ""
		case ModeGenerateChildren:
			it.Type, it.ParentID, it.ReplacesID = childType(byID[req.ParentID].Type), req.ParentID, ""
		case ModeRegenerateItems:
			if old, ok := byID[it.ReplacesID]; ok {
				it.Type, it.ParentID = cmpOr(old.Type, it.Type), old.ParentID
			}
		}
	}
	if !slices.Contains(append(TrackerSteps(), "done"), g.RecommendedNextStep.Step) {
		g.RecommendedNextStep.Step = "done"
	}
}
