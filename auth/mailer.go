package auth

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// DefaultFrom is the sender when none is configured.
const DefaultFrom = "Corkboard <noreply@localhost>"

// Mailer sends one plain-text e-mail.
type Mailer interface {
	// Send delivers a message to one address; it returns when the message
	// is handed over (or written out), or with an error.
	Send(ctx context.Context, to, subject, body string) error
}

// SMTP connection defaults.
const (
	smtpTimeout     = 15 * time.Second // dial and each SMTP command
	smtpPort        = 587              // smtp://: submission, STARTTLS when offered
	smtpsPort       = 465              // smtps://: implicit TLS
	outboxRetention = 24 * time.Hour   // outbox files older than this are pruned
)

// NewMailer returns the mailer for a configuration. With smtpURL set it sends
// through that server: smtp://user:pass@host:port (STARTTLS whenever the
// server offers it; port 587 when omitted) or smtps://user:pass@host:port
// (implicit TLS; port 465 when omitted). With smtpURL empty nothing is sent:
// each message is logged (one line with the address and subject, which holds
// the code) and written as a file to outboxDir.
func NewMailer(smtpURL, from, outboxDir string, log *slog.Logger) (Mailer, error) {
	if log == nil {
		log = slog.Default()
	}
	if from == "" {
		from = DefaultFrom
	}
	if _, err := mail.ParseAddress(from); err != nil || strings.ContainsAny(from, "\r\n") {
		return nil, fmt.Errorf("mail sender %q is not a valid address such as %q", from, DefaultFrom)
	}
	if smtpURL == "" {
		if outboxDir == "" {
			return nil, errors.New("no SMTP server and no outbox folder configured")
		}
		if err := os.MkdirAll(outboxDir, 0o700); err != nil {
			return nil, fmt.Errorf("create outbox %s: %w", outboxDir, err)
		}
		return &outboxMailer{dir: outboxDir, from: from, log: log}, nil
	}
	return newSMTPMailer(smtpURL, from, nil)
}

// smtpMailer sends through an SMTP server with go-mail.
type smtpMailer struct {
	host     string
	port     int
	implicit bool // smtps://
	user     string
	pass     string
	from     string
	tls      *tls.Config // nil: system roots, ServerName = host
}

// newSMTPMailer parses the URL; tlsConfig (nil in production) lets tests
// trust a test certificate.
func newSMTPMailer(rawURL, from string, tlsConfig *tls.Config) (*smtpMailer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse echoes the input, which may hold a password.
		return nil, errors.New("SMTP URL is not a valid URL; want smtp://user:pass@host:port or smtps://…")
	}
	m := &smtpMailer{from: from, tls: tlsConfig}
	switch u.Scheme {
	case "smtp":
		m.port = smtpPort
	case "smtps":
		m.port, m.implicit = smtpsPort, true
	default:
		return nil, fmt.Errorf("SMTP URL scheme %q: want smtp or smtps", u.Scheme)
	}
	m.host = u.Hostname()
	if m.host == "" {
		return nil, errors.New("SMTP URL has no host")
	}
	if p := u.Port(); p != "" {
		if m.port, err = strconv.Atoi(p); err != nil || m.port < 1 || m.port > 65535 {
			return nil, fmt.Errorf("SMTP URL port %q is not a port number", p)
		}
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("SMTP URL must be only scheme://user:pass@host:port")
	}
	if m.tls != nil && m.tls.ServerName == "" {
		m.tls = m.tls.Clone()
		m.tls.ServerName = m.host
	}
	if u.User != nil {
		m.user = u.User.Username()
		m.pass, _ = u.User.Password()
	}
	return m, nil
}

// Send implements Mailer. Each message gets its own connection: login codes
// are rare, and a fresh client per send is safe from several goroutines.
func (m *smtpMailer) Send(ctx context.Context, to, subject, body string) error {
	msg, err := newMessage(m.from, to, subject, body)
	if err != nil {
		return err
	}
	opts := []gomail.Option{gomail.WithPort(m.port), gomail.WithTimeout(smtpTimeout)}
	if m.implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if m.tls != nil {
		opts = append(opts, gomail.WithTLSConfig(m.tls))
	}
	if m.user != "" {
		// Auto-discovery only picks PLAIN or LOGIN on an encrypted connection,
		// so a password never crosses the network in the clear.
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(m.user), gomail.WithPassword(m.pass))
	}
	c, err := gomail.NewClient(m.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client for %s:%d: %w", m.host, m.port, err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp send via %s:%d: %w", m.host, m.port, err)
	}
	return nil
}

// newMessage builds a plain-text message.
func newMessage(from, to, subject, body string) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("mail sender: %w", err)
	}
	if err := msg.To(to); err != nil {
		return nil, fmt.Errorf("mail recipient: %w", err)
	}
	msg.Subject(subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, body)
	return msg, nil
}

// outboxMailer is the mailer when no SMTP server is configured: it logs each
// message and writes it to a file, so a developer can log in without mail.
type outboxMailer struct {
	dir  string
	from string
	log  *slog.Logger
}

// Send implements Mailer.
func (m *outboxMailer) Send(ctx context.Context, to, subject, body string) error {
	msg, err := newMessage(m.from, to, subject, body)
	if err != nil {
		return err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(rnd[:]) + ".eml"
	path := filepath.Join(m.dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if _, err := msg.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("outbox: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("outbox: write %s: %w", path, err)
	}
	m.log.InfoContext(ctx, "mail not sent (no SMTP server configured); written to the outbox",
		slog.String("to", to), slog.String("subject", subject), slog.String("file", path))
	m.prune(time.Now().Add(-outboxRetention))
	return nil
}

// prune removes outbox files older than cut, so the folder does not grow
// forever on a server left without SMTP.
func (m *outboxMailer) prune(cut time.Time) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".eml") {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cut) {
			_ = os.Remove(filepath.Join(m.dir, e.Name()))
		}
	}
}
