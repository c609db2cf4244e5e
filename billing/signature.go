package billing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"corkboard/board"
)

// Tolerance is how far a signed timestamp may be from the server's clock, in
// either direction, before a delivery is refused as a possible replay.
const Tolerance = 5 * time.Minute

// MaxWebhookBytes is the largest webhook body worth reading; real Stripe
// events are a few kilobytes. The HTTP layer should cut the body there.
const MaxWebhookBytes = 1 << 20

// Headers read by the verifiers.
const (
	HeaderStripeSignature  = "Stripe-Signature"
	HeaderWebhookID        = "Webhook-Id"
	HeaderWebhookTimestamp = "Webhook-Timestamp"
	HeaderWebhookSignature = "Webhook-Signature"
)

// Providers: the values of the -billing-provider flag.
const (
	ProviderStripe   = "stripe"
	ProviderStandard = "standard"
)

// Verifier checks that a webhook delivery was signed by the payment provider.
type Verifier interface {
	// Verify checks the signature of body, the raw request body, against the
	// headers h, with now as the current time. It returns nil when the
	// delivery is genuine and fresh, EINVALID when a header is missing or
	// malformed, no signature matches, or the timestamp is more than
	// Tolerance away from now, and EUNAVAILABLE when no secret is configured.
	Verify(h http.Header, body []byte, now time.Time) error
}

// NewVerifier returns the verifier of provider ("" means ProviderStripe)
// holding secrets; see NewStripeVerifier and NewStandardVerifier.
func NewVerifier(provider string, secrets []string) (Verifier, error) {
	switch provider {
	case "", ProviderStripe:
		return NewStripeVerifier(secrets), nil
	case ProviderStandard:
		return NewStandardVerifier(secrets)
	}
	return nil, board.Errorf(board.EINVALID, "Unknown billing provider %q (use %s or %s).", provider, ProviderStripe, ProviderStandard)
}

// ParseSecrets splits a flag value such as "whsec_a,whsec_b" into secrets,
// trimming spaces and dropping empty entries. Several secrets let an operator
// rotate: configure old and new, switch the provider, then drop the old one.
func ParseSecrets(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func errNotConfigured() error {
	return board.Errorf(board.EUNAVAILABLE, "Billing webhook is not configured: no signing secret is set (-billing-secret).")
}

// stripeVerifier checks Stripe's scheme: Stripe-Signature: t=<unix>,v1=<hex>…
// with v1 = hex(HMAC-SHA256(secret, t + "." + body)).
type stripeVerifier struct {
	keys [][]byte
}

// NewStripeVerifier returns a Verifier for Stripe's signature scheme. Each
// secret (as Stripe shows it, "whsec_…") is used whole as the HMAC key; a
// delivery is accepted when any v1 signature matches any secret. With no
// secrets, every Verify returns EUNAVAILABLE.
func NewStripeVerifier(secrets []string) Verifier {
	v := &stripeVerifier{}
	for _, s := range secrets {
		if s != "" {
			v.keys = append(v.keys, []byte(s))
		}
	}
	return v
}

func (v *stripeVerifier) Verify(h http.Header, body []byte, now time.Time) error {
	if len(v.keys) == 0 {
		return errNotConfigured()
	}
	header := h.Get(HeaderStripeSignature)
	if header == "" {
		return board.Errorf(board.EINVALID, "Stripe-Signature header is missing.")
	}
	ts, sigs, err := parseStripeSignature(header)
	if err != nil {
		return err
	}
	if !anyMatch(v.keys, sigs, ts, body) {
		return board.Errorf(board.EINVALID, "Stripe-Signature does not match the body.")
	}
	return checkFresh(ts, now)
}

// parseStripeSignature splits the header into its timestamp and the decoded
// v1 signatures. Other schemes (v0, future ones) are skipped, as Stripe asks;
// a v1 value that is not hex can never match and is dropped.
func parseStripeSignature(header string) (ts string, sigs [][]byte, err error) {
	malformed := func(why string) error {
		return board.Errorf(board.EINVALID, "Stripe-Signature header is malformed: %s.", why)
	}
	sawV1 := false
	for item := range strings.SplitSeq(header, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || key == "" {
			return "", nil, malformed("every element must be key=value")
		}
		switch key {
		case "t":
			if ts != "" {
				return "", nil, malformed("more than one timestamp")
			}
			if !validUnix(val) {
				return "", nil, malformed("the timestamp is not a Unix time")
			}
			ts = val
		case "v1":
			sawV1 = true
			if sig, err := hex.DecodeString(val); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	if ts == "" {
		return "", nil, malformed("no timestamp (t=)")
	}
	if !sawV1 {
		return "", nil, board.Errorf(board.EINVALID, "Stripe-Signature header has no v1 signature.")
	}
	return ts, sigs, nil
}

// standardVerifier checks the Standard Webhooks scheme: webhook-signature
// holds space-separated "v1,<base64>" entries, each
// base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)).
type standardVerifier struct {
	keys [][]byte
}

// NewStandardVerifier returns a Verifier for the Standard Webhooks scheme.
// Each secret is "whsec_" followed by the base64 of the key (the prefix may
// be left out); a delivery is accepted when any v1 entry matches any secret.
// It returns EINVALID when a secret is not valid base64 (the message never
// contains the secret). With no secrets, every Verify returns EUNAVAILABLE.
func NewStandardVerifier(secrets []string) (Verifier, error) {
	v := &standardVerifier{}
	for i, s := range secrets {
		if s == "" {
			continue
		}
		key, err := decodeStandardSecret(s)
		if err != nil {
			return nil, board.Errorf(board.EINVALID, "Billing secret #%d is not a Standard Webhooks secret (whsec_ followed by base64).", i+1)
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

func decodeStandardSecret(s string) ([]byte, error) {
	b64 := strings.TrimPrefix(s, "whsec_")
	// Accept the secret with or without "=" padding; both are in the wild.
	key, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
	if err != nil {
		return nil, err
	}
	if len(key) == 0 {
		return nil, board.Errorf(board.EINVALID, "empty key")
	}
	return key, nil
}

func (v *standardVerifier) Verify(h http.Header, body []byte, now time.Time) error {
	if len(v.keys) == 0 {
		return errNotConfigured()
	}
	id, ts, sigHeader := h.Get(HeaderWebhookID), h.Get(HeaderWebhookTimestamp), h.Get(HeaderWebhookSignature)
	switch {
	case id == "":
		return board.Errorf(board.EINVALID, "webhook-id header is missing.")
	case ts == "":
		return board.Errorf(board.EINVALID, "webhook-timestamp header is missing.")
	case sigHeader == "":
		return board.Errorf(board.EINVALID, "webhook-signature header is missing.")
	case !validUnix(ts):
		return board.Errorf(board.EINVALID, "webhook-timestamp header is malformed: not a Unix time.")
	}
	var sigs [][]byte
	sawV1 := false
	for entry := range strings.FieldsSeq(sigHeader) {
		version, val, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue // other versions (v1a is Ed25519) are not ours to check
		}
		sawV1 = true
		if sig, err := base64.StdEncoding.DecodeString(val); err == nil {
			sigs = append(sigs, sig)
		}
	}
	if !sawV1 {
		return board.Errorf(board.EINVALID, "webhook-signature header has no v1 signature.")
	}
	prefixed := id + "." + ts
	if !anyMatch(v.keys, sigs, prefixed, body) {
		return board.Errorf(board.EINVALID, "webhook-signature does not match the body.")
	}
	return checkFresh(ts, now)
}

// anyMatch reports whether any signature in sigs equals HMAC-SHA256 under any
// key of prefix + "." + body. Comparison is constant-time per candidate.
func anyMatch(keys, sigs [][]byte, prefix string, body []byte) bool {
	for _, key := range keys {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(prefix))
		mac.Write([]byte{'.'})
		mac.Write(body)
		want := mac.Sum(nil)
		for _, sig := range sigs {
			if hmac.Equal(sig, want) {
				return true
			}
		}
	}
	return false
}

// validUnix reports whether s is a plain decimal Unix time that fits int64;
// signs and spaces are refused because the string is signed as sent.
func validUnix(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkFresh refuses a timestamp more than Tolerance before or after now.
// Whole seconds are compared, so exactly 300 s passes and 301 s fails.
func checkFresh(ts string, now time.Time) error {
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return board.Errorf(board.EINVALID, "Signature timestamp is malformed.")
	}
	diff := now.Unix() - t
	if diff > int64(Tolerance/time.Second) || diff < -int64(Tolerance/time.Second) {
		return board.Errorf(board.EINVALID, "Signature timestamp is more than %d minutes from the server's clock.", int(Tolerance/time.Minute))
	}
	return nil
}
