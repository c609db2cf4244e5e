package main

import (
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
)

// TestTwoNodesShareOnePostgreSQL: two servers started with -store on one
// database are one service: a code asked for on one node is accepted by the
// other, and the session it opens works on both.
func TestTwoNodesShareOnePostgreSQL(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	baseA, logsA, stopA := start(t, "-store", dsn, "-data", filepath.Join(t.TempDir(), "a"))
	defer stopA()
	baseB, _, stopB := start(t, "-store", dsn, "-data", filepath.Join(t.TempDir(), "b"))
	defer stopB()

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar}
	post := func(base, path, body string) int {
		t.Helper()
		resp, err := client.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post(baseA, "/api/auth/send-otp", `{"email":"ada@example.com"}`); status != http.StatusOK {
		t.Fatalf("send-otp on A: %d", status)
	}
	codeLine := regexp.MustCompile(`login code: (\d{6})`)
	var code string
	for deadline := time.Now().Add(10 * time.Second); code == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := codeLine.FindStringSubmatch(logsA.String()); m != nil {
			code = m[1]
		}
	}
	if code == "" {
		t.Fatalf("node A logged no login code:\n%s", logsA.String())
	}
	if status := post(baseB, "/api/auth/verify-otp", `{"email":"ada@example.com","code":"`+code+`"}`); status != http.StatusOK {
		t.Fatalf("verify-otp on B with A's code: %d", status)
	}
	// The session cookie is the same on both (same host, another port).
	for _, base := range []string{baseA, baseB} {
		resp, err := client.Get(base + "/api/auth/me")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s/api/auth/me with B's session: %d, want 200", base, resp.StatusCode)
		}
	}
}

func TestStoreFlagRejectsOtherSchemes(t *testing.T) {
	cfg := &Config{Store: "mysql://localhost/x"}
	if _, _, err := openStore(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "-store") {
		t.Fatalf("openStore(mysql://…) err=%v, want a -store error", err)
	}
}

// TestPlanCommandOnPostgreSQL: `corkboard plan -store …` changes the plan in
// the database the nodes share; a node reads it.
func TestPlanCommandOnPostgreSQL(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	out, err := runPlan(t, map[string]string{"CORKBOARD_STORE": dsn}, "set", "ada@example.com", "pro")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ada@example.com: plan free -> pro") {
		t.Fatalf("set output:\n%s", out)
	}
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if plan, err := db.UserPlan(t.Context(), "ada@example.com"); err != nil || plan != "pro" {
		t.Fatalf("stored plan %q, %v; want pro", plan, err)
	}
}
