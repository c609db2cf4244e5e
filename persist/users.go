package persist

import (
	"time"
)

// User is an account, created on first login.
type User struct {
	Email     string    `json:"email"`
	Plan      string    `json:"plan"`
	CreatedAt time.Time `json:"createdAt"`
	// CustomerID is the payment provider's customer id, once known.
	CustomerID string `json:"customerId,omitempty"`
}

// BillingUpdate is what a verified provider event asks of the store.
type BillingUpdate struct {
	EventID    string
	CustomerID string
	// Email identifies the user when the event carries it; otherwise the
	// user is found by CustomerID from an earlier event.
	Email string
	// Plan returns the user's new plan given the current one, and whether to
	// change it.
	Plan func(current string) (string, bool)
}
