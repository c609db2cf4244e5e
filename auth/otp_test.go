package auth_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/board"
)

// codeMailer hands each code it is asked to send to the test through a
// channel, so a test waits for a mail without polling.
type codeMailer struct{ codes chan [2]string }

func newCodeMailer() *codeMailer { return &codeMailer{codes: make(chan [2]string, 64)} }

var codeRE = regexp.MustCompile(`\d{6}`)

func (m *codeMailer) Send(ctx context.Context, to, subject, body string) error {
	select {
	case m.codes <- [2]string{to, codeRE.FindString(subject)}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// codeEnv is a started service whose codes the test can read.
type codeEnv struct {
	*svcEnv
	mail *codeMailer
	tb   testing.TB
}

func newCodeEnv(t testing.TB, cfg auth.Config) *codeEnv {
	t.Helper()
	m := newCodeMailer()
	e := newSvc(t, m, cfg)
	e.svc.Start(context.Background())
	return &codeEnv{svcEnv: e, mail: m, tb: t}
}

// send asks for a code for email from ip and returns it.
func (e *codeEnv) send(t testing.TB, email, ip string) string {
	t.Helper()
	if err := e.svc.SendCode(context.Background(), email, ip); err != nil {
		t.Fatalf("SendCode(%s, %s): %v", email, ip, err)
	}
	select {
	case got := <-e.mail.codes:
		if got[0] != email {
			t.Fatalf("mail went to %s, want %s", got[0], email)
		}
		return got[1]
	case <-time.After(10 * time.Second):
		t.Fatalf("no mail for %s", email)
		return ""
	}
}

// wrong is a six-digit code that differs from code in its last digit only.
func wrong(code string) string {
	return code[:5] + string('0'+(code[5]-'0'+1)%10)
}

// otherDigit is code with the digit at position i changed.
func otherDigit(code string, i int) string {
	b := []byte(code)
	b[i] = '0' + (b[i]-'0'+1)%10
	return string(b)
}

const ip1 = "192.0.2.1"

func wantBadCode(t *testing.T, err error, what string) {
	t.Helper()
	if board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("%s: err=%v, want EINVALID", what, err)
	}
	if got, want := board.ErrorMessage(err), "The code is invalid or has expired. Ask for a new one."; got != want {
		t.Fatalf("%s: message %q, want the one answer for every bad code", what, got)
	}
}

func TestVerifyCode(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", testVerifyOK)
	// Every digit takes part in the compare: a code differing in any one
	// position fails, the last one included.
	for i := range auth.CodeLength {
		t.Run(fmt.Sprintf("ErrDigit%d", i+1), func(t *testing.T) {
			e := newCodeEnv(t, auth.Config{})
			code := e.send(t, "ada@example.com", ip1)
			_, err := e.svc.Verify(ctx, "ada@example.com", otherDigit(code, i), ip1)
			wantBadCode(t, err, "a code one digit off")
			if _, err := e.svc.Verify(ctx, "ada@example.com", code, ip1); err != nil {
				t.Fatalf("the right code after one wrong try: %v", err)
			}
		})
	}
	t.Run("ErrExpired", testVerifyErrExpired)
	t.Run("Attempts", testVerifyAttempts)
	t.Run("MalformedDoesNotCount", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		code := e.send(t, "ada@example.com", ip1)
		for _, c := range []string{"", "12345", "1234567", "12a456", "١٢٣٤٥٦", " 12345"} {
			_, err := e.svc.Verify(ctx, "ada@example.com", c, ip1)
			wantBadCode(t, err, fmt.Sprintf("code %q", c))
		}
		if _, err := e.svc.Verify(ctx, "ada@example.com", code, ip1); err != nil {
			t.Fatalf("right code after malformed ones: %v", err)
		}
	})
	t.Run("ErrSingleUse", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		code := e.send(t, "ada@example.com", ip1)
		if _, err := e.svc.Verify(ctx, "ada@example.com", code, ip1); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.Verify(ctx, "ada@example.com", code, ip1)
		wantBadCode(t, err, "the code used a second time")
	})
	t.Run("ErrSingleUseConcurrent", testVerifyErrSingleUseConcurrent)
	t.Run("ErrReplaced", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		old := e.send(t, "ada@example.com", ip1)
		fresh := e.send(t, "ada@example.com", ip1)
		if old == fresh {
			t.Skip("the two codes drawn are equal (one chance in a million)")
		}
		_, err := e.svc.Verify(ctx, "ada@example.com", old, ip1)
		wantBadCode(t, err, "a replaced code")
		if _, err := e.svc.Verify(ctx, "ada@example.com", fresh, ip1); err != nil {
			t.Fatalf("the new code: %v", err)
		}
	})
	t.Run("ErrOtherAddress", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		code := e.send(t, "ada@example.com", ip1)
		e.send(t, "bob@example.com", ip1)
		_, err := e.svc.Verify(ctx, "bob@example.com", code, ip1)
		if err == nil {
			// Bob's own code may equal Ada's (one in a million); then this
			// says nothing, and Ada's code must still work.
			t.Log("bob's code equals ada's")
		}
		if _, err := e.svc.Verify(ctx, "ada@example.com", code, ip1); err != nil {
			t.Fatalf("ada's code after bob tried it: %v", err)
		}
	})
	t.Run("ErrNeverSent", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		_, err := e.svc.Verify(ctx, "ada@example.com", "123456", ip1)
		wantBadCode(t, err, "no code pending")
	})
}

// testVerifyOK: the right code logs in (the address in any case and spacing), creates the user and a session.
func testVerifyOK(t *testing.T) {
	ctx := context.Background()
	e := newCodeEnv(t, auth.Config{})
	code := e.send(t, "ada@example.com", ip1)
	login, err := e.svc.Verify(ctx, " Ada@Example.COM ", code, ip1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := login.Email, "ada@example.com"; got != want {
		t.Fatalf("Email=%q, want %q", got, want)
	}
	if got, want := login.MaxAge, 90*24*time.Hour; got != want {
		t.Fatalf("MaxAge=%v, want %v", got, want)
	}
	email, err := e.svc.Authenticate(ctx, login.Token)
	if err != nil || email != "ada@example.com" {
		t.Fatalf("Authenticate=%q, %v", email, err)
	}
	if u, err := e.db.FindUser(ctx, "ada@example.com"); err != nil || u.Plan != "free" {
		t.Fatalf("user after first login: %+v, %v", u, err)
	}
}

// testVerifyErrExpired: a code is accepted until its TTL, not at it.
func testVerifyErrExpired(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		after time.Duration
		ok    bool
	}{
		{"JustBefore", 10*time.Minute - time.Nanosecond, true},
		{"AtTTL", 10 * time.Minute, false},
		{"Later", time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCodeEnv(t, auth.Config{})
			code := e.send(t, "ada@example.com", ip1)
			e.clock.Advance(tt.after)
			_, err := e.svc.Verify(ctx, "ada@example.com", code, ip1)
			if tt.ok && err != nil {
				t.Fatalf("after %v: %v, want accepted", tt.after, err)
			}
			if !tt.ok {
				wantBadCode(t, err, fmt.Sprintf("after %v", tt.after))
			}
		})
	}
}

// testVerifyAttempts: the right code works after up to four wrong tries, not after five.
func testVerifyAttempts(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		wrong int
		ok    bool
	}{{0, true}, {1, true}, {4, true}, {5, false}, {6, false}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("Wrong%d", tt.wrong), func(t *testing.T) {
			e := newCodeEnv(t, auth.Config{})
			code := e.send(t, "ada@example.com", ip1)
			for i := range tt.wrong {
				_, err := e.svc.Verify(ctx, "ada@example.com", wrong(code), ip1)
				wantBadCode(t, err, fmt.Sprintf("wrong try %d", i+1))
			}
			_, err := e.svc.Verify(ctx, "ada@example.com", code, ip1)
			if tt.ok && err != nil {
				t.Fatalf("right code after %d wrong: %v", tt.wrong, err)
			}
			if !tt.ok {
				wantBadCode(t, err, fmt.Sprintf("right code after %d wrong", tt.wrong))
			}
		})
	}
}

// testVerifyErrSingleUseConcurrent: of concurrent uses of one code, exactly one logs in.
func testVerifyErrSingleUseConcurrent(t *testing.T) {
	ctx := context.Background()
	e := newCodeEnv(t, auth.Config{})
	code := e.send(t, "ada@example.com", ip1)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = e.svc.Verify(ctx, "ada@example.com", code, ip1) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			wantBadCode(t, err, "a concurrent use")
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent uses succeeded, want 1", ok, n)
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	const day = 24 * time.Hour
	login := func(t *testing.T, e *codeEnv) string {
		t.Helper()
		l, err := e.svc.Verify(ctx, "ada@example.com", e.send(t, "ada@example.com", ip1), ip1)
		if err != nil {
			t.Fatal(err)
		}
		return l.Token
	}
	// steps are clock moves, each followed by an Authenticate that must
	// succeed or fail as listed.
	type step struct {
		advance time.Duration
		ok      bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"IdleJustBefore", []step{{15*day - time.Second, true}}},
		{"ErrIdle", []step{{15 * day, false}}},
		// A use slides the idle expiry: twice 15 days minus a second is
		// fine when the session is used in between.
		{"Sliding", []step{{15*day - time.Second, true}, {15*day - time.Second, true}, {15 * day, false}}},
		// A use within an hour of the recorded one is not written, so it
		// does not slide the expiry: the idle clock runs from the login.
		{"ErrUseWithinAnHourNotRecorded", []step{{59 * time.Minute, true}, {15*day - 59*time.Minute, false}}},
		{"UseAfterAnHourRecorded", []step{{time.Hour, true}, {15*day - time.Second, true}}},
		// However active, a session ends 90 days after login.
		{"ErrAbsoluteCap", []step{
			{14 * day, true}, {14 * day, true}, {14 * day, true}, {14 * day, true},
			{14 * day, true}, {14 * day, true}, {6*day - time.Second, true}, {time.Second, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCodeEnv(t, auth.Config{})
			token := login(t, e)
			key, err := auth.SessionKey(token)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				e.clock.Advance(s.advance)
				email, err := e.svc.Authenticate(ctx, token)
				if s.ok && (err != nil || email != "ada@example.com") {
					t.Fatalf("step %d (+%v): Authenticate=%q, %v; want the session", i+1, s.advance, email, err)
				}
				if !s.ok {
					if board.ErrorCode(err) != board.EUNAUTHORIZED {
						t.Fatalf("step %d (+%v): err=%v, want EUNAUTHORIZED", i+1, s.advance, err)
					}
					// An expired session is deleted when presented.
					if _, err := e.db.FindSession(ctx, key); board.ErrorCode(err) != board.ENOTFOUND {
						t.Fatalf("expired session still stored: %v", err)
					}
				}
			}
		})
	}
	t.Run("Logout", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		token := login(t, e)
		other := login(t, e)
		if err := e.svc.Logout(ctx, token); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Authenticate(ctx, token); board.ErrorCode(err) != board.EUNAUTHORIZED {
			t.Fatalf("after logout: err=%v, want EUNAUTHORIZED", err)
		}
		if _, err := e.svc.Authenticate(ctx, other); err != nil {
			t.Fatalf("the user's other session after logout: %v", err)
		}
		if err := e.svc.Logout(ctx, token); err != nil {
			t.Fatalf("second logout: %v", err)
		}
	})
	t.Run("ErrMalformedToken", func(t *testing.T) {
		e := newCodeEnv(t, auth.Config{})
		for _, tok := range []string{"", "x", "AAAA", string(make([]byte, 43))} {
			if _, err := e.svc.Authenticate(ctx, tok); board.ErrorCode(err) != board.EUNAUTHORIZED {
				t.Fatalf("Authenticate(%q): err=%v, want EUNAUTHORIZED", tok, err)
			}
		}
	})
}
