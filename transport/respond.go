package transport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"corkboard/board"
)

// statusOf maps a domain error code to its HTTP status.
var statusOf = map[string]int{
	board.EINVALID:      http.StatusBadRequest,
	board.EUNAUTHORIZED: http.StatusUnauthorized,
	board.EFORBIDDEN:    http.StatusForbidden,
	board.ENOTFOUND:     http.StatusNotFound,
	board.ECONFLICT:     http.StatusConflict,
	board.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	board.ERATELIMIT:    http.StatusTooManyRequests,
	board.EINTERNAL:     http.StatusInternalServerError,
	board.EUPSTREAM:     http.StatusBadGateway,
	board.EUNAVAILABLE:  http.StatusServiceUnavailable,
}

// ErrorStatus returns the HTTP status for err's domain code.
func ErrorStatus(err error) int {
	if s, ok := statusOf[board.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// errorBody is every error answer but the quota 429: {"error": …} plus the
// field it is about, when there is one.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
	// Limit is the stored limit a request would pass (board.Limits).
	Limit int64 `json:"limit,omitempty"`
}

// writeError answers err as JSON with its status. Internal errors are logged
// with their cause and answered with a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client hung up: nobody reads the answer, and it is no fault.
		s.log.DebugContext(r.Context(), "client went away", slog.String("method", r.Method), slog.String("path", r.URL.Path))
		return
	}
	status := ErrorStatus(err)
	if status >= 500 && board.ErrorCode(err) == board.EINTERNAL {
		s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	body := errorBody{Error: board.ErrorMessage(err)}
	var e *board.Error
	if errors.As(err, &e) {
		body.Field, body.Limit = e.Field, e.Limit
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
	}
	writeJSON(w, status, body)
}

// writeJSON answers v as JSON with status. nosniff is set by ServeHTTP
// too; it is repeated here for the handlers served outside it (OpsHandler).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// okBody is the {"ok": true} answer.
var okBody = struct {
	OK bool `json:"ok"`
}{true}
