package main

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// secretFiles are the -*-file flags: each reads a secret flag's value from
// a file, so that it never appears on the command line, where ps, the
// shell's history and /debug/pprof/cmdline show it.
type secretFiles struct {
	billing string
	smtp    string
}

// readSecretFiles fills the secret flags from their files and notes a
// warning for each secret given on the command line. set holds the flags
// given on the command line. A secret given both ways is an error: which
// one wins would be a guess.
func readSecretFiles(cfg *Config, set map[string]bool) error {
	for _, f := range []struct {
		flag, file string
		value      *string
	}{
		{"billing-secret", cfg.secretFiles.billing, &cfg.BillingSecret},
		{"smtp", cfg.secretFiles.smtp, &cfg.SMTP},
	} {
		if f.file == "" {
			continue
		}
		if *f.value != "" {
			return fmt.Errorf("-%s-file: -%s is set too (on the command line or as %s); give one", f.flag, f.flag, envName(f.flag))
		}
		b, err := os.ReadFile(f.file)
		if err != nil {
			return fmt.Errorf("-%s-file: %w", f.flag, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return fmt.Errorf("-%s-file: %s is empty", f.flag, f.file)
		}
		*f.value = v
	}
	// Warn rather than refuse: a secret on the command line worked before,
	// and refusing it would stop a running deployment at its next restart.
	if set["billing-secret"] && cfg.BillingSecret != "" {
		cfg.Warnings = append(cfg.Warnings, "-billing-secret is on the command line, where ps and /debug/pprof/cmdline show it; use -billing-secret-file or CORKBOARD_BILLING_SECRET")
	}
	if set["smtp"] && urlHasPassword(cfg.SMTP) {
		cfg.Warnings = append(cfg.Warnings, "-smtp has a password on the command line, where ps and /debug/pprof/cmdline show it; use -smtp-file or CORKBOARD_SMTP")
	}
	if set["store"] && urlHasPassword(cfg.Store) {
		cfg.Warnings = append(cfg.Warnings, "-store has a password on the command line, where ps and /debug/pprof/cmdline show it; use CORKBOARD_STORE, PGPASSWORD or ~/.pgpass")
	}
	return nil
}

// urlHasPassword reports whether s is a URL with a password in it.
func urlHasPassword(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}
