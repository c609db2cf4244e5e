// Package ai holds Corkboard's model-backed features: board chat and the
// phase-aware subagent, note authoring with an agentic loop, and the JSON
// endpoints that use Ollama structured outputs (front matter, document
// import, analysis, rewrites, tracker generation).
//
// The package talks to a local Ollama through github.com/ollama/ollama/api.
// It does not know about sessions, boards in storage, quotas, routing or
// wire formats: a streamed answer is a sequence of typed events (Event)
// handed to a Sink, which transport renders as an AI SDK UI message stream
// or as plain text, and which a WebSocket, a CLI or a test can consume as
// well. JSON endpoints return values. Errors are *board.Error values a
// caller maps to a status. docs/ai.md describes every request, event and
// response shape and the policies.
package ai

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"corkboard/aifeature"
	"corkboard/board"

	"github.com/google/uuid"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Feature names the model slot of one AI call; Config.Models may give each
// its own model. The names are aifeature's one list; billing's table says
// which of them may have a model of their own (the slash commands of
// note-ai run on aifeature.NoteAI's model; aifeature.Programmer is
// note-ai's code delegate), and billing.ParseModels checks a -models
// override against it at start-up.
type Feature = aifeature.Name

// Defaults used when Config leaves a field zero.
const (
	DefaultModel   = "qwen3:4b"
	DefaultTimeout = 2 * time.Minute
	// TrackerDeadline is the spec's maximum duration of tracker generation.
	TrackerDeadline = 60 * time.Second
	// dialTimeout bounds the TCP connect to Ollama so that an unreachable
	// host fails fast (503) instead of hanging until the request timeout.
	dialTimeout = 3 * time.Second
)

// DefaultOllamaURL returns OLLAMA_HOST interpreted the way the ollama CLI
// does, or http://127.0.0.1:11434. Meant for a flag default in main.
func DefaultOllamaURL() string {
	return envconfig.Host().String()
}

// Usage is what one call of a Service method cost: the number of model
// requests and the tokens Ollama reported for them.
type Usage struct {
	Feature      Feature
	Model        string
	Calls        int
	PromptTokens int
	OutputTokens int
	// Errors counts the model requests that failed: Ollama unreachable or
	// answering an error, a stream cut short, the timeout. A client that
	// went away is not the model's failure and is not counted.
	Errors int
}

// Config configures a Service.
type Config struct {
	// OllamaURL is the Ollama base URL; "" means DefaultOllamaURL().
	OllamaURL string
	// Model is the model for every feature without an override; "" means
	// DefaultModel. It must support tools for chat, subagent and note-ai.
	Model string
	// Models overrides the model per feature, e.g. a code model for
	// aifeature.Programmer. Its keys are not checked here: billing.ParseModels
	// refuses a feature that does not exist before a Service is built.
	Models map[Feature]string
	// Timeout bounds one AI request from start to end of the answer,
	// including every model step; 0 means DefaultTimeout. Tracker
	// generation is further bounded by TrackerDeadline.
	Timeout time.Duration
	// NumCtx, when positive, is sent as Ollama's num_ctx option (context
	// window in tokens). Ollama's own default is small; long documents need
	// more (docs/ai.md).
	NumCtx int
	// Logger receives warnings about model misbehaviour; nil means
	// slog.Default().
	Logger *slog.Logger
	// OnUsage, when set, is called once at the end of every Service method
	// that reached the model, with the ctx of that call (which carries
	// whatever the caller put in it, e.g. the user).
	OnUsage func(ctx context.Context, u Usage)
	// NewID returns a fresh unique string for the ids the server makes up:
	// an answer's message id and the id of a tool call the model sent
	// without one. nil means a random UUID; tests set a counter so that
	// whole answers can be compared byte for byte.
	NewID func() string
}

// Service runs the AI features against one Ollama. It is safe for
// concurrent use.
type Service struct {
	cfg    Config
	base   *url.URL
	client *api.Client
	log    *slog.Logger
	// trackerDeadline is TrackerDeadline; tests shorten it.
	trackerDeadline time.Duration
}

// New returns a Service for cfg. httpClient may be nil: the default client
// has a short dial timeout and no overall timeout, because answers stream
// for as long as Config.Timeout allows. New does not contact Ollama; call
// CheckModels for that.
func New(cfg Config, httpClient *http.Client) (*Service, error) {
	if cfg.OllamaURL == "" {
		cfg.OllamaURL = DefaultOllamaURL()
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	raw := cfg.OllamaURL
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	base, err := url.Parse(raw)
	if err != nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, fmt.Errorf("ai: invalid Ollama URL %q: want http://host:port", cfg.OllamaURL)
	}
	for f, m := range cfg.Models {
		if strings.TrimSpace(m) == "" {
			return nil, fmt.Errorf("ai: empty model override for feature %q", f)
		}
	}
	if httpClient == nil {
		httpClient = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: dialTimeout,
			MaxIdleConnsPerHost: 8,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	if err := loadAssets(); err != nil {
		return nil, err
	}
	return &Service{
		cfg:             cfg,
		base:            base,
		client:          api.NewClient(base, httpClient),
		log:             cfg.Logger,
		trackerDeadline: TrackerDeadline,
	}, nil
}

// Model returns the model used for feature f.
func (s *Service) Model(f Feature) string {
	if m := s.cfg.Models[f]; m != "" {
		return m
	}
	return s.cfg.Model
}

// CheckModels asks Ollama which models it has (GET /api/tags) and returns an
// EUNAVAILABLE *board.Error naming every configured model that is missing
// and the command that installs it, or naming why Ollama cannot be reached.
func (s *Service) CheckModels(ctx context.Context) error {
	ctx, cancel := withDeadline(ctx, 10*time.Second)
	defer cancel()
	list, err := s.client.List(ctx)
	if err != nil {
		return s.upstreamError(ctx, s.cfg.Model, err)
	}
	have := make(map[string]bool, 2*len(list.Models))
	for _, m := range list.Models {
		have[canonicalModel(m.Name)] = true
		have[canonicalModel(m.Model)] = true
	}
	var missing []string
	configured := []string{s.cfg.Model}
	for _, m := range s.cfg.Models {
		configured = append(configured, m)
	}
	slices.Sort(configured[1:]) // a stable message
	for _, m := range configured {
		if !have[canonicalModel(m)] && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		pulls := make([]string, len(missing))
		for i, m := range missing {
			pulls[i] = "ollama pull " + m
		}
		return board.Errorf(board.EUNAVAILABLE, "AI model unavailable: Ollama at %s has no model %s; install with: %s",
			s.base.Redacted(), strings.Join(quoteAll(missing), ", "), strings.Join(pulls, " && "))
	}
	return nil
}

// canonicalModel adds the implicit ":latest" tag, as Ollama does.
func canonicalModel(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return ""
	}
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		name += ":latest"
	}
	return name
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// errTimedOut is the cancel cause of a request's own deadline, to tell it
// apart from a client that went away.
type errTimedOut struct{ after time.Duration }

func (e errTimedOut) Error() string { return fmt.Sprintf("no answer within %s", e.after) }

// withDeadline bounds ctx by d and records why it ended.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errTimedOut{after: d})
}

// errStreamCut reports an NDJSON stream that ended without a done line; the
// ollama client returns nil then.
var errStreamCut = errors.New("the model's answer ended before it was complete")

// upstreamError turns what the ollama client or ctx returned into the
// error a handler maps: EUNAVAILABLE (503) when Ollama or the model cannot
// be used or did not answer in time, EUPSTREAM (502) when it answered
// badly, and the ctx error unchanged when the caller went away.
func (s *Service) upstreamError(ctx context.Context, model string, err error) error {
	if ctx.Err() != nil {
		var to errTimedOut
		if cause := context.Cause(ctx); errors.As(cause, &to) {
			return &board.Error{Code: board.EUNAVAILABLE, Message: "AI model unavailable: " + to.Error() + "."}
		}
		return fmt.Errorf("ai: request ended: %w", context.Cause(ctx))
	}
	var se api.StatusError
	var ae api.AuthorizationError
	var ue *url.Error
	switch {
	case errors.As(err, &se):
		msg := strings.TrimSpace(se.ErrorMessage)
		switch {
		case se.StatusCode == http.StatusNotFound:
			return board.Errorf(board.EUNAVAILABLE, "AI model unavailable: model %q is not installed in Ollama (run `ollama pull %s`).", model, model)
		case strings.Contains(msg, "does not support"):
			return board.Errorf(board.EUNAVAILABLE, "AI model unavailable: %s; configure a tool-capable model such as %s.", clip(msg, 200), DefaultModel)
		case se.StatusCode == http.StatusServiceUnavailable || se.StatusCode == http.StatusTooManyRequests:
			return board.Errorf(board.EUNAVAILABLE, "AI model unavailable: Ollama is busy (%s).", clip(msg, 200))
		default:
			return board.Errorf(board.EUPSTREAM, "AI model error: %s (HTTP %d).", clip(msg, 200), se.StatusCode)
		}
	case errors.As(err, &ae):
		return board.Errorf(board.EUNAVAILABLE, "AI model unavailable: Ollama refused the request (HTTP %d).", ae.StatusCode)
	case errors.As(err, &ue):
		// Transport failures: refused connection, DNS, dial timeout, reset.
		// The address is for the operator's log, not for clients.
		s.log.Warn("cannot reach Ollama", "ollama", s.base.Redacted(), "err", ue.Err)
		return board.Errorf(board.EUNAVAILABLE, "AI model unavailable: cannot reach Ollama.")
	case errors.Is(err, errStreamCut):
		return board.Errorf(board.EUPSTREAM, "AI model error: %s.", err.Error())
	default:
		// An {"error": …} line inside a 200 stream arrives as a plain error.
		return board.Errorf(board.EUPSTREAM, "AI model error: %s.", clip(strings.TrimSpace(err.Error()), 200))
	}
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// run accounts for one public method call: every model request it makes
// adds to its usage, reported once at the end.
type run struct {
	s       *Service
	feature Feature
	usage   Usage
}

func (s *Service) newRun(f Feature) *run {
	return &run{s: s, feature: f, usage: Usage{Feature: f, Model: s.Model(f)}}
}

// report hands the usage to Config.OnUsage when the model was reached.
func (r *run) report(ctx context.Context) {
	if r.s.cfg.OnUsage != nil && r.usage.Calls > 0 {
		r.s.cfg.OnUsage(context.WithoutCancel(ctx), r.usage)
	}
}

// call sends one chat request for feature f (the run's feature unless
// overridden by req.Model) and returns the whole answer: content and
// thinking concatenated, every tool call, and the metrics of the done line.
// onChunk, if set, sees every streamed line first; an error from it stops
// the stream and is returned as is.
func (r *run) call(ctx context.Context, f Feature, req *api.ChatRequest, onChunk func(api.ChatResponse) error) (api.ChatResponse, error) {
	s := r.s
	if f == "" {
		f = r.feature
	}
	req.Model = s.Model(f)
	if req.Think == nil {
		// Qwen3 and other thinking models think unless told not to; the
		// features here want the answer, fast.
		req.Think = &api.ThinkValue{Value: false}
	}
	if req.Options == nil {
		req.Options = map[string]any{}
	}
	if s.cfg.NumCtx > 0 {
		req.Options["num_ctx"] = s.cfg.NumCtx
	}
	var (
		content, thinking strings.Builder
		calls             []api.ToolCall
		last              api.ChatResponse
		sawDone           bool
		cbErr             error
	)
	r.usage.Calls++
	err := s.client.Chat(ctx, req, func(cr api.ChatResponse) error {
		content.WriteString(cr.Message.Content)
		thinking.WriteString(cr.Message.Thinking)
		calls = append(calls, cr.Message.ToolCalls...)
		last = cr
		if cr.Done {
			sawDone = true
			r.usage.PromptTokens += cr.PromptEvalCount
			r.usage.OutputTokens += cr.EvalCount
		}
		if onChunk != nil {
			if err := onChunk(cr); err != nil {
				cbErr = err
				return err
			}
		}
		return nil
	})
	if cbErr != nil {
		return api.ChatResponse{}, cbErr
	}
	if err == nil && ctx.Err() != nil {
		// The client stops reading without an error when its context ends.
		err = ctx.Err()
	}
	if err == nil && !sawDone {
		err = errStreamCut
	}
	if err != nil {
		err = s.upstreamError(ctx, req.Model, err)
		// A context that ended is the client leaving, unless it was the
		// timeout (which upstreamError makes EUNAVAILABLE).
		if ctx.Err() == nil || board.ErrorCode(err) == board.EUNAVAILABLE {
			r.usage.Errors++
		}
		return api.ChatResponse{}, err
	}
	last.Message.Content = content.String()
	last.Message.Thinking = thinking.String()
	last.Message.ToolCalls = calls
	last.Message.Role = "assistant"
	return last, nil
}
