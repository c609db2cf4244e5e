package persist

import (
	"time"
)

// OTP is the one-time code pending for an address. Only a keyed hash of the
// code is kept; the caller computes it, so this package never sees a code.
type OTP struct {
	// Hash is HMAC-SHA256 of the address and the code under the server secret.
	Hash []byte `json:"hash"`
	// ExpiresAt is when the code stops being accepted.
	ExpiresAt time.Time `json:"expiresAt"`
	// Attempts counts wrong tries against this code.
	Attempts int `json:"attempts"`
	// Network is the client network (address or IPv6 /64) that asked for
	// the code.
	Network string `json:"network,omitempty"`
}

// OTPChange tells UpdateOTP what to store after its callback ran.
type OTPChange int

// What UpdateOTP does with the code after its callback.
const (
	// OTPUnchanged writes nothing.
	OTPUnchanged OTPChange = iota
	// OTPSave stores the callback's changes to the code.
	OTPSave
	// OTPDelete removes the code.
	OTPDelete
)

// Session is a login as stored. The key it is stored under is the SHA-256
// of the token the client holds; the token itself is never stored.
type Session struct {
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"createdAt"`
	// LastSeen is the last recorded use. Callers record it coarsely (not on
	// every request) to keep reads from turning into writes.
	LastSeen time.Time `json:"lastSeen"`
}
