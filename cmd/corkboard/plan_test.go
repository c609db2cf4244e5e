package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"corkboard/billing"
	"corkboard/persist/bolt"
)

func TestBuildPlans(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plans.json")
	if err := os.WriteFile(file, []byte(`{"free":{"creditsPerMonth":200,"requestsPerMinute":7},"team":{"inviteeCanEdit":false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"free":{"credits":200}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, overrides, file string
		want                  billing.Plan // checked when wantErr is ""
		wantErr               string
	}{
		{"Defaults", "", "", billing.Plan{Name: "free", CreditsPerMonth: 100, RequestsPerMinute: 5}, ""},
		{"File", "", file, billing.Plan{Name: "free", CreditsPerMonth: 200, RequestsPerMinute: 7}, ""},
		{"FlagWinsOverFile", "free.credits=300", file, billing.Plan{Name: "free", CreditsPerMonth: 300, RequestsPerMinute: 7}, ""},
		{"Flag", "free.invitee-edit=true,free.rpm=9", "", billing.Plan{Name: "free", InviteeCanEdit: true, CreditsPerMonth: 100, RequestsPerMinute: 9}, ""},
		{"ErrFlag", "gold.credits=1", "", billing.Plan{}, "-plans:"},
		{"ErrFlagRange", "free.rpm=0", "", billing.Plan{}, "-plans:"},
		{"ErrFileField", "", bad, billing.Plan{}, "-plans-file:"},
		{"ErrFileMissing", "", filepath.Join(dir, "nope.json"), billing.Plan{}, "-plans-file:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plans, err := buildPlans(tt.overrides, tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := plans.Lookup("free"); got != tt.want {
				t.Fatalf("free=%+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBuildBilling(t *testing.T) {
	tests := []struct {
		name, provider, secret, planMap, defaultPlan string
		wantVerifier                                 bool
		wantDefault                                  string
		wantErr                                      string
	}{
		{"NoProvider", "stripe", "", "", "pro", false, "pro", ""},
		{"Stripe", "stripe", "whsec_a, whsec_b", "price_1=pro,prod_2=team", "pro", true, "pro", ""},
		{"StripeByDefault", "", "whsec_a", "", "team", true, "team", ""},
		{"Standard", "Standard", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "", "", true, "", ""},
		{"DefaultNone", "stripe", "whsec_a", "", "none", true, "", ""},
		{"ErrProvider", "paddle", "whsec_a", "", "pro", false, "", "-billing-provider"},
		{"ErrProviderWithoutSecret", "paddle", "", "", "pro", false, "", "-billing-provider"},
		{"ErrStandardSecret", "standard", "not base64!", "", "pro", false, "", "-billing-provider/-billing-secret"},
		{"ErrPlanMap", "stripe", "whsec_a", "price_1=gold", "pro", false, "", "-billing-plan-map"},
		{"ErrDefaultPlan", "stripe", "whsec_a", "", "gold", false, "", "-billing-default-plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, m, err := buildBilling(tt.provider, tt.secret, tt.planMap, tt.defaultPlan)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want one starting %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "not base64!") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (v != nil) != tt.wantVerifier {
				t.Fatalf("verifier=%v, want one: %v", v, tt.wantVerifier)
			}
			if m.Default != tt.wantDefault {
				t.Fatalf("default plan=%q, want %q", m.Default, tt.wantDefault)
			}
		})
	}
}

// newDataDir makes a data folder holding a database, closed again.
func newDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPlan runs `corkboard plan args…` with env as the environment.
func runPlan(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := planCommand(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return out.String(), err
}

func storedPlan(t *testing.T, dir, email string) string {
	t.Helper()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := db.FindUser(context.Background(), email)
	if err != nil {
		t.Fatalf("find %s: %v", email, err)
	}
	return u.Plan
}

// TestPlanCommandDirect: with no server running, the command opens the data
// file itself.
func TestPlanCommandDirect(t *testing.T) {
	dir := newDataDir(t)
	out, err := runPlan(t, nil, "set", "-data", dir, "  Ada@Example.COM ", "PRO")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ada@example.com: plan free -> pro", "plan:        pro", "0 of 2000 used", "20 requests per minute", "may edit"} {
		if !strings.Contains(out, want) {
			t.Errorf("set output lacks %q:\n%s", want, out)
		}
	}
	if got := storedPlan(t, dir, "ada@example.com"); got != "pro" {
		t.Fatalf("stored plan=%q, want pro", got)
	}

	// CORKBOARD_DATA and CORKBOARD_PLANS stand in for the flags.
	env := map[string]string{"CORKBOARD_DATA": dir, "CORKBOARD_PLANS": "pro.credits=5000"}
	out, err = runPlan(t, env, "show", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "plan:        pro") || !strings.Contains(out, "0 of 5000 used") {
		t.Errorf("show output:\n%s", out)
	}
	out, err = runPlan(t, env, "show", "new@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "plan:        free") || !strings.Contains(out, "none yet") {
		t.Errorf("show of a user without an account:\n%s", out)
	}
}

// TestPlanFlagsAnywhere: docs/billing.md says the flags go anywhere on the
// line, before the word plan included.
func TestPlanFlagsAnywhere(t *testing.T) {
	dir := newDataDir(t)
	for _, tc := range []struct {
		name string
		args []string
		plan string
	}{
		{"AfterPlan", []string{"plan", "set", "-data", dir, "ada@example.com", "pro"}, "pro"},
		{"BeforePlan", []string{"-data", dir, "plan", "set", "ada@example.com", "team"}, "team"},
		{"BeforePlanWithEquals", []string{"-data=" + dir, "-plans", "free.credits=7", "plan", "set", "ada@example.com", "free"}, "free"},
		{"BothSides", []string{"-plans", "free.credits=7", "plan", "-data", dir, "set", "ada@example.com", "pro"}, "pro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := run(context.Background(), tc.args, func(string) string { return "" }, &out, &errOut, nil); err != nil {
				t.Fatalf("run %q: %v (%s)", tc.args, err, errOut.String())
			}
			if got := storedPlan(t, dir, "ada@example.com"); got != tc.plan {
				t.Fatalf("stored plan=%q, want %q", got, tc.plan)
			}
		})
	}
	t.Run("ErrServerFlagBeforePlan", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"-addr", ":0", "plan", "show", "ada@example.com"}, func(string) string { return "" }, &out, &errOut, nil)
		if err == nil || !strings.Contains(err.Error(), "-addr") {
			t.Fatalf("err=%v, want the plan command refusing -addr", err)
		}
	})
}

func TestPlanCommandErrors(t *testing.T) {
	dir := newDataDir(t)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"ErrUnknownPlan", []string{"-data", dir, "set", "ada@example.com", "gold"}, `unknown plan "gold": the plans are free, pro, team`},
		{"ErrEmail", []string{"-data", dir, "set", "not-an-address", "pro"}, "not a valid e-mail address"},
		{"ErrNoWords", []string{"-data", dir}, "expected `set <email> <plan>` or `show <email>`"},
		{"ErrSetWithoutPlan", []string{"-data", dir, "set", "ada@example.com"}, "expected"},
		{"ErrUnknownWord", []string{"-data", dir, "delete", "ada@example.com"}, "expected"},
		{"ErrNoDataFile", []string{"-data", filepath.Join(dir, "typo"), "show", "ada@example.com"}, "no Corkboard data file"},
		{"ErrPlansFlag", []string{"-data", dir, "-plans", "free.credits=-1", "show", "ada@example.com"}, "-plans:"},
		{"ErrUnknownFlag", []string{"-verbose", "show", "ada@example.com"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runPlan(t, nil, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err=%v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); !os.IsNotExist(err) {
		t.Fatalf("a mistyped -data created a folder: %v", err)
	}
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.FindUser(context.Background(), "ada@example.com"); err == nil {
		t.Fatal("a refused command created a user")
	}
}

// TestPlanCommandThroughAdminSocket: while a server holds the data file,
// the command goes through the server's admin socket.
func TestPlanCommandThroughAdminSocket(t *testing.T) {
	dir := newDataDir(t)
	db, err := bolt.Open(dir) // the "server" holds the file from here on
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plans, err := buildPlans("team.credits=12345", "")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	sock := filepath.Join(dir, AdminSocketName)
	stop, err := servePlanAdmin(context.Background(), db, plans, nil, sock, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("socket mode=%v, want 0600", perm)
	}

	// The command's own -plans is not used here: the server's table is.
	out, err := runPlan(t, nil, "set", "ada@example.com", "team", "-data", dir, "-plans", "team.credits=1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ada@example.com: plan free -> team") || !strings.Contains(out, "0 of 12345 used") {
		t.Errorf("set output:\n%s", out)
	}
	if u, err := db.FindUser(context.Background(), "ada@example.com"); err != nil || u.Plan != "team" {
		t.Fatalf("stored user=%+v, %v; want team", u, err)
	}
	if !strings.Contains(logs.String(), "plan set from the command line") {
		t.Errorf("the server did not log the change:\n%s", logs.String())
	}
	out, err = runPlan(t, map[string]string{"CORKBOARD_DATA": dir}, "show", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "plan:        team") {
		t.Errorf("show output:\n%s", out)
	}

	checkAdminRefusesBadRequests(t, sock)
	if u, _ := db.FindUser(context.Background(), "ada@example.com"); u.Plan != "team" {
		t.Fatalf("a refused request changed the plan to %q", u.Plan)
	}

	// Stopped: the socket is gone and the command says what is wrong.
	stop()
	stop()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket still there after stop: %v", err)
	}
	if _, err := runPlan(t, nil, "-data", dir, "show", "ada@example.com"); err == nil || !strings.Contains(err.Error(), "admin socket did not answer") {
		t.Fatalf("err=%v, want the admin socket not answering", err)
	}
}

// checkAdminRefusesBadRequests: the server checks what it is sent on the
// admin socket sock too, and answers 400 with an error.
func checkAdminRefusesBadRequests(t *testing.T, sock string) {
	t.Helper()
	client := unixClient(sock)
	for _, body := range []string{`{"email":"ada@example.com","plan":"gold"}`, `{"email":"nope","plan":"pro"}`, `{"email":"ada@example.com","plan":"pro","extra":1}`} {
		resp, err := client.Post("http://corkboard/plan", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e map[string]string
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(msg, &e) != nil || e["error"] == "" {
			t.Errorf("POST %s: %d %s, want 400 with an error", body, resp.StatusCode, msg)
		}
	}
}

func unixClient(sock string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

func TestServePlanAdminSocketFile(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sock := filepath.Join(dir, AdminSocketName)

	t.Run("ReplacesStaleSocket", func(t *testing.T) {
		// A socket left behind by a crashed server.
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		stop, err := servePlanAdmin(context.Background(), db, billing.DefaultPlans(), nil, sock, log)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		resp, err := unixClient(sock).Get("http://corkboard/plan?email=ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status=%d", resp.StatusCode)
		}
	})
	t.Run("StopsWithContext", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		stop, err := servePlanAdmin(ctx, db, billing.DefaultPlans(), nil, sock, log)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		stop() // waits for the shutdown the cancel began
		if _, err := os.Stat(sock); !os.IsNotExist(err) {
			t.Fatalf("socket still there: %v", err)
		}
	})
	t.Run("ErrRegularFileInTheWay", func(t *testing.T) {
		if err := os.WriteFile(sock, []byte("mine"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(sock)
		if _, err := servePlanAdmin(context.Background(), db, billing.DefaultPlans(), nil, sock, log); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Fatalf("err=%v, want a refusal", err)
		}
		if b, _ := os.ReadFile(sock); string(b) != "mine" {
			t.Fatal("the file in the way was touched")
		}
	})
}
