package auth_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/auth/authtest"
)

func TestNewMailerRejects(t *testing.T) {
	tests := []struct {
		name, url, from, outbox string
	}{
		{"BadScheme", "http://127.0.0.1:25", "", "x"},
		{"NoHost", "smtp://", "", "x"},
		{"BadPort", "smtp://127.0.0.1:99999", "", "x"},
		{"NonNumericPort", "smtp://127.0.0.1:abc", "", "x"},
		{"Path", "smtp://127.0.0.1:25/inbox", "", "x"},
		{"Query", "smtp://127.0.0.1:25?tls=no", "", "x"},
		{"BadFrom", "smtp://127.0.0.1:25", "not an address", "x"},
		{"FromWithCRLF", "smtp://127.0.0.1:25", "a@example.com\r\nBcc: victim@example.com", "x"},
		{"NoOutbox", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := auth.NewMailer(tt.url, tt.from, tt.outbox, nil); err == nil {
				t.Fatalf("NewMailer(%q, %q, %q) accepted", tt.url, tt.from, tt.outbox)
			}
		})
	}
	t.Run("ErrorHidesPassword", func(t *testing.T) {
		_, err := auth.NewMailer("smtp://user:s3cret@exa mple.com:25", "", "x", nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("err=%v: want an error that does not echo the password", err)
		}
	})
}

func sendOne(t *testing.T, m auth.Mailer, to string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Send(ctx, to, "Your Corkboard login code: 123456", "Your Corkboard login code is 123456\r\n"); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

func TestSMTPMailer(t *testing.T) {
	serverTLS, roots := authtest.SelfSignedTLS(t)
	tests := []struct {
		name     string
		opts     authtest.SinkOptions
		wantTLS  bool
		wantUser string
	}{
		{"Plain", authtest.SinkOptions{}, false, ""},
		{"STARTTLSWhenOffered", authtest.SinkOptions{TLS: serverTLS}, true, ""},
		{"STARTTLSWithAuth", authtest.SinkOptions{TLS: serverTLS, Username: "mailer", Password: "p@ss:w/rd"}, true, "mailer"},
		{"ImplicitTLS", authtest.SinkOptions{TLS: serverTLS, Implicit: true, Username: "mailer", Password: "pw"}, true, "mailer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := authtest.NewSinkWith(t, tt.opts)
			m, err := auth.NewSMTPMailerTrusting(sink.URL(), "Corkboard <noreply@corkboard.test>", roots)
			if err != nil {
				t.Fatal(err)
			}
			sendOne(t, m, "user@example.com")
			msg := sink.WaitMessage(t, "user@example.com")
			if msg.TLS != tt.wantTLS {
				t.Errorf("TLS=%v, want %v", msg.TLS, tt.wantTLS)
			}
			if msg.User != tt.wantUser {
				t.Errorf("User=%q, want %q", msg.User, tt.wantUser)
			}
			if got, want := msg.From, "noreply@corkboard.test"; got != want {
				t.Errorf("envelope From=%q, want %q", got, want)
			}
			if !strings.Contains(string(msg.Data), "From: \"Corkboard\" <noreply@corkboard.test>") {
				t.Errorf("From header missing the display name:\n%s", msg.Data)
			}
			if got, want := msg.Subject, "Your Corkboard login code: 123456"; got != want {
				t.Errorf("Subject=%q, want %q", got, want)
			}
		})
	}
}

// TestSMTPMailerKeepsPasswordOffCleartext: a server that would take AUTH
// PLAIN without TLS gets no password; the send fails instead.
func TestSMTPMailerKeepsPasswordOffCleartext(t *testing.T) {
	sink := authtest.NewSinkWith(t, authtest.SinkOptions{Username: "u", Password: "pw", AllowInsecureAuth: true})
	m, err := auth.NewMailer(sink.URL(), "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Send(ctx, "user@example.com", "s", "b"); err == nil {
		t.Fatal("Send sent a password over a cleartext connection")
	}
	if got := len(sink.Messages()); got != 0 {
		t.Fatalf("sink got %d messages", got)
	}
}

// TestSMTPMailerUnreachable: a server that is gone is an error, not a hang.
func TestSMTPMailerUnreachable(t *testing.T) {
	var url string
	// The sink lives only as long as this subtest; then its port refuses.
	t.Run("SinkGone", func(t *testing.T) { url = authtest.NewSink(t).URL() })
	m, err := auth.NewMailer(url, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Send(ctx, "user@example.com", "s", "b"); err == nil {
		t.Fatal("Send to a closed port succeeded")
	}
}

func TestOutboxMailer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	log, logs := authtest.NewLogger(t)
	m, err := auth.NewMailer("", "", dir, log)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("outbox folder mode %o, want 700", perm)
	}
	sendOne(t, m, "dev@example.com")
	sendOne(t, m, "dev@example.com")

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(entries), 2; got != want {
		t.Fatalf("outbox holds %d files, want %d (one per message)", got, want)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s mode %o, want 600", e.Name(), perm)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"To: <dev@example.com>", "Subject: Your Corkboard login code: 123456", "From: \"Corkboard\" <noreply@localhost>"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %q:\n%s", e.Name(), want, data)
			}
		}
	}
	// One log line per message names the address and carries the code.
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "to=dev@example.com") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "123456") || !strings.Contains(lines[0], "outbox") {
		t.Fatalf("log lines for the address: %q; want 2 naming the code and the outbox", lines)
	}
}
