// Package authtest is test support for login: an in-process SMTP server that
// records what it receives and hands a test the code sent to an address, a
// settable clock, a log recorder and a throwaway TLS certificate.
package authtest

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// WaitTimeout is how long WaitMessage waits for a message before failing
// the test. Mail leaves from a background queue, so a test must wait for it;
// it waits on a notification, never by polling.
var WaitTimeout = 10 * time.Second

// Message is one message the sink accepted.
type Message struct {
	From string
	To   []string
	// Data is the message as sent (RFC 5322 headers and body).
	Data []byte
	// Subject and Body are decoded from Data.
	Subject string
	Body    string
	// TLS tells whether the message arrived over TLS (STARTTLS or implicit).
	TLS bool
	// User is the authenticated user name, "" without AUTH.
	User string
}

// SinkOptions configures NewSinkWith.
type SinkOptions struct {
	// TLS, when set, makes the sink offer STARTTLS with this configuration
	// (or, with Implicit, speak TLS from the first byte).
	TLS *tls.Config
	// Implicit makes the sink an smtps:// server. It needs TLS.
	Implicit bool
	// Username and Password, when set, make the sink require AUTH PLAIN.
	Username, Password string
	// AllowInsecureAuth lets AUTH happen without TLS (to test that a client
	// refuses to send a password in the clear).
	AllowInsecureAuth bool
}

// Sink is an in-process SMTP server on 127.0.0.1 that records every message.
type Sink struct {
	opts SinkOptions
	srv  *smtp.Server
	addr string

	mu      sync.Mutex
	msgs    []Message
	read    map[string]int // per recipient: messages WaitMessage handed out
	changed chan struct{}  // closed and replaced when a message arrives
}

// NewSink starts a plain SMTP sink on 127.0.0.1:0; it stops when the test ends.
func NewSink(tb testing.TB) *Sink {
	tb.Helper()
	return NewSinkWith(tb, SinkOptions{})
}

// NewSinkWith starts a sink with opts on 127.0.0.1:0; it stops when the test ends.
func NewSinkWith(tb testing.TB, opts SinkOptions) *Sink {
	tb.Helper()
	if opts.Implicit && opts.TLS == nil {
		tb.Fatal("authtest: an implicit-TLS sink needs SinkOptions.TLS")
	}
	s := &Sink{opts: opts, read: map[string]int{}, changed: make(chan struct{})}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &sinkSession{sink: s, conn: c}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout = 10 * time.Second
	s.srv.WriteTimeout = 10 * time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.MaxRecipients = 10
	s.srv.AllowInsecureAuth = opts.AllowInsecureAuth
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	if !opts.Implicit {
		s.srv.TLSConfig = opts.TLS
	}

	var ln net.Listener
	var err error
	if opts.Implicit {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", opts.TLS)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		tb.Fatalf("authtest: listen: %v", err)
	}
	s.addr = ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(ln)
	}()
	tb.Cleanup(func() {
		_ = s.srv.Close()
		// Close only closes listeners Serve has registered; if Serve has not
		// started yet, closing ln is what makes it return.
		_ = ln.Close()
		<-done
	})
	return s
}

// Addr is the sink's host:port.
func (s *Sink) Addr() string { return s.addr }

// URL is the SMTP URL a mailer should use for this sink: smtp:// or
// smtps://, with the credentials when the sink requires them.
func (s *Sink) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.addr}
	if s.opts.Implicit {
		u.Scheme = "smtps"
	}
	if s.opts.Username != "" {
		u.User = url.UserPassword(s.opts.Username, s.opts.Password)
	}
	return u.String()
}

// Messages returns every message received so far, oldest first.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Count is how many messages were sent to the address so far.
func (s *Sink) Count(to string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.msgs {
		if addressedTo(m, to) {
			n++
		}
	}
	return n
}

// WaitMessage returns the next message to the address that an earlier call
// has not returned yet, waiting up to WaitTimeout for it to arrive.
func (s *Sink) WaitMessage(tb testing.TB, to string) Message {
	tb.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		seen := 0
		for _, m := range s.msgs {
			if !addressedTo(m, to) {
				continue
			}
			if seen == s.read[to] {
				s.read[to]++
				s.mu.Unlock()
				return m
			}
			seen++
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			tb.Fatalf("authtest: no message to %s within %s", to, WaitTimeout)
		}
	}
}

// codeRE finds a six-digit code.
var codeRE = regexp.MustCompile(`\b\d{6}\b`)

// WaitCode waits for the next login-code message to the address (as
// WaitMessage, passing over other mail such as invitations, which the
// server sends to the same addresses) and returns the six-digit code in
// its subject.
func (s *Sink) WaitCode(tb testing.TB, to string) string {
	tb.Helper()
	m := s.WaitMessage(tb, to)
	for !strings.Contains(m.Subject, "login code") {
		m = s.WaitMessage(tb, to)
	}
	code := codeRE.FindString(m.Subject)
	if code == "" {
		tb.Fatalf("authtest: message to %s has no six-digit code in its subject %q", to, m.Subject)
	}
	if !strings.Contains(m.Body, code) {
		tb.Fatalf("authtest: message to %s has code %s in its subject but not in its body %q", to, code, m.Body)
	}
	return code
}

func addressedTo(m Message, to string) bool {
	for _, r := range m.To {
		if strings.EqualFold(r, to) {
			return true
		}
	}
	return false
}

func (s *Sink) record(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
	close(s.changed)
	s.changed = make(chan struct{})
}

// sinkSession is one SMTP conversation.
type sinkSession struct {
	sink *Sink
	conn *smtp.Conn
	user string
	from string
	to   []string
}

var _ smtp.AuthSession = (*sinkSession)(nil)

func (ss *sinkSession) AuthMechanisms() []string {
	if ss.sink.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *sinkSession) Auth(mech string) (sasl.Server, error) {
	if ss.sink.opts.Username == "" || mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.sink.opts.Username || password != ss.sink.opts.Password {
			return smtp.ErrAuthFailed
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.sink.opts.Username != "" && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *sinkSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := Message{From: ss.from, To: append([]string(nil), ss.to...), Data: data, User: ss.user}
	_, m.TLS = ss.conn.TLSConnectionState()
	if m.Subject, m.Body, err = decode(data); err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: err.Error()}
	}
	ss.sink.record(m)
	return nil
}

func (ss *sinkSession) Reset() { ss.from, ss.to = "", nil }

func (ss *sinkSession) Logout() error { return nil }

// decode returns the subject and text body of a single-part message.
func decode(data []byte) (subject, body string, err error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return "", "", fmt.Errorf("parse message: %w", err)
	}
	subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return "", "", fmt.Errorf("decode subject: %w", err)
	}
	var rd io.Reader = msg.Body
	switch strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		rd = quotedprintable.NewReader(rd)
	case "base64":
		rd = base64.NewDecoder(base64.StdEncoding, rd)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return "", "", fmt.Errorf("read body: %w", err)
	}
	return subject, string(b), nil
}
