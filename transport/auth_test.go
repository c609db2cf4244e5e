package transport_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/auth/authtest"
	"corkboard/board"
	"corkboard/persist"
	"corkboard/transport"
)

// authT0 is the clock's start in these tests.
var authT0 = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

type authOpts struct {
	cfg        auth.Config
	trustProxy bool
	// wrap, when set, wraps the mailer (to gate or observe sends).
	wrap func(auth.Mailer) auth.Mailer
	// outbox uses the no-SMTP mailer (log and <data>/outbox) instead of the sink.
	outbox bool
}

// authEnv is the whole login stack: a real bbolt file in a temp folder, the
// auth service mailing through a real SMTP conversation to an in-process
// sink, and the HTTP API on httptest. Its clock is shared by storage, codes,
// sessions and rate limits, and survives restarts.
type authEnv struct {
	tb    testing.TB
	opts  authOpts
	dir   string
	sink  *authtest.Sink
	clock *authtest.Clock
	log   *slog.Logger
	logs  *authtest.LogBuffer

	db  *persist.DB
	svc *auth.Service
	srv *httptest.Server
}

func newAuthEnv(tb testing.TB, opts authOpts) *authEnv {
	tb.Helper()
	log, logs := authtest.NewLogger(tb)
	e := &authEnv{tb: tb, opts: opts, dir: tb.TempDir(), sink: authtest.NewSink(tb),
		clock: authtest.NewClock(authT0), log: log, logs: logs}
	e.start()
	tb.Cleanup(e.stop)
	return e
}

func (e *authEnv) start() {
	e.tb.Helper()
	db, err := persist.Open(e.dir)
	if err != nil {
		e.tb.Fatal(err)
	}
	db.Now = e.clock.Now
	smtpURL := e.sink.URL()
	if e.opts.outbox {
		smtpURL = ""
	}
	mailer, err := auth.NewMailer(smtpURL, "", filepath.Join(e.dir, "outbox"), e.log)
	if err != nil {
		e.tb.Fatal(err)
	}
	if e.opts.wrap != nil {
		mailer = e.opts.wrap(mailer)
	}
	e.db = db
	e.svc = auth.New(db, mailer, e.opts.cfg, e.log)
	e.svc.Start(context.Background())
	e.srv = httptest.NewServer(transport.New(
		transport.Config{PublicURL: "https://corkboard.example", TrustProxy: e.opts.trustProxy, DefaultPlan: "free"},
		transport.Deps{DB: db, Auth: e.svc},
		e.log,
	))
}

// stop shuts down as cmd does: HTTP, then auth (flushing mail), then storage.
func (e *authEnv) stop() {
	if e.srv == nil {
		return
	}
	e.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.svc.Close(ctx); err != nil {
		e.tb.Errorf("auth Close: %v", err)
	}
	if err := e.db.Close(); err != nil {
		e.tb.Errorf("db Close: %v", err)
	}
	e.srv = nil
}

func (e *authEnv) restart() {
	e.tb.Helper()
	e.stop()
	e.start()
}

type authResp struct {
	status int
	header http.Header
	body   []byte
}

// request sends one request. token, when set, goes in the session cookie;
// body is JSON-encoded unless it is a string; hdr adds headers.
func (e *authEnv) request(method, path, token string, body any, hdr map[string]string) authResp {
	e.tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			e.tb.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.tb.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Cookie", transport.SessionCookie+"="+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.tb.Fatal(err)
	}
	return authResp{status: res.StatusCode, header: res.Header, body: data}
}

func (e *authEnv) sendOTP(email string, hdr map[string]string) authResp {
	e.tb.Helper()
	return e.request("POST", "/api/auth/send-otp", "", map[string]string{"email": email}, hdr)
}

func (e *authEnv) verify(email, code string, hdr map[string]string) authResp {
	e.tb.Helper()
	return e.request("POST", "/api/auth/verify-otp", "", map[string]string{"email": email, "code": code}, hdr)
}

func (e *authEnv) me(token string) authResp {
	e.tb.Helper()
	return e.request("GET", "/api/auth/me", token, nil, nil)
}

// code asks for a code for email and reads it from the SMTP sink.
func (e *authEnv) code(email string) string {
	e.tb.Helper()
	wantResp(e.tb, e.sendOTP(email, nil), http.StatusOK, `{"ok":true}`)
	return e.sink.WaitCode(e.tb, email)
}

// login runs the whole flow and returns the session token.
func (e *authEnv) login(email string) string {
	e.tb.Helper()
	r := e.verify(email, e.code(email), nil)
	wantResp(e.tb, r, http.StatusOK, `{"ok":true}`)
	c := sessionCookieOf(e.tb, r)
	if c.Value == "" {
		e.tb.Fatal("verify-otp set an empty session cookie")
	}
	return c.Value
}

// lastSeen reads the stored last use of the session behind token.
func (e *authEnv) lastSeen(token string) time.Time {
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

// wantResp checks the status and, when want is not "", the exact JSON body.
func wantResp(tb testing.TB, r authResp, status int, want string) {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if want != "" {
		if got := strings.TrimSpace(string(r.body)); got != want {
			tb.Fatalf("body %s, want %s", got, want)
		}
	}
}

// wantError checks status and that the body is {"error": …} naming field.
func wantError(tb testing.TB, r authResp, status int, field string) string {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	var body struct {
		Error string `json:"error"`
		Field string `json:"field"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Error == "" {
		tb.Fatalf("error body %s: want {\"error\": …} (%v)", r.body, err)
	}
	if body.Field != field {
		tb.Fatalf("error field %q, want %q; body %s", body.Field, field, r.body)
	}
	return body.Error
}

// wantRetryAfter checks a 429 and its Retry-After in seconds.
func wantRetryAfter(tb testing.TB, r authResp, seconds int) {
	tb.Helper()
	wantError(tb, r, http.StatusTooManyRequests, "")
	if got := r.header.Get("Retry-After"); got != strconv.Itoa(seconds) {
		tb.Fatalf("Retry-After %q, want %d", got, seconds)
	}
}

func sessionCookieOf(tb testing.TB, r authResp) *http.Cookie {
	tb.Helper()
	res := http.Response{Header: r.header}
	for _, c := range res.Cookies() {
		if c.Name == transport.SessionCookie {
			return c
		}
	}
	tb.Fatalf("no %s cookie in %q", transport.SessionCookie, r.header.Values("Set-Cookie"))
	return nil
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
	e := newAuthEnv(t, authOpts{})
	ctx := context.Background()

	wantResp(t, e.sendOTP("  Alice@Example.COM ", nil), http.StatusOK, `{"ok":true}`)
	code := e.sink.WaitCode(t, "alice@example.com")
	r := e.verify("ALICE@example.com", code, nil)
	wantResp(t, r, http.StatusOK, `{"ok":true}`)

	t.Run("Cookie", func(t *testing.T) {
		c := sessionCookieOf(t, r)
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
	token := sessionCookieOf(t, r).Value

	t.Run("Me", func(t *testing.T) {
		wantResp(t, e.me(token), http.StatusOK, `{"email":"alice@example.com"}`)
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
		wantError(t, e.verify("alice@example.com", code, nil), http.StatusBadRequest, "code")
	})
	t.Run("SecondLoginKeepsUserAndAddsSession", func(t *testing.T) {
		token2 := e.login("alice@example.com")
		if token2 == token {
			t.Fatal("a second login reused the session token")
		}
		wantResp(t, e.me(token2), http.StatusOK, `{"email":"alice@example.com"}`)
		wantResp(t, e.me(token), http.StatusOK, `{"email":"alice@example.com"}`)
	})
	t.Run("Logout", func(t *testing.T) {
		r := e.request("GET", "/api/auth/logout", token, nil, nil)
		wantResp(t, r, http.StatusOK, `{"ok":true}`)
		c := sessionCookieOf(t, r)
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
		wantError(t, e.me(token), http.StatusUnauthorized, "")
		wantError(t, e.request("GET", "/api/auth/logout", token, nil, nil), http.StatusUnauthorized, "")
		wantError(t, e.request("GET", "/api/auth/logout", "", nil, nil), http.StatusUnauthorized, "")
	})
}

// TestAuthOutboxLogin is the README's path: no SMTP server configured, the
// code is read from the log, and the same message lands in <data>/outbox.
func TestAuthOutboxLogin(t *testing.T) {
	sent := make(chan string, 4)
	e := newAuthEnv(t, authOpts{outbox: true, wrap: func(m auth.Mailer) auth.Mailer { return notifyMailer{m, sent} }})
	wantResp(t, e.sendOTP("dev@example.com", nil), http.StatusOK, `{"ok":true}`)
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
	r := e.verify("dev@example.com", m[1], nil)
	wantResp(t, r, http.StatusOK, `{"ok":true}`)
	wantResp(t, e.me(sessionCookieOf(t, r).Value), http.StatusOK, `{"email":"dev@example.com"}`)
	if got := len(e.sink.Messages()); got != 0 {
		t.Fatalf("outbox mode sent %d SMTP messages", got)
	}
}

func TestAuthSendOTPRejects(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
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
			wantError(t, e.request("POST", "/api/auth/send-otp", "", tt.body, nil), tt.status, tt.field)
		})
	}
	// None of them sent mail (the sink got nothing, not even to the address
	// that prefixes an injection attempt).
	wantResp(t, e.sendOTP("probe@example.com", nil), http.StatusOK, `{"ok":true}`)
	e.sink.WaitCode(t, "probe@example.com")
	if got := len(e.sink.Messages()); got != 1 {
		t.Fatalf("sink got %d messages, want only the probe's", got)
	}
}

// TestAuthVerifyRejects: every code that cannot log in is one 400 with one
// message; malformed codes do not use up tries, wrong ones do.
func TestAuthVerifyRejects(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
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
			msg := wantError(t, e.verify(tt.email, tt.code, nil), http.StatusBadRequest, "code")
			if generic == "" {
				generic = msg
			} else if msg != generic {
				t.Fatalf("message %q differs from %q: the reason must not show", msg, generic)
			}
		})
	}
	t.Run("MissingCode", func(t *testing.T) {
		wantError(t, e.request("POST", "/api/auth/verify-otp", "", `{"email":"alice@example.com"}`, nil), 400, "code")
	})
	t.Run("MalformedEmail", func(t *testing.T) {
		wantError(t, e.verify("alice@example.com\r\nX: y", code, nil), http.StatusBadRequest, "email")
	})
	t.Run("CodeAsNumber", func(t *testing.T) {
		wantError(t, e.request("POST", "/api/auth/verify-otp", "", `{"email":"alice@example.com","code":123456}`, nil), 400, "code")
	})
	t.Run("TooLarge", func(t *testing.T) {
		body := `{"email":"alice@example.com","code":"` + strings.Repeat("1", 64<<10) + `"}`
		wantError(t, e.request("POST", "/api/auth/verify-otp", "", body, nil), http.StatusRequestEntityTooLarge, "")
	})
	// Two wrong tries so far (Wrong, AnotherAddresssCode): the code still works.
	t.Run("RightCodeStillWorks", func(t *testing.T) {
		wantResp(t, e.verify("alice@example.com", code, nil), http.StatusOK, `{"ok":true}`)
	})
	t.Run("BobsCodeUntouched", func(t *testing.T) {
		wantResp(t, e.verify("bob@example.com", bobCode, nil), http.StatusOK, `{"ok":true}`)
	})
}

func TestAuthWrongTries(t *testing.T) {
	t.Run("FiveVoidTheCode", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{})
		code := e.code("alice@example.com")
		for i := range 5 {
			wrong := fmt.Sprintf("%06d", (mustAtoi(code)+1+i)%1_000_000)
			wantError(t, e.verify("alice@example.com", wrong, nil), http.StatusBadRequest, "code")
		}
		wantError(t, e.verify("alice@example.com", code, nil), http.StatusBadRequest, "code")
		if _, err := e.db.FindOTP(context.Background(), "alice@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("voided code still stored: %v", err)
		}
		// A new code works again.
		wantResp(t, e.verify("alice@example.com", e.code("alice@example.com"), nil), http.StatusOK, `{"ok":true}`)
	})
	t.Run("FourThenRight", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{})
		code := e.code("alice@example.com")
		for i := range 4 {
			wrong := fmt.Sprintf("%06d", (mustAtoi(code)+1+i)%1_000_000)
			wantError(t, e.verify("alice@example.com", wrong, nil), http.StatusBadRequest, "code")
		}
		wantResp(t, e.verify("alice@example.com", code, nil), http.StatusOK, `{"ok":true}`)
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
			e := newAuthEnv(t, authOpts{})
			code := e.code("alice@example.com")
			e.clock.Advance(tt.after)
			if tt.status == http.StatusOK {
				wantResp(t, e.verify("alice@example.com", code, nil), http.StatusOK, `{"ok":true}`)
			} else {
				wantError(t, e.verify("alice@example.com", code, nil), tt.status, "code")
			}
		})
	}
}

func TestAuthNewCodeVoidsOld(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
	old := e.code("alice@example.com")
	fresh := e.code("alice@example.com")
	for fresh == old {
		fresh = e.code("alice@example.com")
	}
	wantError(t, e.verify("alice@example.com", old, nil), http.StatusBadRequest, "code")
	wantResp(t, e.verify("alice@example.com", fresh, nil), http.StatusOK, `{"ok":true}`)
}

func TestAuthSendOTPLimits(t *testing.T) {
	t.Run("PerEmail", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{trustProxy: true})
		// Spellings normalise to one address, so they share its budget.
		spellings := []string{"alice@example.com", "ALICE@example.com", " alice@example.com", "Alice@Example.com", "alice@EXAMPLE.COM"}
		for i, s := range spellings {
			ip := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1)}
			wantResp(t, e.sendOTP(s, ip), http.StatusOK, `{"ok":true}`)
		}
		wantRetryAfter(t, e.sendOTP("alice@example.com", map[string]string{"X-Forwarded-For": "198.51.100.99"}), 900)
		// Another address is not affected.
		wantResp(t, e.sendOTP("bob@example.com", nil), http.StatusOK, `{"ok":true}`)
		e.clock.Advance(15*time.Minute - time.Second)
		wantRetryAfter(t, e.sendOTP("alice@example.com", nil), 1)
		e.clock.Advance(time.Second)
		wantResp(t, e.sendOTP("alice@example.com", nil), http.StatusOK, `{"ok":true}`)
	})
	t.Run("PerIP", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{trustProxy: true})
		ip := map[string]string{"X-Forwarded-For": "203.0.113.7"}
		for i := range 30 {
			wantResp(t, e.sendOTP(fmt.Sprintf("user%d@example.com", i), ip), http.StatusOK, `{"ok":true}`)
		}
		wantRetryAfter(t, e.sendOTP("user30@example.com", ip), 900)
		// A refused request spent nothing of the address's own budget.
		wantResp(t, e.sendOTP("user30@example.com", map[string]string{"X-Forwarded-For": "203.0.113.8"}), http.StatusOK, `{"ok":true}`)
		e.clock.Advance(15 * time.Minute)
		wantResp(t, e.sendOTP("user31@example.com", ip), http.StatusOK, `{"ok":true}`)
	})
	t.Run("Configured", func(t *testing.T) {
		two, _ := auth.ParseRate("2/1m")
		e := newAuthEnv(t, authOpts{cfg: auth.Config{EmailRate: two}})
		wantResp(t, e.sendOTP("alice@example.com", nil), http.StatusOK, `{"ok":true}`)
		wantResp(t, e.sendOTP("alice@example.com", nil), http.StatusOK, `{"ok":true}`)
		wantRetryAfter(t, e.sendOTP("alice@example.com", nil), 60)
	})
}

// TestAuthForgedForwardedFor: without -trust-proxy a client cannot reset
// the per-IP limit by claiming another address.
func TestAuthForgedForwardedFor(t *testing.T) {
	e := newAuthEnv(t, authOpts{trustProxy: false})
	for i := range 30 {
		forged := map[string]string{"X-Forwarded-For": fmt.Sprintf("192.0.2.%d", i+1), "X-Real-IP": fmt.Sprintf("192.0.2.%d", i+1)}
		wantResp(t, e.sendOTP(fmt.Sprintf("user%d@example.com", i), forged), http.StatusOK, `{"ok":true}`)
	}
	wantRetryAfter(t, e.sendOTP("user30@example.com", map[string]string{"X-Forwarded-For": "192.0.2.200"}), 900)
}

func TestAuthVerifyLimitPerIP(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
	code := e.code("alice@example.com")
	for i := range 30 {
		// Wrong codes spread over addresses, so the per-code void is not what stops them.
		wantError(t, e.verify(fmt.Sprintf("user%d@example.com", i), otherCode(code), nil), http.StatusBadRequest, "code")
	}
	wantRetryAfter(t, e.verify("alice@example.com", code, nil), 900)
	e.clock.Advance(5 * time.Minute)
	wantRetryAfter(t, e.verify("alice@example.com", code, nil), 600)
	e.clock.Advance(10 * time.Minute)
	// The window has passed (and so has the code's lifetime).
	wantError(t, e.verify("alice@example.com", code, nil), http.StatusBadRequest, "code")
}

// TestAuthUnauthorized: a missing, garbage or forged cookie is a 401 on
// every endpoint that needs a session, never a 500.
func TestAuthUnauthorized(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
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
				var hdr map[string]string
				if tt.cookie != "" {
					hdr = map[string]string{"Cookie": tt.cookie}
				}
				wantError(t, e.request("GET", p, "", nil, hdr), http.StatusUnauthorized, "")
			}
		})
	}
	// The good session survived all of that.
	wantResp(t, e.me(good), http.StatusOK, `{"email":"alice@example.com"}`)
}

func TestAuthSessionExpiry(t *testing.T) {
	t.Run("IdleEdge", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{})
		a := e.login("a@example.com")
		b := e.login("b@example.com")
		e.clock.Advance(15*day - time.Second)
		wantResp(t, e.me(a), http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(time.Second)
		wantError(t, e.me(b), http.StatusUnauthorized, "")
		// The expired session was deleted on the way.
		key, _ := auth.SessionKey(b)
		if _, err := e.db.FindSession(context.Background(), key); board.ErrorCode(err) != board.ENOTFOUND {
			t.Fatalf("expired session still stored: %v", err)
		}
	})
	t.Run("UseSlides", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{})
		tok := e.login("a@example.com")
		e.clock.Advance(14 * day)
		wantResp(t, e.me(tok), http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(14 * day) // day 28: 14 days since the last use
		wantResp(t, e.me(tok), http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(15 * day) // 15 days without use
		wantError(t, e.me(tok), http.StatusUnauthorized, "")
	})
	t.Run("AbsoluteCap", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{})
		tok := e.login("a@example.com")
		for range 8 { // used every 10 days up to day 80
			e.clock.Advance(10 * day)
			wantResp(t, e.me(tok), http.StatusOK, `{"email":"a@example.com"}`)
		}
		e.clock.Advance(10*day - time.Second) // day 90 minus a second
		wantResp(t, e.me(tok), http.StatusOK, `{"email":"a@example.com"}`)
		e.clock.Advance(time.Second) // day 90, used the second before
		wantError(t, e.me(tok), http.StatusUnauthorized, "")
	})
	t.Run("ConfiguredCap", func(t *testing.T) {
		e := newAuthEnv(t, authOpts{cfg: auth.Config{SessionMaxAge: 20 * day}})
		r := e.verify("a@example.com", e.code("a@example.com"), nil)
		wantResp(t, r, http.StatusOK, `{"ok":true}`)
		c := sessionCookieOf(t, r)
		if got, want := c.MaxAge, int((20 * day).Seconds()); got != want {
			t.Fatalf("Max-Age %d, want %d", got, want)
		}
		for range 3 {
			e.clock.Advance(5 * day)
			wantResp(t, e.me(c.Value), http.StatusOK, `{"email":"a@example.com"}`)
		}
		e.clock.Advance(5 * day)
		wantError(t, e.me(c.Value), http.StatusUnauthorized, "")
	})
}

// TestAuthLastSeenHourly: a request writes the session's last use only when
// the stored one is an hour old.
func TestAuthLastSeenHourly(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
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
		wantResp(t, e.me(tok), http.StatusOK, "")
		if got, want := e.lastSeen(tok), authT0.Add(s.want); !got.Equal(want) {
			t.Fatalf("after a request at +%s: stored last use %v, want %v", s.at, got, want)
		}
	}
}

func TestAuthLogoutOnlyEndsItsSession(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
	laptop := e.login("a@example.com")
	phone := e.login("a@example.com")
	wantResp(t, e.request("GET", "/api/auth/logout", laptop, nil, nil), http.StatusOK, `{"ok":true}`)
	wantError(t, e.me(laptop), http.StatusUnauthorized, "")
	wantResp(t, e.me(phone), http.StatusOK, `{"email":"a@example.com"}`)
}

func TestAuthRestart(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
	tok := e.login("a@example.com")
	code := e.code("b@example.com") // pending across the restart
	e.restart()
	wantResp(t, e.me(tok), http.StatusOK, `{"email":"a@example.com"}`)
	if _, err := e.db.FindUser(context.Background(), "a@example.com"); err != nil {
		t.Fatalf("user lost in restart: %v", err)
	}
	wantResp(t, e.verify("b@example.com", code, nil), http.StatusOK, `{"ok":true}`)
}

func TestAuthCrossSiteRefused(t *testing.T) {
	e := newAuthEnv(t, authOpts{})
	evil := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	wantError(t, e.sendOTP("alice@example.com", evil), http.StatusForbidden, "")
	wantError(t, e.verify("alice@example.com", "123456", evil), http.StatusForbidden, "")
	same := map[string]string{"Origin": "https://corkboard.example", "Sec-Fetch-Site": "same-origin"}
	wantResp(t, e.sendOTP("alice@example.com", same), http.StatusOK, `{"ok":true}`)
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
	e := newAuthEnv(t, authOpts{wrap: func(m auth.Mailer) auth.Mailer { return gatedMailer{m, gate} }})
	t.Cleanup(func() { open.Do(func() { close(gate) }) }) // runs before the env stops
	if _, err := e.db.EnsureUser(context.Background(), "known@example.com", "free"); err != nil {
		t.Fatal(err)
	}

	known := e.sendOTP("known@example.com", nil)
	unknown := e.sendOTP("unknown@example.com", nil)
	// Both answered while no mail could leave: sending is off the request path.
	if n := len(e.sink.Messages()); n != 0 {
		t.Fatalf("sink has %d messages while the mailer is held", n)
	}
	wantResp(t, known, http.StatusOK, `{"ok":true}`)
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
	e := newAuthEnv(t, authOpts{})
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
	r := e.verify("alice@example.com", code, nil)
	wantResp(t, r, http.StatusOK, `{"ok":true}`)
	tok := sessionCookieOf(t, r).Value
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
