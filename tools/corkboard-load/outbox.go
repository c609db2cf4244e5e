package main

import (
	"context"
	"fmt"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// codeRe finds the six-digit login code in a mail's subject
// ("Your Corkboard login code: 123456", docs/auth.md).
var codeRe = regexp.MustCompile(`\b(\d{6})\b`)

// maxOutboxFiles bounds how many .eml files one look scans.
const maxOutboxFiles = 10000

// findCode returns the code of the newest .eml file in dir addressed to
// email and written at or after notBefore; ok is false when there is none
// yet.
func findCode(dir, email string, notBefore time.Time) (code string, ok bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return "", false, nil // the server creates it with the first mail
		}
		return "", false, fmt.Errorf("read outbox: %w", err)
	}
	var newest time.Time
	for i, e := range entries {
		if i == maxOutboxFiles {
			break
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".eml") {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(notBefore) || info.ModTime().Before(newest) {
			continue
		}
		c, to, err := readCodeMail(filepath.Join(dir, e.Name()))
		if err != nil || !strings.EqualFold(to, email) {
			continue
		}
		code, ok, newest = c, true, info.ModTime()
	}
	return code, ok, nil
}

// readCodeMail parses one outbox message: its recipient and the code in
// its subject.
func readCodeMail(path string) (code, to string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	msg, err := mail.ReadMessage(f)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	addr, err := mail.ParseAddress(msg.Header.Get("To"))
	if err != nil {
		return "", "", fmt.Errorf("%s: To: %w", path, err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return "", "", fmt.Errorf("%s: Subject: %w", path, err)
	}
	m := codeRe.FindStringSubmatch(subject)
	if m == nil {
		return "", "", fmt.Errorf("%s: no code in the subject %q", path, subject)
	}
	return m[1], addr.Address, nil
}

// waitCode polls the outbox for the code mailed to email after notBefore,
// every 50 ms for at most timeout: the server writes mail from a background
// queue, a moment after send-otp answers.
func waitCode(ctx context.Context, dir, email string, notBefore time.Time, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		code, ok, err := findCode(dir, email, notBefore)
		if err != nil {
			return "", err
		}
		if ok {
			return code, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no login code for %s in %s after %s (is -outbox the server's <data>/outbox, and is SMTP off?)", email, dir, timeout)
		case <-tick.C:
		}
	}
}
