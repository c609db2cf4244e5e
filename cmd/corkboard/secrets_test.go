package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSecret writes content to a file of its own and returns its path.
func writeSecret(tb testing.TB, content string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestSecretFiles(t *testing.T) {
	billingFile := writeSecret(t, "whsec_a,whsec_b\n")
	smtpFile := writeSecret(t, "smtps://mailer:hunter2@smtp.example.com:465\n")
	for _, tt := range []struct {
		name        string
		args        []string
		env         map[string]string
		wantBilling string
		wantSMTP    string
		wantErr     string // a part of the error, "" for none
		wantWarn    string // a part of a warning, "" for none
	}{
		{name: "BillingFromFile", args: []string{"-billing-secret-file", billingFile}, wantBilling: "whsec_a,whsec_b"},
		{name: "BillingFileFromEnv", env: map[string]string{"CORKBOARD_BILLING_SECRET_FILE": billingFile}, wantBilling: "whsec_a,whsec_b"},
		{name: "BillingFromEnv", env: map[string]string{"CORKBOARD_BILLING_SECRET": "whsec_env"}, wantBilling: "whsec_env"},
		{name: "BillingOnCommandLineWarns", args: []string{"-billing-secret", "whsec_cli"}, wantBilling: "whsec_cli", wantWarn: "-billing-secret"},
		{name: "SMTPFromFile", args: []string{"-smtp-file", smtpFile}, wantSMTP: "smtps://mailer:hunter2@smtp.example.com:465"},
		{name: "SMTPPasswordOnCommandLineWarns", args: []string{"-smtp", "smtp://u:p@mail:587"}, wantSMTP: "smtp://u:p@mail:587", wantWarn: "-smtp"},
		{name: "SMTPWithoutPasswordOnCommandLine", args: []string{"-smtp", "smtp://mail:25"}, wantSMTP: "smtp://mail:25"},
		{name: "StorePasswordOnCommandLineWarns", args: []string{"-store", "postgres://u:p@db/corkboard"}, wantWarn: "-store"},
		{name: "ErrBoth", args: []string{"-billing-secret", "x", "-billing-secret-file", billingFile}, wantErr: "-billing-secret-file"},
		{name: "ErrBothEnvAndFile", args: []string{"-billing-secret-file", billingFile}, env: map[string]string{"CORKBOARD_BILLING_SECRET": "x"}, wantErr: "-billing-secret-file"},
		{name: "ErrMissingFile", args: []string{"-billing-secret-file", filepath.Join(t.TempDir(), "nope")}, wantErr: "-billing-secret-file"},
		{name: "ErrEmptyFile", args: []string{"-smtp-file", writeSecret(t, "\n")}, wantErr: "-smtp-file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.BillingSecret; got != tt.wantBilling {
				t.Errorf("BillingSecret=%q, want %q", got, tt.wantBilling)
			}
			if got := cfg.SMTP; got != tt.wantSMTP {
				t.Errorf("SMTP=%q, want %q", got, tt.wantSMTP)
			}
			warnings := strings.Join(cfg.Warnings, "\n")
			if tt.wantWarn == "" && warnings != "" {
				t.Errorf("unexpected warnings: %s", warnings)
			}
			if tt.wantWarn != "" && !strings.Contains(warnings, tt.wantWarn) {
				t.Errorf("warnings %q, want one naming %s", warnings, tt.wantWarn)
			}
		})
	}
}

// The warning reaches the server's log, where an operator sees it.
func TestSecretOnCommandLineLogged(t *testing.T) {
	_, logs, stop := start(t, "-data", t.TempDir(), "-billing-secret", "whsec_cli")
	stop()
	if !strings.Contains(logs.String(), "-billing-secret-file") {
		t.Fatalf("no warning pointing to -billing-secret-file in the log:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "whsec_cli") {
		t.Fatal("the log shows the secret")
	}
}
