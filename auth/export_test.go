package auth

import (
	"crypto/tls"
	"crypto/x509"
)

// NewSMTPMailerTrusting is NewMailer for an SMTP URL whose server presents a
// certificate from roots (a test certificate).
func NewSMTPMailerTrusting(smtpURL, from string, roots *x509.CertPool) (Mailer, error) {
	return newSMTPMailer(smtpURL, from, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
}

// CachedSessions is how many sessions the service holds in memory.
func (s *Service) CachedSessions() int { return s.sessions.Len() }
