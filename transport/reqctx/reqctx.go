// Package reqctx holds what the HTTP layer learns about a request as it
// goes in, kept in the request's context: the person calling (the
// session's), the board access the guard gave, and whether the answer is a
// routine poll that is logged quietly. The middleware sets them; the
// handlers of every route package read them.
package reqctx

import (
	"context"

	"corkboard/access"
)

type ctxKey int

const (
	stateKey  ctxKey = iota // *State
	accessKey               // *access.Access, when there is no State
)

// State is what the middleware learns about one request: the user
// (requireSession), the board access (requireBoard), and whether the answer
// was a routine no-change poll (quiet: logged at Debug). The request log
// middleware puts it in the request's context, and the rest fill it in, so
// the chain costs one context value and one request copy.
type State struct {
	email  string
	access *access.Access
	// guarded holds what access points to, set by SetAccess.
	guarded access.Access
	quiet   bool
}

// Start returns ctx with a new, empty State, and the State.
func Start(ctx context.Context) (context.Context, *State) {
	st := &State{}
	return context.WithValue(ctx, stateKey, st), st
}

// stateOf is the request's state (nil outside Start).
func stateOf(ctx context.Context) *State {
	st, _ := ctx.Value(stateKey).(*State)
	return st
}

// Quiet reports whether a handler asked for the request to be logged
// quietly (LogQuietly).
func (st *State) Quiet() bool { return st.quiet }

// LogQuietly makes the request log line Debug instead of Info when the
// request succeeds: an up-to-date poll repeats every few seconds per client
// and says nothing an operator needs (docs/benchmarks.md).
func LogQuietly(ctx context.Context) {
	if st := stateOf(ctx); st != nil {
		st.quiet = true
	}
}

// WithEmail records the logged-in user's e-mail: in the request's State
// when it has one (the context is then ctx itself), else in a new State.
func WithEmail(ctx context.Context, email string) context.Context {
	if st := stateOf(ctx); st != nil {
		st.email = email
		return ctx
	}
	return context.WithValue(ctx, stateKey, &State{email: email})
}

// Email is the logged-in user's e-mail ("" before WithEmail).
func Email(ctx context.Context) string {
	if st := stateOf(ctx); st != nil {
		return st.email
	}
	return ""
}

// WithAccess records the board guard's answer for the request: in its
// State when it has one (no new context, no allocation), else in a new
// context value.
func WithAccess(ctx context.Context, a access.Access) context.Context {
	if st := stateOf(ctx); st != nil {
		st.guarded = a
		st.access = &st.guarded
		return ctx
	}
	held := a // only this path allocates
	return context.WithValue(ctx, accessKey, &held)
}

// Access is the guard's result for the request (WithAccess), nil when no
// board was guarded.
func Access(ctx context.Context) *access.Access {
	if a, _ := ctx.Value(accessKey).(*access.Access); a != nil {
		return a
	}
	if st := stateOf(ctx); st != nil {
		return st.access
	}
	return nil
}
