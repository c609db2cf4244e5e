// Package aihttp is the AI routes under /api/canvas (docs/ai.md, "HTTP
// routes"): the credits gate in front of each (rendering
// billing.Meter.Admit's decision, refunding a call that failed), the
// decoding, validation and board guard of their bodies, and the two wire
// formats the answers stream in: the AI SDK UI message stream over SSE
// (aistream_ui.go) and plain text (aistream_text.go). transport mounts
// them inside its session group.
package aihttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"corkboard/access"
	"corkboard/ai"
	"corkboard/aifeature"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/transport/jsondec"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// Body limits of the AI routes (docs/ai.md, "HTTP routes"). JSON may escape
// every character as \uXXXX, and a character outside the BMP as two of
// them: 12 bytes for one code point. The limits below admit the largest
// valid request of each route written that way.
const (
	// limitAIBoardBody is for requests that carry the board as context
	// (chat and subagent boardState, note-ai allNotes, tracker items):
	// boards are sent as the client holds them and only a budget of them
	// reaches the model, so the limit is about memory, not validity.
	limitAIBoardBody = 8 << 20
	// limitAIDocumentBody admits document-to-notes' 100,000 characters at
	// 12 bytes each (1.2 MB) plus the file name.
	limitAIDocumentBody = 2 << 20
	// limitAIItemBody admits the other single-note and single-item
	// requests (at most about 73,000 characters, 0.9 MB escaped).
	limitAIItemBody = 2 << 20
	// limitAIRewriteBody is notes/rewrite's: the gate already read the body
	// to find the board owner, within this same limit (the largest valid
	// rewrite, 71,000 characters, is 0.85 MB escaped).
	limitAIRewriteBody = limitPayerPeek
)

// aiWriteTimeout bounds each write of an AI answer: a client that does not
// take a chunk within it is gone. It replaces the server's WriteTimeout,
// which counts from the request's start and would cut a long generation.
const aiWriteTimeout = 30 * time.Second

// Guard is the board guard (access.Service): member or not, edit or view.
type Guard interface {
	Guard(ctx context.Context, boardID, email string) (access.Access, error)
}

// Deps are what the AI routes call.
type Deps struct {
	Log *slog.Logger
	// AI runs the model-backed features; nil makes every route answer 503.
	AI *ai.Service
	// Credits is the gate's decision on credits (billing.Meter).
	Credits CreditGate
	Guard   Guard
}

// Routes serves the AI routes. Build it with New.
type Routes struct {
	log     *slog.Logger
	ai      *ai.Service
	credits CreditGate
	guard   Guard
}

// New builds the AI routes.
func New(deps Deps) *Routes {
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	return &Routes{log: deps.Log, ai: deps.AI, credits: deps.Credits, guard: deps.Guard}
}

// writeError answers err as JSON with its status (respond.Error).
func (s *Routes) writeError(w http.ResponseWriter, r *http.Request, err error) {
	respond.Error(s.log, w, r, err)
}

// Register adds the AI endpoints under /api/canvas. Every route
// checks, in order: the session (the group's), that an AI service is
// configured (else 503), the rate limit and monthly credits (aiGate), then
// in the handler the body, the request's own validation, the board guard
// for the boardId it names, and finally the model call.
func (s *Routes) Register(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(s.requireAI)
		gated := func(feature billing.Feature, payer payerFunc) chi.Router {
			return r.With(s.aiGate(feature, payer), aiWriteDeadlines)
		}
		// edits marks the features whose result is an edit of the board
		// (rewritten text, generated notes and items): an invitee who may
		// only view the board gets 403 for them (docs/billing.md).
		edits := func(feature billing.Feature, payer payerFunc) chi.Router {
			return r.With(aiMakesEdits, s.aiGate(feature, payer), aiWriteDeadlines)
		}
		// POST /api/canvas/chat: UI message stream (SSE).
		gated(aifeature.Chat, nil).Post("/canvas/chat", s.handleChat)
		// POST /api/canvas/subagent: UI message stream (SSE).
		gated(aifeature.Subagent, nil).Post("/canvas/subagent", s.handleSubagent)
		// POST /api/canvas/note-ai: plain text stream.
		edits(aifeature.NoteAI, nil).Post("/canvas/note-ai", s.handleNoteAI)
		// POST /api/canvas/note-ai/{command}: plain text stream. An unknown
		// command is refused before the gate: it costs no credit and no
		// rate-limit token.
		r.With(requireKnownCommand, aiMakesEdits, s.aiGate(aifeature.NoteAICommand, nil), aiWriteDeadlines).
			Post("/canvas/note-ai/{command}", s.handleNoteCommand)
		// POST /api/canvas/generate-frontmatter
		edits(aifeature.GenerateFrontmatter, nil).Post("/canvas/generate-frontmatter", s.handleGenerateFrontmatter)
		// POST /api/canvas/document-to-notes
		edits(aifeature.DocumentToNotes, nil).Post("/canvas/document-to-notes", s.handleDocumentToNotes)
		// POST /api/canvas/notes/analyze
		gated(aifeature.NotesAnalyze, nil).Post("/canvas/notes/analyze", s.handleNotesAnalyze)
		// POST /api/canvas/notes/rewrite: charged to the board's owner.
		edits(aifeature.NotesRewrite, s.boardOwnerPays).Post("/canvas/notes/rewrite", s.handleNotesRewrite)
		// POST /api/canvas/tracker/generate
		edits(aifeature.TrackerGenerate, nil).Post("/canvas/tracker/generate", s.handleTrackerGenerate)
		// POST /api/canvas/tracker/analyze
		gated(aifeature.TrackerAnalyze, nil).Post("/canvas/tracker/analyze", s.handleTrackerAnalyze)
		// POST /api/canvas/tracker/rewrite
		edits(aifeature.TrackerRewrite, nil).Post("/canvas/tracker/rewrite", s.handleTrackerRewrite)
	})
}

// editsKey marks, in a request's context, an AI feature whose result is an
// edit of the board (aiMakesEdits).
type editsKey struct{}

// Gate is what stands in front of an AI handler of feature on its route:
// the credits gate, charging the board's owner when ownerPays (as
// notes/rewrite does, which also makes edits). The server's tests of the
// gate mount their stand-in models behind it.
func (s *Routes) Gate(feature billing.Feature, ownerPays bool, next http.Handler) http.Handler {
	if ownerPays {
		return aiMakesEdits(s.aiGate(feature, s.boardOwnerPays)(next))
	}
	return s.aiGate(feature, nil)(next)
}

// aiMakesEdits marks the request as one of the AI features whose result is
// an edit of the board; the board guard of AI calls then asks for edit
// rights (requireAIEdit).
func aiMakesEdits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), editsKey{}, true)))
	})
}

// requireAIEdit refuses a caller who may only view the board a), when the
// request is for an AI feature that makes edits: its result could not be
// saved, so the call would spend credits (the owner's, for notes/rewrite)
// on nothing.
func requireAIEdit(ctx context.Context, a *access.Access) error {
	if edits, _ := ctx.Value(editsKey{}).(bool); edits && !a.CanEdit {
		return board.Errorf(board.EFORBIDDEN, "You can view this board but not edit it, so AI features that change it (rewrites, generated notes and items) are for its editors. Analyses and the chat stay open to you, on your own credits.")
	}
	return nil
}

// requireAI answers 503 when the server has no AI service, before the gate
// charges anything.
func (s *Routes) requireAI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.ai == nil {
			s.writeError(w, r, board.Errorf(board.EUNAVAILABLE, "AI model unavailable: this server has no AI service configured."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unknownCommandBody is the 400 answer to an unknown note-ai command: the
// usual error body plus the commands that exist.
type unknownCommandBody struct {
	Error    string   `json:"error"`
	Field    string   `json:"field"`
	Commands []string `json:"commands"`
}

// writeUnknownCommand answers 400 listing the available commands.
func writeUnknownCommand(w http.ResponseWriter, command string) {
	cmds := ai.Commands()
	if utf8.RuneCountInString(command) > 64 {
		command = string([]rune(command)[:64]) + "…"
	}
	respond.JSON(w, http.StatusBadRequest, unknownCommandBody{
		Error:    fmt.Sprintf("Unknown command %q. Available commands: %s.", command, strings.Join(cmds, ", ")),
		Field:    "command",
		Commands: cmds,
	})
}

// requireKnownCommand refuses a note-ai command that does not exist.
func requireKnownCommand(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cmd := chi.URLParam(r, "command"); !slices.Contains(ai.Commands(), cmd) {
			writeUnknownCommand(w, cmd)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// aiWriteDeadlines lifts the server's WriteTimeout off an AI answer and
// gives every write its own deadline instead. The WriteTimeout counts from
// the request's start: a model that takes its time (a long note, a slow
// first token) would have its answer cut, and over HTTP/2 the stream would
// be reset even before the first byte. The wait for the model is bounded
// by the AI request's own timeout; each write by aiWriteTimeout.
func aiWriteDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
		// Writers without deadlines (test recorders) need none.
		_ = dw.rc.SetWriteDeadline(time.Time{})
		next.ServeHTTP(dw, r)
	})
}

// deadlineWriter sets a fresh write deadline before each write and flush.
// It unwraps for http.ResponseController, so streams flush through it.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (d *deadlineWriter) extend() {
	_ = d.rc.SetWriteDeadline(time.Now().Add(aiWriteTimeout))
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.extend()
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.extend()
	return d.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	d.extend()
	return d.rc.Flush()
}

// Flush serves handlers that assert http.Flusher.
func (d *deadlineWriter) Flush() { _ = d.FlushError() }

// Unwrap gives http.ResponseController the writer underneath.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// decodeAI reads an AI request body of at most limit bytes with decode
// (one of decode_ai.go's, which skip keys they do not know: the AI SDK adds
// its own), validates it,
// and runs the board guard for *boardID when it is not empty. Every AI
// request type requires its boardId in validate except document-to-notes,
// where a document may be imported before its board is claimed.
func (s *Routes) decodeAI(w http.ResponseWriter, r *http.Request, limit int64, decode func(*jsondec.Decoder) error, validate func() error, boardID *string) error {
	if err := reqbody.Decode(w, r, limit, decode); err != nil {
		return err
	}
	if err := validate(); err != nil {
		return err
	}
	return s.guardAIBoard(r.Context(), *boardID)
}

// serveAI is an AI route answered with one JSON object: the body decoded
// (at most limit bytes) and checked, its board guarded (decodeAI), then
// the feature called (call, a closure over the decoded request) and its
// answer or error rendered.
func (s *Routes) serveAI(w http.ResponseWriter, r *http.Request, limit int64, decode func(*jsondec.Decoder) error, validate func() error, boardID *string, call func(context.Context) (any, error)) {
	if err := s.decodeAI(w, r, limit, decode, validate, boardID); err != nil {
		s.aiFailed(w, r, err)
		return
	}
	res, err := call(r.Context())
	s.answerAI(w, r, res, err)
}

// guardAIBoard checks that the caller may use board id: owner or invitee,
// and for the features that make edits (aiMakesEdits), one who may edit.
// The read features need no edit rights: their answers change nothing.
func (s *Routes) guardAIBoard(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	if a := reqctx.Access(ctx); a != nil {
		// The payer check (notes/rewrite) guarded the body's boardId
		// already. Both it and the decoder match keys exactly and refuse a
		// second "boardId", so the two agree; this check stays as the
		// guarantee that a request never works on one board at another
		// board owner's cost, should they ever drift apart.
		if a.Board.ID != id {
			return board.FieldErrorf("boardId", "boardId must be given once.")
		}
		return requireAIEdit(ctx, a)
	}
	a, err := s.guard.Guard(ctx, id, reqctx.Email(ctx))
	if err != nil {
		return err
	}
	return requireAIEdit(ctx, &a)
}

// aiFailed answers an error of an AI call. An error after the answer began
// was already told to the client inside the stream and is only logged; a
// client that went away gets nothing; anything else is answered as JSON
// with its status (which makes the gate refund the credits).
func (s *Routes) aiFailed(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	switch {
	case ai.Streamed(err):
		level := slog.LevelWarn
		if ctx.Err() != nil {
			level = slog.LevelInfo // the client went away mid-answer
		}
		s.log.LogAttrs(ctx, level, "AI answer ended early", slog.String("path", r.URL.Path),
			slog.String("code", board.ErrorCode(err)), slog.Any("err", err))
	case ctx.Err() != nil:
		s.log.LogAttrs(ctx, slog.LevelInfo, "AI request ended by the client", slog.String("path", r.URL.Path), slog.Any("err", err))
	case isUnknownCommand(err):
		writeUnknownCommand(w, chi.URLParam(r, "command"))
	default:
		s.writeError(w, r, err)
	}
}

// isUnknownCommand reports the ai package's refusal of a command; the route
// refuses unknown commands first, so this only covers the two lists
// drifting apart.
func isUnknownCommand(err error) bool {
	var e *board.Error
	return errors.As(err, &e) && e.Code == board.EINVALID && e.Field == "command"
}

// answerAI writes a JSON AI answer, or the error.
func (s *Routes) answerAI(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		s.aiFailed(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, v)
}

// chatBody is a chat or subagent request as decoded: currentPhase is kept
// raw, because it may be a string, an object or null (ai.Phase reads all
// three), which the body's shape check does not know about.
type chatBody struct {
	ai.ChatRequest
	CurrentPhase json.RawMessage `json:"currentPhase"`
}

// decodeChat decodes, validates and guards a chat or subagent request.
func (s *Routes) decodeChat(w http.ResponseWriter, r *http.Request) (ai.ChatRequest, error) {
	var body chatBody
	req := &body.ChatRequest
	validate := func() error {
		if len(body.CurrentPhase) > 0 {
			if err := json.Unmarshal(body.CurrentPhase, &req.CurrentPhase); err != nil {
				if board.ErrorCode(err) == board.EINVALID {
					return err
				}
				return board.FieldErrorf("currentPhase", "currentPhase must be a phase object or a string.")
			}
		}
		return req.Validate()
	}
	err := s.decodeAI(w, r, limitAIBoardBody, chatBodyShape.Into(&body), validate, &req.BoardID)
	return *req, err
}

// handleChat is POST /api/canvas/chat: the board chat as an AI SDK UI
// message stream with the six board tools.
func (s *Routes) handleChat(w http.ResponseWriter, r *http.Request) {
	req, err := s.decodeChat(w, r)
	if err == nil {
		err = s.ai.Chat(r.Context(), req, newUIMessageStream(w))
	}
	if err != nil {
		s.aiFailed(w, r, err)
	}
}

// handleSubagent is POST /api/canvas/subagent: the phase-aware chat whose
// answers end with three suggested next actions.
func (s *Routes) handleSubagent(w http.ResponseWriter, r *http.Request) {
	req, err := s.decodeChat(w, r)
	if err == nil {
		err = s.ai.Subagent(r.Context(), req, newUIMessageStream(w))
	}
	if err != nil {
		s.aiFailed(w, r, err)
	}
}

// handleNoteAI is POST /api/canvas/note-ai: a note written by the agentic
// loop, as plain text "TITLE: …\n---\n…".
func (s *Routes) handleNoteAI(w http.ResponseWriter, r *http.Request) {
	var req ai.NoteAIRequest
	err := s.decodeAI(w, r, limitAIBoardBody, noteAIRequestShape.Into(&req), req.Validate, &req.BoardID)
	ts := newTextStream(w)
	if err == nil {
		err = s.ai.NoteAI(r.Context(), req, ts)
	}
	if err != nil {
		s.aiFailed(w, r, err)
		ts.abortIfFailed()
	}
}

// handleNoteCommand is POST /api/canvas/note-ai/{command}: note-ai with a
// command's own prompt and writing guide; the prompt may be empty.
func (s *Routes) handleNoteCommand(w http.ResponseWriter, r *http.Request) {
	var req ai.NoteAIRequest
	err := s.decodeAI(w, r, limitAIBoardBody, noteAIRequestShape.Into(&req), req.ValidateCommand, &req.BoardID)
	ts := newTextStream(w)
	if err == nil {
		err = s.ai.NoteCommand(r.Context(), chi.URLParam(r, "command"), req, ts)
	}
	if err != nil {
		s.aiFailed(w, r, err)
		ts.abortIfFailed()
	}
}

// handleGenerateFrontmatter is POST /api/canvas/generate-frontmatter.
func (s *Routes) handleGenerateFrontmatter(w http.ResponseWriter, r *http.Request) {
	var req ai.FrontmatterRequest
	s.serveAI(w, r, limitAIBoardBody, frontmatterRequestShape.Into(&req), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.GenerateFrontmatter(ctx, req) })
}

// handleDocumentToNotes is POST /api/canvas/document-to-notes; boardId is
// optional here.
func (s *Routes) handleDocumentToNotes(w http.ResponseWriter, r *http.Request) {
	var req ai.DocumentRequest
	s.serveAI(w, r, limitAIDocumentBody, decodeAIStrings(map[string]*string{"boardId": &req.BoardID, "text": &req.Text, "filename": &req.Filename}), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.DocumentToNotes(ctx, req) })
}

// handleNotesAnalyze is POST /api/canvas/notes/analyze.
func (s *Routes) handleNotesAnalyze(w http.ResponseWriter, r *http.Request) {
	var req ai.AnalyzeNoteRequest
	s.serveAI(w, r, limitAIItemBody, decodeAIStrings(map[string]*string{"boardId": &req.BoardID, "noteId": &req.NoteID, "title": &req.Title, "content": &req.Content, "focus": &req.Focus}), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.NotesAnalyze(ctx, req) })
}

// handleNotesRewrite is POST /api/canvas/notes/rewrite; the gate charged
// the board's owner and guarded the board.
func (s *Routes) handleNotesRewrite(w http.ResponseWriter, r *http.Request) {
	var req ai.RewriteNoteRequest
	s.serveAI(w, r, limitAIRewriteBody, decodeAIStrings(map[string]*string{"boardId": &req.BoardID, "noteId": &req.NoteID, "title": &req.Title, "content": &req.Content, "selectedText": &req.SelectedText, "instruction": &req.Instruction}), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.NotesRewrite(ctx, req) })
}

// handleTrackerGenerate is POST /api/canvas/tracker/generate (at most 60
// seconds, enforced by the ai package).
func (s *Routes) handleTrackerGenerate(w http.ResponseWriter, r *http.Request) {
	var req ai.TrackerGenerateRequest
	s.serveAI(w, r, limitAIBoardBody, trackerGenerateRequestShape.Into(&req), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.TrackerGenerate(ctx, req) })
}

// handleTrackerAnalyze is POST /api/canvas/tracker/analyze.
func (s *Routes) handleTrackerAnalyze(w http.ResponseWriter, r *http.Request) {
	var req ai.TrackerAnalyzeRequest
	s.serveAI(w, r, limitAIItemBody, trackerAnalyzeRequestShape.Into(&req), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.TrackerAnalyze(ctx, req) })
}

// handleTrackerRewrite is POST /api/canvas/tracker/rewrite.
func (s *Routes) handleTrackerRewrite(w http.ResponseWriter, r *http.Request) {
	var req ai.TrackerRewriteRequest
	s.serveAI(w, r, limitAIItemBody, trackerRewriteRequestShape.Into(&req), req.Validate, &req.BoardID,
		func(ctx context.Context) (any, error) { return s.ai.TrackerRewrite(ctx, req) })
}
