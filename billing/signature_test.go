package billing_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/board"
)

// The test's own signers follow the providers' documentation, separately from
// the package's code: Stripe signs "<t>.<body>" with the whole secret as the
// key and sends lower-case hex; Standard Webhooks signs "<id>.<t>.<body>" with
// the base64-decoded part of the secret after "whsec_" and sends base64.

func stripeSig(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10) + "." + string(body)))
	return hex.EncodeToString(mac.Sum(nil))
}

func stripeHeader(secret string, ts int64, body []byte) http.Header {
	h := http.Header{}
	h.Set("Stripe-Signature", "t="+strconv.FormatInt(ts, 10)+",v1="+stripeSig(secret, ts, body))
	return h
}

func standardSig(tb testing.TB, secret, id string, ts int64, body []byte) string {
	tb.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		tb.Fatalf("test secret: %v", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + string(body)))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func standardHeader(tb testing.TB, secret, id string, ts int64, body []byte) http.Header {
	tb.Helper()
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", standardSig(tb, secret, id, ts, body))
	return h
}

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

const (
	stripeSecret    = "whsec_test_5f2b8c1d9e4a7b3c6d0e1f2a3b4c5d6e"
	stripeOldSecret = "whsec_test_old_0a1b2c3d4e5f60718293a4b5c6d7e8f9"
)

// now is the server clock in the signature tests.
var now = time.Unix(1794052800, 0)

func TestStripeVerifier(t *testing.T) {
	body := readFixture(t, "checkout_session_completed.json")
	ts := now.Unix()
	header := func(value string) http.Header {
		h := http.Header{}
		h.Set("Stripe-Signature", value)
		return h
	}
	sig := stripeSig(stripeSecret, ts, body)
	tsStr := strconv.FormatInt(ts, 10)

	ok := []struct {
		name    string
		secrets []string
		h       http.Header
		now     time.Time
	}{
		{"OK", []string{stripeSecret}, stripeHeader(stripeSecret, ts, body), now},
		{"OKExactly300sOld", []string{stripeSecret}, stripeHeader(stripeSecret, ts-300, body), now},
		{"OKExactly300sAhead", []string{stripeSecret}, stripeHeader(stripeSecret, ts+300, body), now},
		// Whole seconds are compared: 300.999 s is still 300 s.
		{"OKFractionalSecond", []string{stripeSecret}, stripeHeader(stripeSecret, ts-300, body), now.Add(999 * time.Millisecond)},
		// Stripe sends one v1 per active secret while it rolls its secret.
		{"OKSecondV1", []string{stripeSecret}, header("t=" + tsStr + ",v1=" + stripeSig(stripeOldSecret, ts, body) + ",v1=" + sig), now},
		{"OKFirstV1", []string{stripeSecret}, header("t=" + tsStr + ",v1=" + sig + ",v1=" + stripeSig(stripeOldSecret, ts, body)), now},
		// Our own rotation: old and new secret both configured.
		{"OKSecondSecret", []string{stripeOldSecret, stripeSecret}, stripeHeader(stripeSecret, ts, body), now},
		{"OKFirstSecret", []string{stripeSecret, stripeOldSecret}, stripeHeader(stripeSecret, ts, body), now},
		{"OKEmptySecretSkipped", []string{"", stripeSecret}, stripeHeader(stripeSecret, ts, body), now},
		{"OKV0Ignored", []string{stripeSecret}, header("t=" + tsStr + ",v1=" + sig + ",v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39"), now},
		{"OKTimestampLast", []string{stripeSecret}, header("v1=" + sig + ",t=" + tsStr), now},
		{"OKNonHexV1BesideGood", []string{stripeSecret}, header("t=" + tsStr + ",v1=zz,v1=" + sig), now},
		{"OKUpperCaseHex", []string{stripeSecret}, header("t=" + tsStr + ",v1=" + strings.ToUpper(sig)), now},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			v := billing.NewStripeVerifier(tt.secrets)
			if err := v.Verify(tt.h, body, tt.now); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}

	tampered := append([]byte(nil), body...)
	tampered = []byte(strings.Replace(string(tampered), `"payment_status": "paid"`, `"payment_status": "paid" `, 1))
	bad := []struct {
		name    string
		h       http.Header
		body    []byte
		now     time.Time
		wantMsg string
	}{
		{"ErrMissingHeader", http.Header{}, body, now, "missing"},
		{"ErrEmptyHeader", header(""), body, now, "missing"},
		{"ErrGarbage", header("garbage"), body, now, "malformed"},
		{"ErrNoTimestamp", header("v1=" + sig), body, now, "no timestamp"},
		{"ErrEmptyTimestamp", header("t=,v1=" + sig), body, now, "not a Unix time"},
		{"ErrTimestampNotNumber", header("t=abc,v1=" + sig), body, now, "not a Unix time"},
		{"ErrTimestampSigned", header("t=+" + tsStr + ",v1=" + sig), body, now, "not a Unix time"},
		{"ErrTimestampNegative", header("t=-1,v1=" + sig), body, now, "not a Unix time"},
		{"ErrTimestampHuge", header("t=99999999999999999999,v1=" + sig), body, now, "not a Unix time"},
		{"ErrTwoTimestamps", header("t=" + tsStr + ",t=" + tsStr + ",v1=" + sig), body, now, "more than one timestamp"},
		{"ErrEmptyElement", header("t=" + tsStr + ",,v1=" + sig), body, now, "key=value"},
		{"ErrNoV1", header("t=" + tsStr + ",v0=" + sig), body, now, "no v1"},
		{"ErrNonHexV1", header("t=" + tsStr + ",v1=not-hex"), body, now, "does not match"},
		{"ErrTamperedBody", stripeHeader(stripeSecret, ts, body), tampered, now, "does not match"},
		{"ErrEmptyBody", stripeHeader(stripeSecret, ts, body), nil, now, "does not match"},
		{"ErrWrongSecret", stripeHeader(stripeOldSecret, ts, body), body, now, "does not match"},
		// The signature covers t: moving t to look fresh breaks it.
		{"ErrTimestampMoved", header("t=" + strconv.FormatInt(ts+1, 10) + ",v1=" + sig), body, now, "does not match"},
		{"ErrTruncatedSig", header("t=" + tsStr + ",v1=" + sig[:62]), body, now, "does not match"},
		{"Err301sOld", stripeHeader(stripeSecret, ts-301, body), body, now, "5 minutes"},
		{"Err301sAhead", stripeHeader(stripeSecret, ts+301, body), body, now, "5 minutes"},
		{"ErrDayOld", stripeHeader(stripeSecret, ts-86400, body), body, now, "5 minutes"},
	}
	v := billing.NewStripeVerifier([]string{stripeSecret})
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Verify(tt.h, tt.body, tt.now)
			assertInvalid(t, err, tt.wantMsg)
			if strings.Contains(err.Error(), stripeSecret) {
				t.Fatalf("error %q contains the secret", err)
			}
		})
	}
}

func TestStripeVerifier_NoSecret(t *testing.T) {
	body := readFixture(t, "checkout_session_completed.json")
	for _, secrets := range [][]string{nil, {}, {""}} {
		v := billing.NewStripeVerifier(secrets)
		err := v.Verify(stripeHeader(stripeSecret, now.Unix(), body), body, now)
		assertCode(t, err, board.EUNAVAILABLE, "no signing secret")
	}
}

// The Standard Webhooks specification publishes this vector; the test's own
// signer must reproduce it, and the verifier must accept it.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestStandardVerifier_Vector(t *testing.T) {
	if got := standardSig(t, vectorSecret, vectorID, vectorTS, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("test signer gives %q, want the published %q", got, vectorSig)
	}
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTS))
	h.Set("webhook-signature", vectorSig)
	for _, secret := range []string{vectorSecret, strings.TrimPrefix(vectorSecret, "whsec_")} {
		v, err := billing.NewStandardVerifier([]string{secret})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(h, []byte(vectorBody), time.Unix(vectorTS, 0)); err != nil {
			t.Fatalf("secret %q: Verify: %v", secret, err)
		}
	}
}

func TestStandardVerifier(t *testing.T) {
	// A 32-byte key, whose base64 carries "=" padding.
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("corkboard-standard-webhooks-key!"))
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("an-older-key-that-was-rotated-out"))
	body := readFixture(t, "customer_subscription_updated.json")
	id := "msg_2mQd8fJxYzE3rTbN1kLp0aWc"
	ts := now.Unix()
	with := func(h http.Header, key, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(key)
		} else {
			h.Set(key, value)
		}
		return h
	}
	good := standardHeader(t, secret, id, ts, body)
	goodSig := good.Get("webhook-signature")

	ok := []struct {
		name    string
		secrets []string
		h       http.Header
		now     time.Time
	}{
		{"OK", []string{secret}, good, now},
		{"OKExactly300sOld", []string{secret}, standardHeader(t, secret, id, ts-300, body), now},
		{"OKExactly300sAhead", []string{secret}, standardHeader(t, secret, id, ts+300, body), now},
		{"OKSecondEntry", []string{secret}, with(good, "webhook-signature", "v1,bm9wZQ== "+goodSig), now},
		{"OKOtherVersionsSkipped", []string{secret}, with(good, "webhook-signature", "v1a,aGVsbG8= junk "+goodSig), now},
		{"OKRotatedSecret", []string{other, secret}, good, now},
		{"OKUnpaddedSecret", []string{strings.TrimRight(secret, "=")}, good, now},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			v, err := billing.NewStandardVerifier(tt.secrets)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Verify(tt.h, body, tt.now); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}

	tampered := []byte(strings.Replace(string(body), `"status": "active"`, `"status": "trialing"`, 1))
	bad := []struct {
		name    string
		h       http.Header
		body    []byte
		wantMsg string
	}{
		{"ErrMissingID", with(good, "webhook-id", ""), body, "webhook-id header is missing"},
		{"ErrMissingTimestamp", with(good, "webhook-timestamp", ""), body, "webhook-timestamp header is missing"},
		{"ErrMissingSignature", with(good, "webhook-signature", ""), body, "webhook-signature header is missing"},
		{"ErrTimestampNotNumber", with(good, "webhook-timestamp", "yesterday"), body, "malformed"},
		{"ErrTimestampMillis", with(good, "webhook-timestamp", "1794052800000000000000"), body, "malformed"},
		{"ErrNoV1", with(good, "webhook-signature", "v1a,"+strings.TrimPrefix(goodSig, "v1,")), body, "no v1"},
		{"ErrNoComma", with(good, "webhook-signature", strings.TrimPrefix(goodSig, "v1,")), body, "no v1"},
		{"ErrBadBase64", with(good, "webhook-signature", "v1,%%%"), body, "does not match"},
		{"ErrTamperedBody", good, tampered, "does not match"},
		{"ErrOtherID", with(good, "webhook-id", "msg_someone_else"), body, "does not match"},
		{"ErrTimestampMoved", with(good, "webhook-timestamp", strconv.FormatInt(ts+1, 10)), body, "does not match"},
		{"ErrWrongSecret", standardHeader(t, other, id, ts, body), body, "does not match"},
		{"Err301sOld", standardHeader(t, secret, id, ts-301, body), body, "5 minutes"},
		{"Err301sAhead", standardHeader(t, secret, id, ts+301, body), body, "5 minutes"},
	}
	v, err := billing.NewStandardVerifier([]string{secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Verify(tt.h, tt.body, now)
			assertInvalid(t, err, tt.wantMsg)
			if strings.Contains(err.Error(), strings.TrimPrefix(secret, "whsec_")) {
				t.Fatalf("error %q contains the secret", err)
			}
		})
	}
}

func TestNewStandardVerifier_Err(t *testing.T) {
	for _, secret := range []string{"whsec_not*base64!", "whsec_", "whsec_===="} {
		t.Run(secret, func(t *testing.T) {
			_, err := billing.NewStandardVerifier([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", secret})
			assertInvalid(t, err, "secret #2")
			if key := strings.TrimPrefix(secret, "whsec_"); key != "" && strings.Contains(err.Error(), key) {
				t.Fatalf("error %q contains the secret", err)
			}
		})
	}
}

func TestStandardVerifier_NoSecret(t *testing.T) {
	v, err := billing.NewStandardVerifier(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTS))
	h.Set("webhook-signature", vectorSig)
	assertCode(t, v.Verify(h, []byte(vectorBody), time.Unix(vectorTS, 0)), board.EUNAVAILABLE, "no signing secret")
}

func TestNewVerifier(t *testing.T) {
	body := []byte(vectorBody)
	stripe := stripeHeader(vectorSecret, vectorTS, body)
	standard := http.Header{}
	standard.Set("webhook-id", vectorID)
	standard.Set("webhook-timestamp", strconv.Itoa(vectorTS))
	standard.Set("webhook-signature", vectorSig)
	tests := []struct {
		provider string
		h        http.Header
	}{
		{"", stripe},
		{billing.ProviderStripe, stripe},
		{billing.ProviderStandard, standard},
	}
	for _, tt := range tests {
		t.Run("provider="+tt.provider, func(t *testing.T) {
			v, err := billing.NewVerifier(tt.provider, []string{vectorSecret})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Verify(tt.h, body, time.Unix(vectorTS, 0)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
	t.Run("ErrUnknownProvider", func(t *testing.T) {
		_, err := billing.NewVerifier("paddle", []string{vectorSecret})
		assertInvalid(t, err, "Unknown billing provider")
	})
	t.Run("ErrStandardBadSecret", func(t *testing.T) {
		_, err := billing.NewVerifier(billing.ProviderStandard, []string{"whsec_!!"})
		assertInvalid(t, err, "not a Standard Webhooks secret")
	})
}

func TestParseSecrets(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"whsec_a", []string{"whsec_a"}},
		{"whsec_a,whsec_b", []string{"whsec_a", "whsec_b"}},
		{" whsec_a , ,whsec_b ,", []string{"whsec_a", "whsec_b"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := billing.ParseSecrets(tt.in)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("ParseSecrets(%q)=%q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
