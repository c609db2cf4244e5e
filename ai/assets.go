package ai

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Prompts, writing guides and JSON schemas ship inside the binary so that a
// deployment cannot run with a prompt that does not match its code.
var (
	//go:embed prompts/*.md
	promptFS embed.FS
	//go:embed skills/*.md
	skillFS embed.FS
	//go:embed schemas/*.json schemas/tools/*.json
	schemaFS embed.FS
)

// Tool sets, in the order they are declared to the model.
var (
	boardToolNames = []string{"createNote", "updateNote", "deleteNote", "expandNote", "summarizeBoard", "createPlaceholderNote", "connectNotes"}
	noteToolNames  = []string{"searchNotes", "readNote", "loadSkill", "delegateToProgrammer"}
)

// schema is one compiled JSON schema plus what repair needs to know about
// its top-level properties.
type schema struct {
	name     string
	raw      json.RawMessage
	compiled *jsonschema.Schema
	props    map[string]propSpec
	required []string
}

type propSpec struct {
	Enum []any `json:"enum"`
}

// toolDef is a tool as declared to Ollama and the schema its arguments are
// checked against.
type toolDef struct {
	tool   api.Tool
	params *schema
}

type assetSet struct {
	prompts *template.Template
	skills  map[string]string
	tools   map[string]*toolDef
	schemas map[string]*schema
}

var assetsOnce = sync.OnceValues(parseAssets)

// loadAssets parses every embedded asset once; New fails if one is broken.
func loadAssets() error {
	_, err := assetsOnce()
	return err
}

// mustAssets returns the parsed assets; New has already checked them.
func mustAssets() *assetSet {
	a, err := assetsOnce()
	if err != nil {
		panic(err)
	}
	return a
}

func parseAssets() (*assetSet, error) {
	a := &assetSet{skills: map[string]string{}, tools: map[string]*toolDef{}, schemas: map[string]*schema{}}
	t, err := template.New("prompts").Option("missingkey=error").ParseFS(promptFS, "prompts/*.md")
	if err != nil {
		return nil, fmt.Errorf("ai: parse prompts: %w", err)
	}
	a.prompts = t
	skills, _ := fs.Glob(skillFS, "skills/*.md")
	for _, p := range skills {
		b, err := skillFS.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("ai: read skill: %w", err)
		}
		a.skills[strings.TrimSuffix(path.Base(p), ".md")] = string(b)
	}
	outputs, _ := fs.Glob(schemaFS, "schemas/*.json")
	for _, p := range outputs {
		b, _ := schemaFS.ReadFile(p)
		sch, err := compileSchema(strings.TrimSuffix(path.Base(p), ".json"), b)
		if err != nil {
			return nil, err
		}
		a.schemas[sch.name] = sch
	}
	tools, _ := fs.Glob(schemaFS, "schemas/tools/*.json")
	for _, p := range tools {
		b, _ := schemaFS.ReadFile(p)
		var def toolDef
		if err := json.Unmarshal(b, &def.tool); err != nil {
			return nil, fmt.Errorf("ai: tool %s: %w", p, err)
		}
		var wrapper struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(b, &wrapper); err != nil {
			return nil, fmt.Errorf("ai: tool %s: %w", p, err)
		}
		name := def.tool.Function.Name
		if name+".json" != path.Base(p) {
			return nil, fmt.Errorf("ai: tool file %s declares %q", p, name)
		}
		if def.params, err = compileSchema("tool-"+name, wrapper.Function.Parameters); err != nil {
			return nil, err
		}
		a.tools[name] = &def
	}
	for _, n := range slices.Concat(boardToolNames, noteToolNames) {
		if a.tools[n] == nil {
			return nil, fmt.Errorf("ai: tool %s has no schema file", n)
		}
	}
	// loadSkill's enum is what the model may ask for: every guide, no more.
	var names []string
	for _, v := range a.tools["loadSkill"].params.props["name"].Enum {
		names = append(names, fmt.Sprint(v))
	}
	slices.Sort(names)
	if files := slices.Sorted(maps.Keys(a.skills)); !slices.Equal(names, files) {
		return nil, fmt.Errorf("ai: loadSkill enum %v does not match the skill files %v", names, files)
	}
	for _, c := range Commands() {
		if a.prompts.Lookup(commandPrompt(c)) == nil {
			return nil, fmt.Errorf("ai: command %s has no prompt", c)
		}
		if _, ok := a.skills[commandSkill(c)]; !ok {
			return nil, fmt.Errorf("ai: command %s has no skill", c)
		}
	}
	return a, nil
}

func compileSchema(name string, raw []byte) (*schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("ai: schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	loc := "mem:///" + name + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("ai: schema %s: %w", name, err)
	}
	compiled, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("ai: schema %s: %w", name, err)
	}
	var top struct {
		Properties map[string]propSpec `json:"properties"`
		Required   []string            `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("ai: schema %s: %w", name, err)
	}
	return &schema{name: name, raw: json.RawMessage(raw), compiled: compiled, props: top.Properties, required: top.Required}, nil
}

// validate checks one JSON document against s; the error message lists the
// failing places in words a model (or a person) can act on.
func (s *schema) validate(data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if err := s.compiled.Validate(inst); err != nil {
		return errors.New(describeValidation(err))
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// describeValidation flattens a jsonschema error to its leaves, e.g.
// "at /title: got number, want string".
func describeValidation(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", where, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 5 {
		leaves = append(leaves[:5], fmt.Sprintf("and %d more", len(leaves)-5))
	}
	return strings.Join(leaves, "; ")
}

// renderPrompt executes the prompt file name (without ".md") with data.
func renderPrompt(name string, data any) (string, error) {
	var b strings.Builder
	if err := mustAssets().prompts.ExecuteTemplate(&b, name+".md", data); err != nil {
		return "", fmt.Errorf("ai: render prompt %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// Skills returns the names of the writing guides the loadSkill tool can
// load, sorted.
func Skills() []string {
	names := make([]string, 0, len(mustAssets().skills))
	for n := range mustAssets().skills {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func toolsFor(names []string) api.Tools {
	a := mustAssets()
	out := make(api.Tools, len(names))
	for i, n := range names {
		out[i] = a.tools[n].tool
	}
	return out
}
