// Package respond renders answers the way every route of the HTTP layer
// does: a domain error as its status and {"error": …} body, and JSON with
// the headers every JSON answer carries.
package respond

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

// ErrorBody is every error answer but the quota 429: {"error": …} plus the
// field it is about, when there is one.
type ErrorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
	// Limit is the stored limit a request would pass (board.Limits).
	Limit int64 `json:"limit,omitempty"`
	// ID is the row a refusal is about (a locked note: board.SettleRights).
	ID string `json:"id,omitempty"`
}

// Error answers err as JSON with its status. Internal errors are logged to
// log with their cause and answered with a generic message.
func Error(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client hung up: nobody reads the answer, and it is no fault.
		log.DebugContext(r.Context(), "client went away", slog.String("method", r.Method), slog.String("path", r.URL.Path))
		return
	}
	status := ErrorStatus(err)
	if status >= 500 && board.ErrorCode(err) == board.EINTERNAL {
		log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	body := ErrorBody{Error: board.ErrorMessage(err)}
	var e *board.Error
	if errors.As(err, &e) {
		body.Field, body.Limit, body.ID = e.Field, e.Limit, e.ID
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
	}
	JSON(w, status, body)
}

// JSON answers v as JSON with status. nosniff is set by the server's
// ServeHTTP too; it is repeated here for the handlers served outside it
// (transport.OpsHandler).
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// OK is the {"ok": true} answer.
var OK = struct {
	OK bool `json:"ok"`
}{true}

// JSONContentType and NoStore are the header values of a JSON answer,
// shared so that setting them allocates nothing; net/http only reads them.
var (
	JSONContentType = []string{"application/json; charset=utf-8"}
	NoStore         = []string{"no-store"}
)
