// Package board holds Corkboard's domain: boards, notes, tracker items, the
// changes a client pushes, their validation, and the error codes every other
// package speaks.
package board

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. Transport maps each to one HTTP status; storage and the other
// adapters return them instead of their own driver errors.
const (
	ECONFLICT     = "conflict"     // 409
	EINTERNAL     = "internal"     // 500
	EINVALID      = "invalid"      // 400
	ENOTFOUND     = "not_found"    // 404
	EFORBIDDEN    = "forbidden"    // 403
	EUNAUTHORIZED = "unauthorized" // 401
	ETOOLARGE     = "too_large"    // 413
	ERATELIMIT    = "rate_limited" // 429
	EUNAVAILABLE  = "unavailable"  // 503
	EUPSTREAM     = "bad_upstream" // 502
)

// Error is the domain error. Message is safe to show to a client; Field names
// the offending request field (dotted path with [i] indices) when there is one.
type Error struct {
	Code    string
	Message string
	Field   string
	// RetryAfter, in whole seconds, is set on ERATELIMIT errors.
	RetryAfter int
	// Limit is the limit a request would pass, on ETOOLARGE errors about a
	// stored limit (Limits); answered as "limit".
	Limit int64
	// ID is the row a refusal is about (a locked note, someone else's
	// note: rights.go); answered as "id".
	ID string
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least 1: the value
// of Error.RetryAfter and of a Retry-After header.
func RetryAfterSeconds(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

// Error describes e for logs, code and field included; clients get
// ErrorMessage instead.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("corkboard error: code=%s field=%s message=%s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("corkboard error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns an EINVALID error naming field.
func FieldErrorf(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err; errors that are not
// *Error never leak their text.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
