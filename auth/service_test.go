package auth_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/auth/authtest"
	"corkboard/board"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
)

var svcT0 = time.Date(2030, 3, 4, 5, 6, 7, 0, time.UTC)

type sentMail struct{ to, subject, body string }

// recordingMailer keeps what it is asked to send. With gate set, each Send
// first reports on started and then waits for gate (or its context).
type recordingMailer struct {
	mu      sync.Mutex
	sent    []sentMail
	started chan string
	gate    chan struct{}
}

func (m *recordingMailer) Send(ctx context.Context, to, subject, body string) error {
	if m.gate != nil {
		m.started <- to
		select {
		case <-m.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, sentMail{to, subject, body})
	return nil
}

func (m *recordingMailer) all() []sentMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sentMail(nil), m.sent...)
}

type svcEnv struct {
	db    *bolt.DB
	svc   *auth.Service
	clock *persisttest.Clock
	logs  *authtest.LogBuffer
}

func newSvc(t *testing.T, mailer auth.Mailer, cfg auth.Config) *svcEnv {
	t.Helper()
	db, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := persisttest.NewClock(svcT0)
	db.Now = clock.Now
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	log, logs := authtest.NewLogger(t)
	svc := auth.New(db, mailer, cfg, log)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		db.Close()
	})
	return &svcEnv{db: db, svc: svc, clock: clock, logs: logs}
}

// TestSendCodeNeverWaitsForMail: with the only sender stuck on a slow
// server and the queue full, SendCode still answers at once; the overflow
// is dropped and logged.
func TestSendCodeNeverWaitsForMail(t *testing.T) {
	m := &recordingMailer{started: make(chan string, 10), gate: make(chan struct{})}
	e := newSvc(t, m, auth.Config{MailQueue: 1, MailWorkers: 1})
	ctx := context.Background()
	e.svc.Start(ctx)

	if err := e.svc.SendCode(ctx, "first@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if got := <-m.started; got != "first@example.com" {
		t.Fatalf("sender started on %s", got)
	}
	// The sender is now blocked: one more fits the queue, two overflow.
	for _, to := range []string{"queued@example.com", "drop1@example.com", "drop2@example.com"} {
		if err := e.svc.SendCode(ctx, to, "192.0.2.1"); err != nil {
			t.Fatalf("SendCode(%s) with a stuck sender: %v", to, err)
		}
	}
	if got, want := strings.Count(e.logs.String(), "send queue full"), 2; got != want {
		t.Fatalf("%d drops logged, want %d", got, want)
	}
	close(m.gate)
	<-m.started // the queued one
	if err := e.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var to []string
	for _, s := range m.all() {
		to = append(to, s.to)
	}
	if got, want := strings.Join(to, ","), "first@example.com,queued@example.com"; got != want {
		t.Fatalf("delivered to %s, want %s", got, want)
	}
	// The dropped addresses still got a code stored: asking again works.
	if _, err := e.db.FindOTP(ctx, "drop1@example.com"); err != nil {
		t.Fatalf("FindOTP for a dropped mail: %v", err)
	}
}

// TestCloseDeliversQueuedMail: Close sends what is queued before returning.
func TestCloseDeliversQueuedMail(t *testing.T) {
	m := &recordingMailer{}
	e := newSvc(t, m, auth.Config{})
	ctx := context.Background()
	e.svc.Start(ctx)
	const n = 10
	for i := range n {
		if err := e.svc.SendCode(ctx, fmt.Sprintf("u%d@example.com", i), "192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(m.all()); got != n {
		t.Fatalf("%d mails delivered by Close, want %d", got, n)
	}
	if err := e.svc.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// After Close nothing is queued any more, and SendCode still answers.
	if err := e.svc.SendCode(ctx, "late@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.logs.String(), "shutting down") {
		t.Fatal("a mail after Close was not logged as dropped")
	}
}

// TestCloseGivesUpAtDeadline: a send stuck past Close's deadline is aborted.
func TestCloseGivesUpAtDeadline(t *testing.T) {
	m := &recordingMailer{started: make(chan string, 1), gate: make(chan struct{})}
	e := newSvc(t, m, auth.Config{MailWorkers: 1})
	e.svc.Start(context.Background())
	if err := e.svc.SendCode(context.Background(), "stuck@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	<-m.started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.svc.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close=%v, want DeadlineExceeded", err)
	}
	if got := len(m.all()); got != 0 {
		t.Fatalf("the stuck send completed (%d)", got)
	}
}

func TestCloseWithoutStart(t *testing.T) {
	e := newSvc(t, &recordingMailer{}, auth.Config{})
	if err := e.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.svc.Start(context.Background()) // must not launch anything after Close
}

// TestCodeMail: every code is six digits, is in the subject and the body,
// and codes differ.
func TestCodeMail(t *testing.T) {
	m := &recordingMailer{}
	e := newSvc(t, m, auth.Config{})
	ctx := context.Background()
	e.svc.Start(ctx)
	const n = 40
	for i := range n {
		// One IP per address keeps both limits out of the way.
		if err := e.svc.SendCode(ctx, fmt.Sprintf("c%d@example.com", i), fmt.Sprintf("192.0.2.%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^Your Corkboard login code: (\d{6})$`)
	codes := map[string]bool{}
	for _, s := range m.all() {
		sm := re.FindStringSubmatch(s.subject)
		if sm == nil {
			t.Fatalf("subject %q has no six-digit code", s.subject)
		}
		if !strings.Contains(s.body, sm[1]) || !strings.Contains(s.body, s.to) {
			t.Fatalf("body %q lacks the code %s or the address %s", s.body, sm[1], s.to)
		}
		// The code's lifetime as people write it (the default 10 minutes),
		// not as Go prints durations (10m0s).
		if !strings.Contains(s.body, "within 10 minutes.") {
			t.Fatalf("body %q does not say the code works within 10 minutes", s.body)
		}
		codes[sm[1]] = true
	}
	if len(codes) < n-2 {
		t.Fatalf("only %d distinct codes in %d", len(codes), n)
	}
}

// TestSweep: expired codes and sessions leave storage without being asked for.
func TestSweep(t *testing.T) {
	m := &recordingMailer{}
	e := newSvc(t, m, auth.Config{})
	ctx := context.Background()
	e.svc.Start(ctx)
	if err := e.svc.SendCode(ctx, "a@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Close(ctx); err != nil { // flush the mail
		t.Fatal(err)
	}
	code := regexp.MustCompile(`\d{6}`).FindString(m.all()[0].subject)
	login, err := e.svc.Verify(ctx, "a@example.com", code, "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	key, err := auth.SessionKey(login.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.SendCode(ctx, "b@example.com", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}

	e.clock.Advance(11 * time.Minute)
	if err := e.svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.FindOTP(ctx, "b@example.com"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("expired code after sweep: err=%v, want ENOTFOUND", err)
	}
	if _, err := e.db.FindSession(ctx, key); err != nil {
		t.Fatalf("live session swept: %v", err)
	}

	e.clock.Advance(15 * 24 * time.Hour)
	if err := e.svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.FindSession(ctx, key); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("idle session after sweep: err=%v, want ENOTFOUND", err)
	}
}

func TestSessionKey(t *testing.T) {
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"Valid", strings.Repeat("A", 43), true},
		{"Empty", "", false},
		{"Short", strings.Repeat("A", 42), false},
		{"Long", strings.Repeat("A", 44), false},
		{"Padded", strings.Repeat("A", 42) + "=", false},
		{"StdAlphabet", strings.Repeat("A", 42) + "+", false},
		{"NonCanonical", strings.Repeat("A", 42) + "B", false}, // trailing bits set
		{"NonASCII", strings.Repeat("A", 41) + "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := auth.SessionKey(tt.token)
			if (err == nil) != tt.ok {
				t.Fatalf("SessionKey(%q) err=%v, want ok=%v", tt.token, err, tt.ok)
			}
			if tt.ok && len(key) != 32 {
				t.Fatalf("key is %d bytes, want 32", len(key))
			}
		})
	}
}

func FuzzSessionKey(f *testing.F) {
	f.Add(strings.Repeat("A", 43))
	f.Add("")
	f.Add("\x00\xff")
	f.Fuzz(func(t *testing.T, s string) {
		key, err := auth.SessionKey(s)
		if err == nil && len(key) != 32 {
			t.Fatalf("SessionKey(%q) gave %d bytes", s, len(key))
		}
	})
}

// TestConfigDefaults: zero fields take the defaults, set ones stay.
func TestConfigDefaults(t *testing.T) {
	if got, want := auth.Defaults().VerifyEmailRate, (auth.Rate{Count: 10, Window: time.Hour}); got != want {
		t.Fatalf("default VerifyEmailRate=%v, want %v", got, want)
	}
	e := newSvc(t, &recordingMailer{}, auth.Config{VerifyIPRate: auth.Rate{Count: 7, Window: time.Minute}})
	cfg := e.svc.Config()
	if got, want := cfg.VerifyEmailRate, auth.Defaults().VerifyEmailRate; got != want {
		t.Errorf("VerifyEmailRate=%v, want the default %v", got, want)
	}
	if got, want := cfg.VerifyIPRate, (auth.Rate{Count: 7, Window: time.Minute}); got != want {
		t.Errorf("VerifyIPRate=%v, want the configured %v", got, want)
	}
}

// TestVerifyLimitPerAddressAndNetwork: the per-address verify budget is
// per client network: one network using it up leaves another's intact.
func TestVerifyLimitPerAddressAndNetwork(t *testing.T) {
	e := newSvc(t, &recordingMailer{}, auth.Config{VerifyEmailRate: auth.Rate{Count: 2, Window: time.Minute}})
	ctx := context.Background()
	for i := range 2 {
		_, err := e.svc.Verify(ctx, "a@example.com", "123456", "192.0.2.1")
		if board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("attempt %d: err=%v, want EINVALID", i+1, err)
		}
	}
	_, err := e.svc.Verify(ctx, "A@Example.com", "123456", "192.0.2.1")
	var be *board.Error
	if !errors.As(err, &be) || be.Code != board.ERATELIMIT || be.RetryAfter != 60 {
		t.Fatalf("third attempt: err=%#v, want ERATELIMIT with RetryAfter 60", err)
	}
	for _, ip := range []string{"192.0.2.2", "2001:db8::1"} {
		if _, err := e.svc.Verify(ctx, "a@example.com", "123456", ip); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("the address from %s: err=%v, want EINVALID", ip, err)
		}
	}
	if _, err := e.svc.Verify(ctx, "b@example.com", "123456", "192.0.2.1"); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("another address: err=%v, want EINVALID", err)
	}
}
