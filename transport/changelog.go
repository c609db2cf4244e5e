package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
	"corkboard/transport/pullstream"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// limitLogBody bounds a POST /log body. The entries alone stay far below it
// (a flush is usually a few notes); the client's boardState may be the whole
// board, which can be as large as the largest push, hence the push's limit.
// docs/changelog.md has the reasoning.
const limitLogBody = limitPushBody

// markdownType is the Content-Type of every Markdown answer.
const markdownType = "text/markdown; charset=utf-8"

// registerChangelogRoutes adds the changelog and snapshot endpoints, behind
// the board guard.
func (s *Server) registerChangelogRoutes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(s.requireBoard)
		// POST /api/boards/{boardId}/log
		r.With(s.limitLargeBodies(limitLogBody)).Post("/boards/{boardId}/log", s.handleAppendLog)
		// GET /api/boards/{boardId}/log?noteId=&action=&before=&limit=
		r.Get("/boards/{boardId}/log", s.handleListLog)
		// POST /api/boards/{boardId}/log/restore
		r.Post("/boards/{boardId}/log/restore", s.handleRestore)
		// GET /api/boards/{boardId}/log/{logKey}: the key holds a "/", so it
		// is the rest of the path, escaped (log%2F…) or not (log/…).
		r.Get("/boards/{boardId}/log/*", s.handleGetLogEntry)
		// GET /api/boards/{boardId}/snapshot[?list=true|?download=1|?key=…]
		r.Get("/boards/{boardId}/snapshot", s.handleGetSnapshot)
		// POST /api/boards/{boardId}/snapshot
		r.Post("/boards/{boardId}/snapshot", s.handleCreateSnapshot)
	})
}

type appendLogRequest struct {
	Entries []changelog.Entry `json:"entries"`
	// BoardState is the client's idea of the board. It is accepted (any
	// JSON object) and not used: current.md is rendered from the server's
	// state, which wins.
	BoardState json.RawMessage `json:"boardState"`
}

type appendLogBody struct {
	OK   bool     `json:"ok"`
	Keys []string `json:"keys"`
}

// handleAppendLog is POST /api/boards/{boardId}/log. Order: 403 for a
// member who cannot edit (before the body is read), strict decoding, every
// entry validated (400 naming entries[i].field, nothing stored), then one
// transaction. Answer: {ok: true, keys: [one key per entry, in order]}.
func (s *Server) handleAppendLog(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	if !a.CanEdit {
		s.writeError(w, r, board.Errorf(board.EFORBIDDEN, "You can view this board but not edit it, so you cannot write its changelog."))
		return
	}
	var req appendLogRequest
	if err := reqbody.Decode(w, r, limitLogBody, appendLogShape.Into(&req)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Entries == nil {
		s.writeError(w, r, board.FieldErrorf("entries", "entries is required: an array of {noteId, action, content}."))
		return
	}
	if st := bytes.TrimSpace(req.BoardState); len(st) > 0 && st[0] != '{' && !bytes.Equal(st, []byte("null")) {
		s.writeError(w, r, board.FieldErrorf("boardState", "boardState must be an object."))
		return
	}
	stored, err := s.changelog.Append(r.Context(), a.Board.ID, req.Entries)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	keys := make([]string, len(stored))
	for i, e := range stored {
		keys[i] = e.Key
	}
	respond.JSON(w, http.StatusOK, appendLogBody{OK: true, Keys: keys})
}

// logQuery reads the listing's query parameters; each bad one is a 400
// naming it.
func logQuery(r *http.Request) (changelog.Query, error) {
	v := r.URL.Query()
	q := changelog.Query{NoteID: v.Get("noteId"), Action: v.Get("action"), Limit: changelog.DefaultListLimit}
	if v.Has("action") && q.Action == "" {
		return q, board.FieldErrorf("action", "action must be one of create_note, update_note, delete_note, rename_board, start_vote, reveal_vote.")
	}
	if v.Has("limit") {
		n, err := strconv.Atoi(v.Get("limit"))
		if err != nil || n < 1 || n > changelog.MaxListLimit {
			return q, board.FieldErrorf("limit", "limit must be an integer from 1 to %d.", changelog.MaxListLimit)
		}
		q.Limit = n
	}
	if v.Has("before") {
		t, err := changelog.ParseTimestamp("before", v.Get("before"))
		if err != nil {
			return q, err
		}
		q.Before = &t
	}
	return q, q.Validate()
}

type logListBody struct {
	Entries []persist.LogEntry `json:"entries"`
}

// handleListLog is GET /api/boards/{boardId}/log: entries newest first,
// {entries: [{key, noteId, action, timestamp}]}. The next page is asked
// with before = the last entry's timestamp.
func (s *Server) handleListLog(w http.ResponseWriter, r *http.Request) {
	q, err := logQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	entries, err := s.changelog.List(r.Context(), reqctx.Access(r.Context()).Board.ID, q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, logListBody{Entries: entries})
}

// handleGetLogEntry is GET /api/boards/{boardId}/log/{logKey}: the entry's
// Markdown. The key may come as is (log/2026…-n1) or escaped as one path
// segment (log%2F2026…-n1): either way it is unescaped exactly once.
func (s *Server) handleGetLogEntry(w http.ResponseWriter, r *http.Request) {
	key := chi.URLParam(r, "*")
	// chi routes on the raw path only when the request has one that differs
	// from the decoded path (an escaped "/"); otherwise the parameter is
	// already decoded and must not be decoded twice.
	if r.URL.RawPath != "" {
		var err error
		if key, err = url.PathUnescape(key); err != nil {
			s.writeError(w, r, board.FieldErrorf("logKey", "logKey is not a valid escaped path."))
			return
		}
	}
	e, err := s.changelog.Entry(r.Context(), reqctx.Access(r.Context()).Board.ID, key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeMarkdown(w, e.Content)
}

type restoreRequest struct {
	LogKey string `json:"logKey"`
	Type   string `json:"type"`
}

// handleRestore is POST /api/boards/{boardId}/log/restore. type "note"
// answers the Note a note entry holds; type "board" answers the
// BoardState {board, phases?, notes, trackerItems} of "current.md", a
// snapshot key, or a rename_board entry (the board now, with that name).
// Nothing stored changes, so viewers may restore too: the client pushes
// what it restores.
func (s *Server) handleRestore(w http.ResponseWriter, r *http.Request) {
	var req restoreRequest
	if err := reqbody.Decode(w, r, limitJSONBody, decodeStringFields(map[string]*string{"logKey": &req.LogKey, "type": &req.Type})); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.LogKey == "" {
		s.writeError(w, r, board.FieldErrorf("logKey", "logKey is required."))
		return
	}
	id := reqctx.Access(r.Context()).Board.ID
	switch req.Type {
	case "note":
		n, err := s.changelog.RestoreNote(r.Context(), id, req.LogKey)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond.JSON(w, http.StatusOK, n)
	case "board":
		st, err := s.changelog.RestoreBoard(r.Context(), id, req.LogKey)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond.JSON(w, http.StatusOK, st)
	default:
		s.writeError(w, r, board.FieldErrorf("type", `type must be "note" or "board".`))
	}
}

// boolParam reads an optional boolean query parameter (1, t, true, 0, f,
// false, …); absent is false.
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query()
	if !v.Has(name) {
		return false, nil
	}
	b, err := strconv.ParseBool(v.Get(name))
	if err != nil {
		return false, board.FieldErrorf(name, "%s must be true or false.", name)
	}
	return b, nil
}

type snapshotListBody struct {
	Snapshots []persist.SnapshotInfo `json:"snapshots"`
}

// handleGetSnapshot is GET /api/boards/{boardId}/snapshot. Plain, it
// answers the current snapshot's Markdown; ?key=snapshots/….md a
// point-in-time snapshot's; ?list=true the list {snapshots: [{key,
// timestamp}]}, newest first; ?download=1 adds Content-Disposition:
// attachment so a browser saves the Markdown as <board name>.md.
func (s *Server) handleGetSnapshot(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	list, err := boolParam(r, "list")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	download, err := boolParam(r, "download")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if list {
		snaps, err := s.changelog.Snapshots(r.Context(), a.Board.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond.JSON(w, http.StatusOK, snapshotListBody{Snapshots: snaps})
		return
	}
	key := r.URL.Query().Get("key")
	var doc io.WriterTo
	if key == "" || key == changelog.CurrentKey {
		// Written row by row: the answer costs a small buffer, not a
		// second copy of the board.
		d, err := s.changelog.CurrentDoc(r.Context(), a.Board.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		doc = d
	} else {
		md, err := s.changelog.BoardSnapshot(r.Context(), a.Board.ID, key)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		doc = bytes.NewReader(md)
	}
	if download {
		name := a.Board.Name
		if name == "" {
			name = a.Board.ID
		}
		if stamp, ok := strings.CutPrefix(key, persist.SnapshotKeyPrefix); ok {
			name += " " + strings.TrimSuffix(stamp, persist.SnapshotKeySuffix)
		}
		w.Header().Set("Content-Disposition", attachment(name+".md", a.Board.ID+".md"))
	}
	s.writeMarkdownFrom(w, r, doc)
}

// handleCreateSnapshot is POST /api/boards/{boardId}/snapshot: the server's
// state stored under snapshots/<timestamp>.md, answered {ok: true, key}.
// Members who cannot edit get 403. The request body is not read.
func (s *Server) handleCreateSnapshot(w http.ResponseWriter, r *http.Request) {
	a := reqctx.Access(r.Context())
	if !a.CanEdit {
		s.writeError(w, r, board.Errorf(board.EFORBIDDEN, "You can view this board but not edit it, so you cannot take snapshots."))
		return
	}
	info, err := s.changelog.Snapshot(r.Context(), a.Board.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"ok": true, "key": info.Key})
}

// writeMarkdown answers md as Markdown. nosniff keeps browsers from
// rendering a note that looks like HTML as a page of our origin.
func writeMarkdown(w http.ResponseWriter, md []byte) {
	w.Header().Set("Content-Type", markdownType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(md)
}

// writeMarkdownFrom answers doc as Markdown, as writeMarkdown does, and as
// a pull is answered (pullstream.go): a document larger than 64 KiB takes
// a slot of the large-read gate (429 or 503 when there is none) and is
// spooled until it is all read, so that a slow client holds neither the
// store's read nor the document's bytes in memory. A document is read in
// 64 KiB pieces, never copied whole. An error before the answer starts is
// answered; after, it cuts the connection.
func (s *Server) writeMarkdownFrom(w http.ResponseWriter, r *http.Request, doc io.WriterTo) {
	release := func() {}
	defer func() { release() }()
	out := &pullstream.HeldAnswer{
		Ctx:      r.Context(),
		SpoolDir: s.cfg.SpoolDir,
		Buf:      make([]byte, 0, 4<<10),
		Admit: func() error {
			rel, err := s.largeReads.Acquire(r.Context(), reqctx.Access(r.Context()).Email)
			if err == nil {
				release = rel
			}
			return err
		},
		Start: func() error {
			w.Header().Set("Content-Type", markdownType)
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			return nil
		},
		Send: pullstream.HTTPSender(w),
	}
	defer out.Discard()
	_, err := doc.WriteTo(pieces{out})
	if err == nil {
		err = out.Close()
	}
	if err == nil {
		return
	}
	if !out.Started() {
		s.writeError(w, r, err)
		return
	}
	if r.Context().Err() == nil {
		s.log.ErrorContext(r.Context(), "streamed snapshot failed", slog.Any("err", err))
	}
	panic(http.ErrAbortHandler)
}

// pieces hands what it is given to w at most pullstream.LargeReadBuffer bytes at a
// time, so that a document held in memory reaches a heldAnswer without
// being copied whole into its buffer.
type pieces struct{ w io.Writer }

func (p pieces) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), pullstream.LargeReadBuffer)
		m, err := p.w.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

// attachment is a Content-Disposition that saves the answer as filename:
// an ASCII fallback (other characters, quotes and separators become "-";
// fallback when nothing is left) and the exact name in RFC 5987 form for
// browsers that read it.
func attachment(filename, fallback string) string {
	var ascii strings.Builder
	for _, r := range filename {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == ' ':
			ascii.WriteRune(r)
		default:
			ascii.WriteByte('-')
		}
	}
	plain := strings.TrimSpace(ascii.String())
	if strings.Trim(plain, "-. ") == "" || strings.Trim(plain, "-. ") == "md" {
		plain = fallback
	}
	var ext strings.Builder
	for _, c := range []byte(filename) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			ext.WriteByte(c)
		} else {
			ext.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
		}
	}
	return `attachment; filename="` + plain + `"; filename*=UTF-8''` + ext.String()
}
