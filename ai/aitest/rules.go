package aitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// RuleFile is the JSON script of the corkboard-fakeollama command (and of
// Go tests that want the same answers): rules tried in order against each
// chat request, the first whose Match holds giving the reply. The format is
// documented in docs/ai.md ("The fake Ollama as a process").
type RuleFile struct {
	Rules []Rule `json:"rules"`
}

// Rule is one named rule of a RuleFile.
type Rule struct {
	Name  string    `json:"name"`
	Match Match     `json:"match"`
	Reply RuleReply `json:"reply"`
}

// Match says which chat requests a rule answers; every field set must hold,
// and a rule with no field set matches every request.
type Match struct {
	// System is a substring of the system prompt (all system messages).
	System string `json:"system,omitempty"`
	// User is a substring of the last message whose role is user.
	User string `json:"user,omitempty"`
	// Last is the role of the request's last message: "user" for a
	// conversation's new turn, "tool" after a tool result, "assistant".
	Last string `json:"last,omitempty"`
	// Tools, when set, is whether the request declares tools.
	Tools *bool `json:"tools,omitempty"`
	// Format, when set, is whether the request asks for structured output
	// (Ollama's format).
	Format *bool `json:"format,omitempty"`
}

// RuleReply is what a rule answers: a recorded transcript (File), or an
// answer built like Reply, or an HTTP error (Status and Error).
type RuleReply struct {
	// File is an NDJSON transcript replayed verbatim, relative to the
	// script's folder.
	File string `json:"file,omitempty"`

	Text     []string `json:"text,omitempty"`
	Thinking []string `json:"thinking,omitempty"`
	// JSON is encoded as the answer's only text chunk (the JSON
	// endpoints' structured outputs).
	JSON      json.RawMessage `json:"json,omitempty"`
	ToolCalls []struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	} `json:"toolCalls,omitempty"`
	DoneReason string `json:"doneReason,omitempty"`

	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// ErrorLine is sent as an {"error": …} line in place of the done line.
	ErrorLine string `json:"errorLine,omitempty"`
	// Cut ends the stream after the chunks, without a done line.
	Cut bool `json:"cut,omitempty"`
}

// LoadRules reads a RuleFile and returns the Script it describes. Every
// transcript is read and checked now, so a broken script fails at start and
// not in the middle of a test.
func LoadRules(path string) (Script, []Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("aitest: read rules: %w", err)
	}
	var f RuleFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("aitest: %s: %w", path, err)
	}
	if len(f.Rules) == 0 {
		return nil, nil, fmt.Errorf("aitest: %s: no rules", path)
	}
	replies := make([]Reply, len(f.Rules))
	for i, r := range f.Rules {
		if r.Name == "" {
			return nil, nil, fmt.Errorf("aitest: %s: rule %d has no name", path, i+1)
		}
		reply, err := r.Reply.build(filepath.Dir(path))
		if err != nil {
			return nil, nil, fmt.Errorf("aitest: %s: rule %q: %w", path, r.Name, err)
		}
		replies[i] = reply
	}
	script := func(c Call) Reply {
		for i, r := range f.Rules {
			if r.Match.matches(c) {
				return replies[i]
			}
		}
		return Reply{Status: http.StatusInternalServerError, Error: "aitest: no rule matches " + Describe(c)}
	}
	return script, f.Rules, nil
}

// RuleFor returns the name of the first rule matching c, or "".
func RuleFor(rules []Rule, c Call) string {
	for _, r := range rules {
		if r.Match.matches(c) {
			return r.Name
		}
	}
	return ""
}

func (r RuleReply) build(dir string) (Reply, error) {
	kinds := 0
	for _, set := range []bool{r.File != "", len(r.Text) > 0 || len(r.Thinking) > 0 || len(r.ToolCalls) > 0, len(r.JSON) > 0, r.Status != 0} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return Reply{}, fmt.Errorf("reply needs exactly one of file, text/thinking/toolCalls, json, status")
	}
	switch {
	case r.File != "":
		return ReadTranscript(filepath.Join(dir, r.File))
	case r.Status != 0:
		if r.Error == "" {
			return Reply{}, fmt.Errorf("status %d needs an error message", r.Status)
		}
		return Reply{Status: r.Status, Error: r.Error}, nil
	}
	out := Reply{Text: r.Text, Thinking: r.Thinking, DoneReason: r.DoneReason, ErrorLine: r.ErrorLine, Cut: r.Cut}
	if len(r.JSON) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.JSON); err != nil {
			return Reply{}, fmt.Errorf("json: %w", err)
		}
		out.Text = []string{buf.String()}
	}
	for _, tc := range r.ToolCalls {
		var args map[string]any
		if len(tc.Args) > 0 {
			if err := json.Unmarshal(tc.Args, &args); err != nil {
				return Reply{}, fmt.Errorf("tool call %s: args must be a JSON object: %w", tc.Name, err)
			}
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Name, Args: string(tc.Args)})
	}
	return out, nil
}

func (m Match) matches(c Call) bool {
	req := c.Request
	if m.System != "" && !strings.Contains(systemPrompt(c), m.System) {
		return false
	}
	if m.User != "" && !strings.Contains(lastUser(c), m.User) {
		return false
	}
	if m.Last != "" && (len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != m.Last) {
		return false
	}
	if m.Tools != nil && *m.Tools != (len(req.Tools) > 0) {
		return false
	}
	if m.Format != nil && *m.Format != hasFormat(req.Format) {
		return false
	}
	return true
}

func hasFormat(f json.RawMessage) bool {
	f = bytes.TrimSpace(f)
	return len(f) > 0 && !bytes.Equal(f, []byte("null")) && !bytes.Equal(f, []byte(`""`))
}

func systemPrompt(c Call) string {
	var b strings.Builder
	for _, m := range c.Request.Messages {
		if m.Role == "system" {
			b.WriteString(m.Content)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func lastUser(c Call) string {
	ms := c.Request.Messages
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role == "user" {
			return ms[i].Content
		}
	}
	return ""
}

// Describe names a chat request for an error message: the start of its
// system prompt and last user message, its last role, tools and format, so
// that a test failing on an unscripted request shows which one it was.
func Describe(c Call) string {
	last := ""
	if ms := c.Request.Messages; len(ms) > 0 {
		last = ms[len(ms)-1].Role
	}
	return fmt.Sprintf("chat request %d: system prompt %q, last user message %q, last role %q, %d tools, format %t",
		c.N, clipped(systemPrompt(c), 100), clipped(lastUser(c), 100), last, len(c.Request.Tools), hasFormat(c.Request.Format))
}

func clipped(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
