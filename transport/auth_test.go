package transport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/board"
	"corkboard/ratelimit"
)

// authT0 is the clock's start in these tests.
var authT0 = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// newAuthEnv is the server as the login tests need it: auth's own rate
// limits, a clock stopped at authT0 that storage, codes, sessions and rate
// limits share (and that survives restarts), and its own public origin.
func newAuthEnv(tb testing.TB, opts ...option) *env {
	tb.Helper()
	return newEnv(tb, append([]option{withClock(authT0), withAuth(auth.Config{}), withPublicURL("https://corkboard.example")}, opts...)...)
}

// me is GET /api/auth/me for the session.
func (e *env) me(token string) answer {
	e.tb.Helper()
	return e.do("GET", "/api/auth/me", token, nil)
}

// lastSeen reads the stored last use of the session behind token.
func (e *env) lastSeen(token string) time.Time {
	e.tb.Helper()
	key, err := auth.SessionKey(token)
	if err != nil {
		e.tb.Fatal(err)
	}
	s, err := e.db.FindSession(context.Background(), key)
	if err != nil {
		e.tb.Fatalf("FindSession: %v", err)
	}
	return s.LastSeen
}

// wantRetryAfter checks a 429 and its Retry-After in seconds.
func wantRetryAfter(tb testing.TB, r answer, seconds int) {
	tb.Helper()
	r.wantError(tb, http.StatusTooManyRequests, "")
	if got := r.header.Get("Retry-After"); got != strconv.Itoa(seconds) {
		tb.Fatalf("Retry-After %q, want %d", got, seconds)
	}
}

// otherCode is a valid-looking code that is not code.
func otherCode(code string) string {
	return fmt.Sprintf("%06d", (mustAtoi(code)+1)%1_000_000)
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestAuthLoginFlow(t *testing.T) {
	e := newAuthEnv(t)
	ctx := context.Background()

	e.sendOTP("  Alice@Example.COM ").wantBody(t, http.StatusOK, `{"ok":true}`)
	code := e.sink.WaitCode(t, "alice@example.com")
	r := e.verify("ALICE@example.com", code)
	r.wantBody(t, http.StatusOK, `{"ok":true}`)

	t.Run("Cookie", func(t *testing.T) {
		c := r.sessionCookie(t)
		if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" {
			t.Fatalf("cookie %+v: want HttpOnly, Secure, SameSite=Strict, Path=/, no Domain", c)
		}
		if got, want := c.MaxAge, int((90 * day).Seconds()); got != want {
			t.Fatalf("Max-Age %d, want %d (the absolute cap)", got, want)
		}
		raw, err := base64.RawURLEncoding.DecodeString(c.Value)
		if err != nil || len(raw) != 32 {
			t.Fatalf("token %q: want 32 bytes of unpadded base64url (%v)", c.Value, err)
		}
	})
	token := r.sessionCookie(t).Value

	t.Run("Me", func(t *testing.T) {
		e.me(token).wantBody(t, http.StatusOK, `{"email":"alice@example.com"}`)
	})
	t.Run("UserCreatedOnFree", func(t *testing.T) {
		u, err := e.db.FindUser(ctx, "alice@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if u.Plan != "free" || !u.CreatedAt.Equal(authT0) {
			t.Fatalf("user %+v: want plan free created at %v", u, authT0)
		}
	})
	t.Run("CodeIsSingleUse", func(t *testing.T) {
		e.verify("alice@example.com", code).wantError(t, http.StatusBadRequest, "code")
	})
	t.Run("SecondLoginKeepsUserAndAddsSession", func(t *testing.T) {
		token2 := e.login("alice@example.com")
		if token2 == token {
			t.Fatal("a second login reused the session token")
		}
		e.me(token2).wantBody(t, http.StatusOK, `{"email":"alice@example.com"}`)
		e.me(token).wantBody(t, http.StatusOK, `{"email":"alice@example.com"}`)
	})
	t.Run("Logout", func(t *testing.T) { testLogout(t, e, token) })
}

// testLogout: logout empties the cookie with the same attributes, deletes the session, and a second logout is refused.
func testLogout(t *testing.T, e *env, token string) {
	ctx := context.Background()
	r := e.do("GET", "/api/auth/logout", token, nil)
	r.wantBody(t, http.StatusOK, `{"ok":true}`)
	c := r.sessionCookie(t)
	if c.Value != "" || c.MaxAge >= 0 || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("logout cookie %+v: want an emptied cookie with Max-Age=0 and the same attributes", c)
	}
	if set := r.header.Get("Set-Cookie"); !strings.Contains(set, "Max-Age=0") {
		t.Fatalf("Set-Cookie %q lacks Max-Age=0", set)
	}
	key, _ := auth.SessionKey(token)
	if _, err := e.db.FindSession(ctx, key); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("session still stored after logout: %v", err)
	}
	e.me(token).wantError(t, http.StatusUnauthorized, "")
	e.do("GET", "/api/auth/logout", token, nil).wantError(t, http.StatusUnauthorized, "")
	e.do("GET", "/api/auth/logout", "", nil).wantError(t, http.StatusUnauthorized, "")
}

// TestAuthOutboxLogin is the README's path: no SMTP server configured, the
// code is read from the log, and the same message lands in <data>/outbox.
func TestAuthOutboxLogin(t *testing.T) {
	sent := make(chan string, 4)
	e := newAuthEnv(t, withOutbox(), withMailer(func(m auth.Mailer) auth.Mailer { return notifyMailer{m, sent} }))
	e.sendOTP("dev@example.com").wantBody(t, http.StatusOK, `{"ok":true}`)
	<-sent
	m := regexp.MustCompile(`to=dev@example.com subject="Your Corkboard login code: (\d{6})"`).FindStringSubmatch(e.logs.String())
	if m == nil {
		t.Fatalf("no log line with the address and code:\n%s", e.logs.String())
	}
	files, err := filepath.Glob(filepath.Join(e.dir, "outbox", "*.eml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("outbox files %v (%v), want 1", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil || !bytes.Contains(data, []byte(m[1])) {
		t.Fatalf("outbox file lacks the code %s (%v)", m[1], err)
	}
	r := e.verify("dev@example.com", m[1])
	r.wantBody(t, http.StatusOK, `{"ok":true}`)
	e.me(r.sessionCookie(t).Value).wantBody(t, http.StatusOK, `{"email":"dev@example.com"}`)
	if got := len(e.sink.Messages()); got != 0 {
		t.Fatalf("outbox mode sent %d SMTP messages", got)
	}
}

func TestAuthSendOTPRejects(t *testing.T) {
	e := newAuthEnv(t)
	tests := []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"Missing", `{}`, 400, "email"},
		{"Empty", `{"email":""}`, 400, "email"},
		{"NoAt", `{"email":"alice.example.com"}`, 400, "email"},
		{"NoDomainDot", `{"email":"alice@example"}`, 400, "email"},
		{"CRLFHeaderInjection", `{"email":"alice@example.com\r\nBcc: victim@example.org"}`, 400, "email"},
		{"LFHeaderInjection", `{"email":"alice@example.com\nBcc: victim@example.org"}`, 400, "email"},
		{"CRInjection", `{"email":"alice@example.com\rX: y"}`, 400, "email"},
		{"DisplayName", `{"email":"Alice <alice@example.com>"}`, 400, "email"},
		{"TwoAddresses", `{"email":"alice@example.com,bob@example.com"}`, 400, "email"},
		{"NUL", `{"email":"alice@example.com\u0000"}`, 400, "email"},
		{"TooLong", `{"email":"` + strings.Repeat("a", 250) + `@example.com"}`, 400, "email"},
		{"WrongType", `{"email":5}`, 400, "email"},
		{"UnknownField", `{"email":"alice@example.com","admin":true}`, 400, "admin"},
		{"DuplicateKey", `{"email":"alice@example.com","email":"bob@example.com"}`, 400, "email"},
		{"NotJSON", `email=alice@example.com`, 400, "body"},
		{"Trailing", `{"email":"alice@example.com"} {}`, 400, ""},
		{"EmptyBody", ``, 400, ""},
		{"TooLarge", `{"email":"` + strings.Repeat("a", 64<<10) + `@example.com"}`, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.do("POST", "/api/auth/send-otp", "", tt.body).wantError(t, tt.status, tt.field)
		})
	}
	// None of them sent mail (the sink got nothing, not even to the address
	// that prefixes an injection attempt).
	e.sendOTP("probe@example.com").wantBody(t, http.StatusOK, `{"ok":true}`)
	e.sink.WaitCode(t, "probe@example.com")
	if got := len(e.sink.Messages()); got != 1 {
		t.Fatalf("sink got %d messages, want only the probe's", got)
	}
}

// TestAuthVerifyRejects: every code that cannot log in is one 400 with one
// message; malformed codes do not use up tries, wrong ones do.
func TestAuthVerifyRejects(t *testing.T) {
	e := newAuthEnv(t)
	code := e.code("alice@example.com")
	bobCode := e.code("bob@example.com")
	for bobCode == code { // one chance in a million; ask again
		bobCode = e.code("bob@example.com")
	}

	var generic string
	tests := []struct {
		name  string
		email string
		code  string
	}{
		{"Wrong", "alice@example.com", otherCode(code)},
		{"AnotherAddresssCode", "alice@example.com", bobCode},
		{"FiveDigits", "alice@example.com", code[:5]},
		{"SevenDigits", "alice@example.com", code + "0"},
		{"Letters", "alice@example.com", "12a456"},
		{"NonASCIIDigits", "alice@example.com", "١٢٣٤٥٦"},
		{"FullwidthDigits", "alice@example.com", "１２３４５６"},
		{"Spaces", "alice@example.com", " " + code[:5]},
		{"Padded", "alice@example.com", code + " "},
		{"Empty", "alice@example.com", ""},
		{"NoCodePending", "nobody@example.com", code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := e.verify(tt.email, tt.code).wantError(t, http.StatusBadRequest, "code")
			if generic == "" {
				generic = msg
			} else if msg != generic {
				t.Fatalf("message %q differs from %q: the reason must not show", msg, generic)
			}
		})
	}
	t.Run("MissingCode", func(t *testing.T) {
		e.do("POST", "/api/auth/verify-otp", "", `{"email":"alice@example.com"}`).wantError(t, 400, "code")
	})
	t.Run("MalformedEmail", func(t *testing.T) {
		e.verify("alice@example.com\r\nX: y", code).wantError(t, http.StatusBadRequest, "email")
	})
	t.Run("CodeAsNumber", func(t *testing.T) {
		e.do("POST", "/api/auth/verify-otp", "", `{"email":"alice@example.com","code":123456}`).wantError(t, 400, "code")
	})
	t.Run("TooLarge", func(t *testing.T) {
		body := `{"email":"alice@example.com","code":"` + strings.Repeat("1", 64<<10) + `"}`
		e.do("POST", "/api/auth/verify-otp", "", body).wantError(t, http.StatusRequestEntityTooLarge, "")
	})
	// Two wrong tries so far (Wrong, AnotherAddresssCode): the code still works.
	t.Run("RightCodeStillWorks", func(t *testing.T) {
		e.verify("alice@example.com", code).wantBody(t, http.StatusOK, `{"ok":true}`)
	})
	t.Run("BobsCodeUntouched", func(t *testing.T) {
		e.verify("bob@example.com", bobCode).wantBody(t, http.StatusOK, `{"ok":true}`)
	})
}

func TestAuthWrongTries(t *testing.T) {
	t.Run("FiveVoidTheCode", func(t *testing.T) {
		e := newAuthEnv(t)
		code := e.code("alice@example.com")
		for i := range 5 {
			wrong := fmt.Sprintf("%06d", (mustAtoi(code)+1+i)%1_000_000)
			e.verify("alice@example.com", wrong).wantError(t, http.StatusBadRequest, "code")
		}
		e.verify("alice@example.com", code).wantError(t, http.StatusBadRequest, "code")
		if _, err := e.db.FindOTP(context.Background(), "alice@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("voided code still stored: %v", err)
		}
		// A new code works again.
		e.verify("alice@example.com", e.code("alice@example.com")).wantBody(t, http.StatusOK, `{"ok":true}`)
	})
	t.Run("FourThenRight", func(t *testing.T) {
		e := newAuthEnv(t)
		code := e.code("alice@example.com")
		for i := range 4 {
			wrong := fmt.Sprintf("%06d", (mustAtoi(code)+1+i)%1_000_000)
			e.verify("alice@example.com", wrong).wantError(t, http.StatusBadRequest, "code")
		}
		e.verify("alice@example.com", code).wantBody(t, http.StatusOK, `{"ok":true}`)
	})
}

func TestAuthCodeExpiry(t *testing.T) {
	tests := []struct {
		name   string
		after  time.Duration
		status int
	}{
		{"At9m59s", 9*time.Minute + 59*time.Second, http.StatusOK},
		{"At10m", 10 * time.Minute, http.StatusBadRequest},
		{"At10m01s", 10*time.Minute + time.Second, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newAuthEnv(t)
			code := e.code("alice@example.com")
			e.clock.Advance(tt.after)
			if tt.status == http.StatusOK {
				e.verify("alice@example.com", code).wantBody(t, http.StatusOK, `{"ok":true}`)
			} else {
				e.verify("alice@example.com", code).wantError(t, tt.status, "code")
			}
		})
	}
}

func TestAuthNewCodeVoidsOld(t *testing.T) {
	e := newAuthEnv(t)
	old := e.code("alice@example.com")
	fresh := e.code("alice@example.com")
	for fresh == old {
		fresh = e.code("alice@example.com")
	}
	e.verify("alice@example.com", old).wantError(t, http.StatusBadRequest, "code")
	e.verify("alice@example.com", fresh).wantBody(t, http.StatusOK, `{"ok":true}`)
}

func TestAuthSendOTPLimits(t *testing.T) {
	t.Run("PerEmail", func(t *testing.T) {
		e := newAuthEnv(t, withTrustProxy())
		// Spellings normalise to one address, so they share its budget.
		spellings := []string{"alice@example.com", "ALICE@example.com", " alice@example.com", "Alice@Example.com", "alice@EXAMPLE.COM"}
		for i, s := range spellings {
			ip := http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i+1)}}
			e.sendOTP(s, ip).wantBody(t, http.StatusOK, `{"ok":true}`)
		}
		wantRetryAfter(t, e.sendOTP("alice@example.com", http.Header{"X-Forwarded-For": {"198.51.100.99"}}), 900)
		// Another address is not affected.
		e.sendOTP("bob@example.com").wantBody(t, http.StatusOK, `{"ok":true}`)
		e.clock.Advance(15*time.Minute - time.Second)
		wantRetryAfter(t, e.sendOTP("alice@example.com"), 1)
		e.clock.Advance(time.Second)
		e.sendOTP("alice@example.com").wantBody(t, http.StatusOK, `{"ok":true}`)
	})
	t.Run("PerIP", func(t *testing.T) {
		e := newAuthEnv(t, withTrustProxy())
		ip := http.Header{"X-Forwarded-For": {"203.0.113.7"}}
		for i := range 30 {
			e.sendOTP(fmt.Sprintf("user%d@example.com", i), ip).wantBody(t, http.StatusOK, `{"ok":true}`)
		}
		wantRetryAfter(t, e.sendOTP("user30@example.com", ip), 900)
		// A refused request spent nothing of the address's own budget.
		e.sendOTP("user30@example.com", http.Header{"X-Forwarded-For": {"203.0.113.8"}}).wantBody(t, http.StatusOK, `{"ok":true}`)
		e.clock.Advance(15 * time.Minute)
		e.sendOTP("user31@example.com", ip).wantBody(t, http.StatusOK, `{"ok":true}`)
	})
	t.Run("Configured", func(t *testing.T) {
		two, _ := ratelimit.ParseRate("2/1m")
		e := newAuthEnv(t, withAuth(auth.Config{EmailRate: two}))
		e.sendOTP("alice@example.com").wantBody(t, http.StatusOK, `{"ok":true}`)
		e.sendOTP("alice@example.com").wantBody(t, http.StatusOK, `{"ok":true}`)
		wantRetryAfter(t, e.sendOTP("alice@example.com"), 60)
	})
}

// TestAuthForgedForwardedFor: without -trust-proxy a client cannot reset
// the per-IP limit by claiming another address.
func TestAuthForgedForwardedFor(t *testing.T) {
	e := newAuthEnv(t)
	for i := range 30 {
		forged := http.Header{"X-Forwarded-For": {fmt.Sprintf("192.0.2.%d", i+1)}, "X-Real-IP": {fmt.Sprintf("192.0.2.%d", i+1)}}
		e.sendOTP(fmt.Sprintf("user%d@example.com", i), forged).wantBody(t, http.StatusOK, `{"ok":true}`)
	}
	wantRetryAfter(t, e.sendOTP("user30@example.com", http.Header{"X-Forwarded-For": {"192.0.2.200"}}), 900)
}

func TestAuthVerifyLimitPerIP(t *testing.T) {
	e := newAuthEnv(t)
	code := e.code("alice@example.com")
	for i := range 30 {
		// Wrong codes spread over addresses, so the per-code void is not what stops them.
		e.verify(fmt.Sprintf("user%d@example.com", i), otherCode(code)).wantError(t, http.StatusBadRequest, "code")
	}
	wantRetryAfter(t, e.verify("alice@example.com", code), 900)
	e.clock.Advance(5 * time.Minute)
	wantRetryAfter(t, e.verify("alice@example.com", code), 600)
	e.clock.Advance(10 * time.Minute)
	// The window has passed (and so has the code's lifetime).
	e.verify("alice@example.com", code).wantError(t, http.StatusBadRequest, "code")
}

// TestAuthVerifyLimitPerAddressAndNetwork: one network has 10 verify
// attempts an hour at one address, across all of its codes; past them even
// the right code is refused from that network without being looked at,
// while another network (the owner's) is not affected.
func TestAuthVerifyLimitPerAddressAndNetwork(t *testing.T) {
	// Each attempt from its own IP unless a test pins one.
	ipN := 0
	fresh := func() http.Header {
		ipN++
		return http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", ipN)}}
	}
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	wrong := func(code string, i int) string { return fmt.Sprintf("%06d", (mustAtoi(code)+1+i)%1_000_000) }

	t.Run("Edge", func(t *testing.T) {
		e := newAuthEnv(t, withTrustProxy())
		const alice = "alice@example.com"
		attacker := from("203.0.113.5")
		// Nine wrong tries over three codes (each stays under its own five).
		for _, tries := range []int{4, 4, 1} {
			code := e.code(alice)
			for i := range tries {
				e.verify(alice, wrong(code, i), attacker).wantError(t, http.StatusBadRequest, "code")
			}
			if tries == 1 {
				// The 10th attempt is still checked, and logs in.
				e.verify(alice, code, attacker).wantBody(t, http.StatusOK, `{"ok":true}`)
			}
		}
		code := e.code(alice)
		r := e.verify(alice, code, attacker) // the 11th, with the right code
		wantRetryAfter(t, r, 3600)
		if msg := r.wantError(t, http.StatusTooManyRequests, ""); !strings.Contains(msg, "address from your network") {
			t.Fatalf("message %q: want the per-address-and-network limit's", msg)
		}
		// The code was not looked at: still pending, no try counted.
		o, err := e.db.FindOTP(context.Background(), alice)
		if err != nil || o.Attempts != 0 {
			t.Fatalf("pending code after the refused attempt: %+v, %v; want it untouched", o, err)
		}
		// The same code from another network logs in.
		e.verify(alice, code, fresh()).wantBody(t, http.StatusOK, `{"ok":true}`)
		// Other addresses are not affected, from the same network or others.
		e.verify("bob@example.com", e.code("bob@example.com"), attacker).wantBody(t, http.StatusOK, `{"ok":true}`)

		e.clock.Advance(time.Hour - time.Second)
		wantRetryAfter(t, e.verify(alice, "000000", attacker), 1)
		e.clock.Advance(time.Second)
		e.verify(alice, e.code(alice), attacker).wantBody(t, http.StatusOK, `{"ok":true}`)
	})

	t.Run("NoPendingCodeCountsToo", func(t *testing.T) {
		e := newAuthEnv(t, withTrustProxy())
		ip := from("203.0.113.6")
		for range 10 {
			e.verify("dave@example.com", "123456", ip).wantError(t, http.StatusBadRequest, "code")
		}
		wantRetryAfter(t, e.verify("dave@example.com", "123456", ip), 3600)
		e.verify("dave@example.com", "123456", fresh()).wantError(t, http.StatusBadRequest, "code")
	})

	t.Run("MalformedCodesDoNotCount", func(t *testing.T) {
		e := newAuthEnv(t, withTrustProxy())
		for range 20 {
			e.verify("erin@example.com", "12345", fresh()).wantError(t, http.StatusBadRequest, "code")
		}
		e.login("erin@example.com")
	})

	t.Run("IPRefusalSpendsNothingOfTheAddress", func(t *testing.T) {
		one, _ := ratelimit.ParseRate("1/15m")
		two, _ := ratelimit.ParseRate("2/1h")
		e := newAuthEnv(t, withTrustProxy(), withAuth(auth.Config{VerifyIPRate: one, VerifyEmailRate: two}))
		ip := from("203.0.113.5")
		e.verify("bob@example.com", "123456", ip).wantError(t, http.StatusBadRequest, "code")
		for range 3 {
			wantRetryAfter(t, e.verify("alice@example.com", "123456", ip), 900)
		}
		// Alice's two attempts from that network are all still there.
		e.clock.Advance(15 * time.Minute)
		e.verify("alice@example.com", "123456", ip).wantError(t, http.StatusBadRequest, "code")
		e.clock.Advance(15 * time.Minute)
		e.verify("alice@example.com", "123456", ip).wantError(t, http.StatusBadRequest, "code")
		e.clock.Advance(15 * time.Minute)
		wantRetryAfter(t, e.verify("alice@example.com", "123456", ip), 1800)
	})

	t.Run("Configured", func(t *testing.T) {
		three, _ := ratelimit.ParseRate("3/10m")
		e := newAuthEnv(t, withAuth(auth.Config{VerifyEmailRate: three}))
		for range 3 {
			e.verify("alice@example.com", "123456").wantError(t, http.StatusBadRequest, "code")
		}
		wantRetryAfter(t, e.verify("alice@example.com", "123456"), 600)
	})
}

// TestAuthNoCheapLockout: wrong verify-otp calls for someone else's
// address, from other networks, do not keep the owner from logging in,
// however many; once the address's wrong-guess budget is spent, only the
// network that asked for the pending code may try it.
func TestAuthNoCheapLockout(t *testing.T) {
	e := newAuthEnv(t, withTrustProxy())
	const victim = "victim@example.com"
	owner := http.Header{"X-Forwarded-For": {"198.51.100.77"}}
	// 30 attacker networks each ask for a code (the mail goes to the
	// victim; the attacker never sees it) and try 10 wrong ones: 300 calls.
	for n := range 30 {
		ip := http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", n+1)}}
		e.clock.Advance(3 * time.Minute) // send-otp's per-address 5/15m
		e.sendOTP(victim, ip).wantStatus(t, http.StatusOK)
		code := e.sink.WaitCode(t, victim)
		for i := range 10 {
			r := e.verify(victim, fmt.Sprintf("%06d", (mustAtoi(code)+1+i)%1_000_000), ip)
			if r.status != http.StatusBadRequest && r.status != http.StatusTooManyRequests {
				t.Fatalf("attacker's verify: %v", r)
			}
		}
	}
	// The owner, on their own network, asks for a code and logs in.
	e.clock.Advance(15 * time.Minute)
	e.sendOTP(victim, owner).wantStatus(t, http.StatusOK)
	e.verify(victim, e.sink.WaitCode(t, victim), owner).wantBody(t, http.StatusOK, `{"ok":true}`)
}

// TestAuthSendOTPAddressRefusalSpendsIP: the per-IP limit is counted first,
// so sends the per-address limit refuses still use up the client's budget;
// the address of a request the IP limit refuses keeps its own.
func TestAuthSendOTPAddressRefusalSpendsIP(t *testing.T) {
	e := newAuthEnv(t, withTrustProxy())
	ip := http.Header{"X-Forwarded-For": {"203.0.113.9"}}
	for range 5 {
		e.sendOTP("alice@example.com", ip).wantBody(t, http.StatusOK, `{"ok":true}`)
	}
	for range 25 {
		r := e.sendOTP("alice@example.com", ip)
		wantRetryAfter(t, r, 900)
		if msg := r.wantError(t, http.StatusTooManyRequests, ""); !strings.Contains(msg, "address") {
			t.Fatalf("message %q: want the per-address limit's", msg)
		}
	}
	// 5 sent + 25 refused = the IP's 30.
	r := e.sendOTP("bob@example.com", ip)
	wantRetryAfter(t, r, 900)
	if msg := r.wantError(t, http.StatusTooManyRequests, ""); !strings.Contains(msg, "network") {
		t.Fatalf("message %q: want the per-IP limit's", msg)
	}
	e.sendOTP("bob@example.com", http.Header{"X-Forwarded-For": {"203.0.113.10"}}).wantBody(t, http.StatusOK, `{"ok":true}`)
	for range 4 {
		e.sendOTP("bob@example.com", http.Header{"X-Forwarded-For": {"203.0.113.10"}}).wantBody(t, http.StatusOK, `{"ok":true}`)
	}
}

// TestAuthUnauthorized: a missing, garbage or forged cookie is a 401 on
// every endpoint that needs a session, never a 500.
func TestAuthUnauthorized(t *testing.T) {
	e := newAuthEnv(t)
	good := e.login("alice@example.com")
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	raw[0] ^= 1
	flipped := base64.RawURLEncoding.EncodeToString(raw)
	tests := []struct {
		name   string
		cookie string // whole Cookie header; "" sends none
	}{
		{"None", ""},
		{"Empty", "session="},
		{"OtherName", "sessions=" + good},
		{"Garbage", "session=garbage"},
		{"Forged", "session=" + strings.Repeat("A", 43)},
		{"FlippedBit", "session=" + flipped},
		{"Truncated", "session=" + good[:42]},
		{"Extended", "session=" + good + "A"},
		{"StdBase64", "session=" + base64.StdEncoding.EncodeToString(raw)},
		{"Quoted", `session="` + good + `x"`},
		{"NonUTF8", "session=\xff\xfe\xfd"},
		{"Huge", "session=" + strings.Repeat("x", 6000)},
		{"Semicolons", "session=;;;=;session"},
		{"Percent", "session=%00%0d%0a"},
	}
	paths := []string{"/api/auth/me", "/api/auth/logout", "/api/boards"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range paths {
				var hdr http.Header
				if tt.cookie != "" {
					hdr = http.Header{"Cookie": {tt.cookie}}
				}
				e.do("GET", p, "", nil, hdr).wantError(t, http.StatusUnauthorized, "")
			}
		})
	}
	// The good session survived all of that.
	e.me(good).wantBody(t, http.StatusOK, `{"email":"alice@example.com"}`)
}

func TestAuthSessionExpiry(t *testing.T) {
	t.Run("IdleEdge", func(t *testing.T) {
		e := newAuthEnv(t)
		a := e.login("a@example.com")
		b := e.login("b@example.com")
		e.clock.Advance(15*day - time.Second)
		e.me(a).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(time.Second)
		e.me(b).wantError(t, http.StatusUnauthorized, "")
		// The expired session was deleted on the way.
		key, _ := auth.SessionKey(b)
		if _, err := e.db.FindSession(context.Background(), key); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("expired session still stored: %v", err)
		}
	})
	t.Run("UseSlides", func(t *testing.T) {
		e := newAuthEnv(t)
		tok := e.login("a@example.com")
		e.clock.Advance(14 * day)
		e.me(tok).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(14 * day) // day 28: 14 days since the last use
		e.me(tok).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(15 * day) // 15 days without use
		e.me(tok).wantError(t, http.StatusUnauthorized, "")
	})
	t.Run("AbsoluteCap", func(t *testing.T) {
		e := newAuthEnv(t)
		tok := e.login("a@example.com")
		for range 8 { // used every 10 days up to day 80
			e.clock.Advance(10 * day)
			e.me(tok).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
		}
		e.clock.Advance(10*day - time.Second) // day 90 minus a second
		e.me(tok).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(time.Second) // day 90, used the second before
		e.me(tok).wantError(t, http.StatusUnauthorized, "")
	})
	t.Run("ConfiguredCap", func(t *testing.T) {
		e := newAuthEnv(t, withAuth(auth.Config{SessionMaxAge: 20 * day}))
		r := e.verify("a@example.com", e.code("a@example.com"))
		r.wantBody(t, http.StatusOK, `{"ok":true}`)
		c := r.sessionCookie(t)
		if got, want := c.MaxAge, int((20 * day).Seconds()); got != want {
			t.Fatalf("Max-Age %d, want %d", got, want)
		}
		for range 3 {
			e.clock.Advance(5 * day)
			e.me(c.Value).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
		}
		e.clock.Advance(5 * day)
		e.me(c.Value).wantError(t, http.StatusUnauthorized, "")
	})
}

// TestAuthLastSeenHourly: a request writes the session's last use only when
// the stored one is an hour old.
func TestAuthLastSeenHourly(t *testing.T) {
	e := newAuthEnv(t)
	tok := e.login("a@example.com")
	steps := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 0},
		{30 * time.Minute, 0},
		{59*time.Minute + 59*time.Second, 0},
		{61 * time.Minute, 61 * time.Minute},
		{90 * time.Minute, 61 * time.Minute},
		{2*time.Hour + time.Minute, 2*time.Hour + time.Minute},
	}
	for _, s := range steps {
		e.clock.Set(authT0.Add(s.at))
		e.me(tok).wantBody(t, http.StatusOK, "")
		if got, want := e.lastSeen(tok), authT0.Add(s.want); !got.Equal(want) {
			t.Fatalf("after a request at +%s: stored last use %v, want %v", s.at, got, want)
		}
	}
}

func TestAuthLogoutOnlyEndsItsSession(t *testing.T) {
	e := newAuthEnv(t)
	laptop := e.login("a@example.com")
	phone := e.login("a@example.com")
	e.do("GET", "/api/auth/logout", laptop, nil).wantBody(t, http.StatusOK, `{"ok":true}`)
	e.me(laptop).wantError(t, http.StatusUnauthorized, "")
	e.me(phone).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
}

func TestAuthRestart(t *testing.T) {
	e := newAuthEnv(t)
	tok := e.login("a@example.com")
	code := e.code("b@example.com") // pending across the restart
	e.restart()
	e.me(tok).wantBody(t, http.StatusOK, `{"email":"a@example.com"}`)
	if _, err := e.db.FindUser(context.Background(), "a@example.com"); err != nil {
		t.Fatalf("user lost in restart: %v", err)
	}
	e.verify("b@example.com", code).wantBody(t, http.StatusOK, `{"ok":true}`)
}

func TestAuthCrossSiteRefused(t *testing.T) {
	e := newAuthEnv(t)
	evil := http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}
	e.sendOTP("alice@example.com", evil).wantError(t, http.StatusForbidden, "")
	e.verify("alice@example.com", "123456", evil).wantError(t, http.StatusForbidden, "")
	same := http.Header{"Origin": {"https://corkboard.example"}, "Sec-Fetch-Site": {"same-origin"}}
	e.sendOTP("alice@example.com", same).wantBody(t, http.StatusOK, `{"ok":true}`)
	e.sink.WaitCode(t, "alice@example.com")
	if got := e.sink.Count("alice@example.com"); got != 1 {
		t.Fatalf("%d mails, want 1 (the cross-site request must send none)", got)
	}
}

// TestAuthSendOTPNoEnumeration: a known and an unknown address get the same
// answer, and the answer does not wait for the mail.
func TestAuthSendOTPNoEnumeration(t *testing.T) {
	gate := make(chan struct{})
	var open sync.Once
	e := newAuthEnv(t, withMailer(func(m auth.Mailer) auth.Mailer { return gatedMailer{m, gate} }))
	t.Cleanup(func() { open.Do(func() { close(gate) }) }) // runs before the env stops
	if _, err := e.db.EnsureUser(context.Background(), "known@example.com", "free"); err != nil {
		t.Fatal(err)
	}

	known := e.sendOTP("known@example.com")
	unknown := e.sendOTP("unknown@example.com")
	// Both answered while no mail could leave: sending is off the request path.
	if n := len(e.sink.Messages()); n != 0 {
		t.Fatalf("sink has %d messages while the mailer is held", n)
	}
	known.wantBody(t, http.StatusOK, `{"ok":true}`)
	if known.status != unknown.status || !bytes.Equal(known.body, unknown.body) {
		t.Fatalf("known: %d %s; unknown: %d %s", known.status, known.body, unknown.status, unknown.body)
	}
	for _, h := range []string{"Content-Type", "Content-Length", "Cache-Control", "Set-Cookie", "Retry-After"} {
		if known.header.Get(h) != unknown.header.Get(h) {
			t.Errorf("header %s: known %q, unknown %q", h, known.header.Get(h), unknown.header.Get(h))
		}
	}
	open.Do(func() { close(gate) })
	e.sink.WaitCode(t, "known@example.com")
	e.sink.WaitCode(t, "unknown@example.com")
}

// TestAuthDBHoldsNoSecrets: the bbolt file never holds a raw code or token.
func TestAuthDBHoldsNoSecrets(t *testing.T) {
	e := newAuthEnv(t)
	code := e.code("alice@example.com")
	fileHolds := func(needle []byte) bool {
		t.Helper()
		data, err := os.ReadFile(e.db.Path())
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(data, needle)
	}
	if fileHolds([]byte(code)) {
		t.Fatalf("the database file holds the code %s", code)
	}
	r := e.verify("alice@example.com", code)
	r.wantBody(t, http.StatusOK, `{"ok":true}`)
	tok := r.sessionCookie(t).Value
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	for name, needle := range map[string][]byte{"token": []byte(tok), "raw token": raw, "code": []byte(code)} {
		if fileHolds(needle) {
			t.Errorf("the database file holds the %s", name)
		}
	}
	// What it does hold is the SHA-256 of the token.
	sum := sha256.Sum256(raw)
	if !fileHolds(sum[:]) {
		t.Error("the database file lacks the token's SHA-256 (is the session stored?)")
	}
}

// gatedMailer holds each mail until gate is closed.
type gatedMailer struct {
	next auth.Mailer
	gate chan struct{}
}

func (g gatedMailer) Send(ctx context.Context, to, subject, body string) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.next.Send(ctx, to, subject, body)
}

// notifyMailer reports each finished send on done.
type notifyMailer struct {
	next auth.Mailer
	done chan string
}

func (n notifyMailer) Send(ctx context.Context, to, subject, body string) error {
	err := n.next.Send(ctx, to, subject, body)
	n.done <- to
	return err
}
