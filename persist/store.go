// Package persist is Corkboard's storage contract: the records the program
// keeps (users, one-time codes, sessions, changelog entries, billing
// updates), and the small interfaces through which the rest of the program
// reads and writes them. It holds no implementation: persist/bolt is the
// bbolt one, and only cmd/corkboard chooses which one runs.
//
// Every method speaks board's domain types and returns *board.Error codes
// (ENOTFOUND, ECONFLICT, EINVALID) for what a caller can act on; any other
// failure is an internal error (board.ErrorCode answers EINTERNAL for it)
// and never the backend's own error type. A method whose ctx is already done
// returns ctx.Err() without touching the store.
//
// The contract suite in persist/storetest is the definition of a store: an
// implementation is one when storetest.Run passes on it. docs/storage.md
// describes the same contract in prose.
package persist

import (
	"context"
	"time"

	"corkboard/board"
)

// Store is everything a Corkboard server keeps: the union of the small
// interfaces below. Consumers ask for one of those (or a narrower interface
// of their own); only cmd/corkboard holds a whole Store.
type Store interface {
	BoardStore
	UserStore
	SessionStore
	CodeStore
	UsageStore
	BillingStore
	ChangelogStore
	SyncStore
	LinkStore
	VoteStore
	Pinger
}

// Limited is a store that enforces board.Limits in its own transactions:
// a push that would take a board past its live notes or items is refused
// (its Applied.Err is board.RowsFull) with nothing written, and two
// concurrent pushes can never both pass. Both stores implement it; the
// server sets the limits once, before use.
type Limited interface {
	SetLimits(l board.Limits)
}

// Pinger tells whether the store answers, for readiness checks (GET
// /readyz): a load balancer sends requests to a node only while its store
// does.
type Pinger interface {
	// Ping returns nil when the store can serve reads now: a cheap round
	// trip (a read transaction, a query), never a scan. It fails when the
	// store is closed or unreachable, and with an error that errors.Is
	// ctx.Err() when ctx is done first; callers give it a short deadline.
	Ping(ctx context.Context) error
}

// BoardStore keeps claimed boards and who may open them (the owner and the
// invited collaborators).
type BoardStore interface {
	// FindBoard returns a claimed board (InvitedEmails never nil).
	// ENOTFOUND when nobody has claimed it.
	FindBoard(ctx context.Context, id string) (*board.Board, error)
	// ClaimBoard makes email the owner of the unclaimed board id, at version
	// 0 with no rows, stamped with the store's clock. ECONFLICT when the
	// board already has an owner (of two concurrent claims exactly one wins);
	// ETOOLARGE (board.BoardsFull) when email owns Limits.BoardsPerUser
	// boards already (of concurrent claims by one person, never more pass).
	ClaimBoard(ctx context.Context, id, email string) (*board.Board, error)
	// SetPhases saves a board's phase configuration (nil clears it) without
	// moving its version. ENOTFOUND for an unclaimed board.
	SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error)
	// AddInvite adds email to the board's collaborators and reports whether
	// it was added (false: already invited, nothing changed). EINVALID with
	// field "email" when email is the owner's or the board already has
	// board.MaxInvites collaborators; ENOTFOUND for an unclaimed board.
	AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error)
	// RemoveInvite removes email from the board's collaborators and reports
	// whether it was there. ENOTFOUND for an unclaimed board.
	RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error)
	// ListBoardsFor returns the boards email owns or is invited to, newest
	// first by creation time, then by ID; an empty (not nil) slice for none.
	ListBoardsFor(ctx context.Context, email string) ([]board.Board, error)
}

// UserStore keeps accounts and their plans.
type UserStore interface {
	// FindUser returns the user with that (normalised) e-mail. ENOTFOUND
	// when the address has never logged in.
	FindUser(ctx context.Context, email string) (*User, error)
	// UserPlan returns the stored plan name of the user. ENOTFOUND when
	// there is no such user.
	UserPlan(ctx context.Context, email string) (string, error)
	// EnsureUser returns the user, creating it on plan (CreatedAt from the
	// store's clock) when it does not exist yet. An existing user is never
	// replaced: its plan stays whatever plan is passed.
	EnsureUser(ctx context.Context, email, plan string) (*User, error)
	// UpdateUser applies fn to the user in one transaction, creating the
	// user on defaultPlan first when it does not exist, and returns the
	// stored result. When fn fails nothing is written and its error comes
	// back as it is.
	UpdateUser(ctx context.Context, email, defaultPlan string, fn func(u *User) error) (*User, error)
}

// SessionStore keeps login sessions, keyed by the SHA-256 of the token the
// client holds. Expiry is the caller's rule: the store only applies the
// cut-offs it is given.
type SessionStore interface {
	// CreateSession stores s under id, replacing any session stored there.
	CreateSession(ctx context.Context, id []byte, s Session) error
	// FindSession returns the session stored under id; ENOTFOUND when there
	// is none. An expired session is still found.
	FindSession(ctx context.Context, id []byte) (*Session, error)
	// TouchSession moves the session's LastSeen forward to at. It never
	// moves it back and never recreates a session deleted meanwhile (a
	// logout racing a request stays logged out); touching a missing session
	// is not an error.
	TouchSession(ctx context.Context, id []byte, at time.Time) error
	// DeleteSession removes the session stored under id; removing a missing
	// session is not an error.
	DeleteSession(ctx context.Context, id []byte) error
	// SweepSessions deletes every session last seen at or before idleBefore
	// or created at or before createdBefore, and returns how many it
	// deleted. A session touched past the cut-offs while the sweep runs
	// survives it.
	SweepSessions(ctx context.Context, idleBefore, createdBefore time.Time) (int, error)
}

// CodeStore keeps the one-time login codes (one pending per address) and
// the server secret their hashes are keyed with.
type CodeStore interface {
	// Secret returns the server's 32-byte secret: created when the store is
	// first opened, and the same on every later open of the same store.
	Secret() []byte
	// PutOTP stores o as the code pending for email, replacing (and so
	// voiding) any earlier one.
	PutOTP(ctx context.Context, email string, o OTP) error
	// FindOTP returns the code pending for email, expired or not. ENOTFOUND
	// when there is none.
	FindOTP(ctx context.Context, email string) (*OTP, error)
	// UpdateOTP runs fn on the code pending for email (nil when there is
	// none) inside one write transaction, then saves, deletes or leaves the
	// code as fn answers (OTPSave with nil saves nothing). Two concurrent
	// calls for one address run one after the other, so two tries can
	// neither both use one code nor lose a count. fn may run more than once.
	UpdateOTP(ctx context.Context, email string, fn func(o *OTP) OTPChange) error
	// SweepOTPs deletes every code whose ExpiresAt is at or before now and
	// returns how many it deleted.
	SweepOTPs(ctx context.Context, now time.Time) (int, error)
}

// UsageStore keeps each user's AI credit usage per calendar month ("2026-11").
type UsageStore interface {
	// SpendCredits adds credits to email's usage for month when the total
	// stays within limit, atomically: concurrent calls never pass the limit
	// together. It returns the usage after the charge and true, or, past
	// the limit, the unchanged usage and false (nothing is charged).
	SpendCredits(ctx context.Context, email, month string, credits, limit int) (used int, ok bool, err error)
	// RefundCredits gives back credits (usage never goes below zero).
	RefundCredits(ctx context.Context, email, month string, credits int) error
	// CreditsUsed returns email's usage for month; 0 when nothing was spent.
	CreditsUsed(ctx context.Context, email, month string) (int, error)
}

// BillingStore applies verified payment-provider events.
type BillingStore interface {
	// ApplyBillingEvent applies one provider event at most once, in one
	// transaction: a repeated EventID changes nothing and reports replayed
	// (with a nil user). The user is found by upd.Email (created on
	// defaultPlan when new) or else by a CustomerID an earlier event
	// recorded; ENOTFOUND, with nothing recorded, when neither identifies
	// anyone. A CustomerID in upd is recorded on the user and remembered
	// for later events.
	ApplyBillingEvent(ctx context.Context, upd BillingUpdate, defaultPlan string) (u *User, replayed bool, err error)
}
