package ai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
)

// checkedCall is a model's tool call after validation. Input is the JSON
// the client receives: the repaired arguments when they are valid, the
// arguments as the model sent them when they are not (then ErrorText says
// why).
type checkedCall struct {
	ID        string
	Name      string
	Input     json.RawMessage
	Args      map[string]any
	ErrorText string
}

// turnChecker checks the tool calls of one answer in order. It knows the
// board's notes, and what connectNotes may join: the board's notes and
// frames, and the notes createNote made earlier in the answer under a
// ref (the client gives those notes their IDs, and maps the refs of the
// answer's connectNotes calls to them).
type turnChecker struct {
	notes, ends map[string]bool
	newID       func() string
}

func newTurnChecker(st BoardState, newID func() string) *turnChecker {
	t := &turnChecker{notes: make(map[string]bool, len(st.Notes)), ends: make(map[string]bool, len(st.Notes)+len(st.Frames)), newID: newID}
	for _, n := range st.Notes {
		t.notes[n.ID], t.ends[n.ID] = true, true
	}
	for _, f := range st.Frames {
		t.ends[f.ID] = true
	}
	return t
}

// check validates one call of the answer (checkToolCall), then what only
// the answer so far can tell: a connectNotes between two things the board
// or the answer has, and not from one to itself.
func (t *turnChecker) check(tc api.ToolCall) checkedCall {
	c := checkToolCall(tc, boardToolNames, t.notes, t.newID)
	if c.ErrorText != "" {
		return c
	}
	switch c.Name {
	case "createNote":
		if ref, _ := c.Args["ref"].(string); ref != "" {
			t.ends[ref] = true
		}
	case "connectNotes":
		from, _ := c.Args["from"].(string)
		to, _ := c.Args["to"].(string)
		for _, end := range []string{from, to} {
			if !t.ends[end] {
				c.ErrorText = fmt.Sprintf("Invalid input for tool connectNotes: %q is neither a note on the board nor the ref of a note created earlier in this answer.", end)
				return c
			}
		}
		if from == to {
			c.ErrorText = "Invalid input for tool connectNotes: from and to must be two different notes."
		}
	}
	return c
}

// noteIDTools are the board tools whose "id" must name a note on the board.
var noteIDTools = []string{"updateNote", "deleteNote", "expandNote"}

// checkToolCall validates one tool call against the schema of the named
// tool, after a light repair that small models need: arguments the schema
// does not know are dropped, and so is an optional enum argument (a colour,
// a type) with a value outside the enum. knownNotes, when not nil, is the
// set of note IDs on the board. newID names a call the model left
// without an id.
func checkToolCall(tc api.ToolCall, allowed []string, knownNotes map[string]bool, newID func() string) checkedCall {
	c := checkedCall{ID: tc.ID, Name: tc.Function.Name}
	if c.ID == "" {
		c.ID = "call_" + strings.ReplaceAll(newID(), "-", "")
	}
	args := tc.Function.Arguments.ToMap()
	if args == nil {
		args = map[string]any{}
	}
	original, err := json.Marshal(args)
	if err != nil {
		original = []byte("{}")
	}
	c.Input = original
	def := mustAssets().tools[c.Name]
	if def == nil || !slices.Contains(allowed, c.Name) {
		c.ErrorText = fmt.Sprintf("Unknown tool %q; the available tools are %s.", c.Name, strings.Join(allowed, ", "))
		return c
	}
	repaired := make(map[string]any, len(args))
	for k, v := range args {
		spec, known := def.params.props[k]
		if !known {
			continue
		}
		if len(spec.Enum) > 0 && !slices.Contains(def.params.required, k) && !slices.ContainsFunc(spec.Enum, func(e any) bool { return e == v }) {
			continue
		}
		repaired[k] = v
	}
	input, err := json.Marshal(repaired)
	if err != nil {
		c.ErrorText = fmt.Sprintf("Invalid input for tool %s: %v.", c.Name, err)
		return c
	}
	if err := def.params.validate(input); err != nil {
		c.ErrorText = fmt.Sprintf("Invalid input for tool %s: %v.", c.Name, err)
		return c
	}
	if knownNotes != nil && slices.Contains(noteIDTools, c.Name) {
		if id, _ := repaired["id"].(string); !knownNotes[id] {
			c.ErrorText = fmt.Sprintf("Invalid input for tool %s: there is no note with id %q on the board.", c.Name, id)
			return c
		}
	}
	c.Input, c.Args = input, repaired
	return c
}
