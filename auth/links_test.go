package auth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"corkboard/auth"
)

func TestLinkTokens(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		token, key, err := auth.NewLinkToken()
		if err != nil {
			t.Fatal(err)
		}
		if len(token) != 43 || seen[token] {
			t.Fatalf("token %q: want 43 characters, never seen before", token)
		}
		seen[token] = true
		raw, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || len(raw) != 32 {
			t.Fatalf("token %q is not 32 bytes of base64url: %v", token, err)
		}
		// Stored is the SHA-256 of the raw bytes, never the token.
		want := sha256.Sum256(raw)
		if string(key) != string(want[:]) {
			t.Fatalf("key of %q is not SHA-256 of its bytes", token)
		}
		if got, err := auth.LinkKey(token); err != nil || string(got) != string(key) {
			t.Fatalf("LinkKey(%q) = %x, %v; want %x", token, got, err, key)
		}
	}
}

func TestLinkKeyRefusesMalformed(t *testing.T) {
	token, _, _ := auth.NewLinkToken()
	for _, bad := range []string{"", "short", token[:42], token + "A", strings.Repeat("*", 43), token[:42] + "="} {
		if _, err := auth.LinkKey(bad); err == nil {
			t.Errorf("LinkKey(%q) accepted", bad)
		}
	}
}
