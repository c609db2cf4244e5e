package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Read-only link tokens (docs/auth.md, "Read-only links") have the shape
// of session tokens: 32 random bytes (256 bits, unguessable), base64url
// without padding (43 characters), stored only as the SHA-256 of the raw
// bytes. A plain hash suffices (no server secret, unlike login codes):
// 256 random bits cannot be guessed from their hash, and a stolen
// database gives no working link.

// NewLinkToken returns a fresh link token and its storage key.
func NewLinkToken() (token string, key []byte, err error) {
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, fmt.Errorf("generate link token: %w", err)
	}
	sum := sha256.Sum256(raw)
	return tokenEncoding.EncodeToString(raw), sum[:], nil
}

// LinkKey returns the storage key of a link token: SHA-256 of its 32
// decoded bytes. It fails for anything that is not a token's shape, so
// garbage never reaches storage.
func LinkKey(token string) ([]byte, error) {
	id, err := sessionKey(token)
	if err != nil {
		return nil, errors.New("link token is malformed")
	}
	return id[:], nil
}
