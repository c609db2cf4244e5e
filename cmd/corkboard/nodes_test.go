package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/persist/postgres/pgtest"
)

// TestTwoNodesOneBoardLive: two servers on one PostgreSQL database, set up
// as docs/scale-out.md says. A socket on node B receives a push made on
// node A, and a logout on A closes it with 4001.
func TestTwoNodesOneBoardLive(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dataA := filepath.Join(t.TempDir(), "a")
	baseA, _, stopA := start(t, "-store", dsn, "-data", dataA, "-node-id", "a")
	defer stopA()
	baseB, _, stopB := start(t, "-store", dsn, "-data", filepath.Join(t.TempDir(), "b"), "-node-id", "b")
	defer stopB()
	session := loginFromOutbox(t, baseA, dataA, "ada@example.com")
	do := func(method, url, body string) int {
		t.Helper()
		return call(t, session, method, url, body)
	}
	if status := do("POST", baseA+"/api/boards/b1/access", ""); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("claim on A: %d", status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := http.Header{}
	h.Set("Cookie", "session="+session.Value)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(baseB, "http")+"/api/boards/b1/live", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("live on B: %v", err)
	}
	defer c.CloseNow()
	read := func() map[string]any {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read on B: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := read(); m["type"] != "hello" || m["serverVersion"] != 0.0 {
		t.Fatalf("first message on B: %v", m)
	}
	if status := do("POST", baseA+"/api/boards/b1/sync", `{"clientVersion":0,"notes":{"upserted":[{"id":"n1","content":"from A"}],"deleted":[]}}`); status != http.StatusOK {
		t.Fatalf("push on A: %d", status)
	}
	for {
		m := read()
		if m["type"] != "changes" {
			continue
		}
		notes, _ := m["notes"].([]any)
		if m["serverVersion"] != 1.0 || m["since"] != 0.0 || len(notes) != 1 {
			t.Fatalf("changes on B: %v", m)
		}
		break
	}
	if status := do("GET", baseA+"/api/auth/logout", ""); status/100 != 2 {
		t.Fatalf("logout on A: %d", status)
	}
	for {
		_, _, err := c.Read(ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4001 {
			t.Fatalf("B's socket after logout on A: %v, want close 4001", err)
		}
		break
	}
}

// TestTwoNodesCachesDropAnotherNodesChanges: a removed invitee's access,
// cached on node B by the pull B answered, goes when the owner removes
// them on node A: B's next pulls are refused long before its -cache-ttl
// (a minute here) would have dropped the entry, because A announced the
// change on the bus.
func TestTwoNodesCachesDropAnotherNodesChanges(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	dataA, dataB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	baseA, _, stopA := start(t, "-store", dsn, "-data", dataA, "-node-id", "a", "-cache-ttl", "1m")
	defer stopA()
	baseB, _, stopB := start(t, "-store", dsn, "-data", dataB, "-node-id", "b", "-cache-ttl", "1m")
	defer stopB()
	owner := loginFromOutbox(t, baseA, dataA, "ada@example.com")
	invitee := loginFromOutbox(t, baseB, dataB, "bob@example.com")
	do := func(session *http.Cookie, method, url, body string) int {
		t.Helper()
		return call(t, session, method, url, body)
	}
	if status := do(owner, "POST", baseA+"/api/boards/b1/access", ""); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("claim on A: %d", status)
	}
	if status := do(owner, "POST", baseA+"/api/boards/b1/invite", `{"email":"bob@example.com"}`); status != http.StatusOK {
		t.Fatalf("invite on A: %d", status)
	}
	// B reads the board with bob invited, and keeps it for a minute.
	if status := do(invitee, "GET", baseB+"/api/boards/b1/sync?since=0", ""); status != http.StatusOK {
		t.Fatalf("invitee's pull on B: %d, want 200", status)
	}
	if status := do(owner, "DELETE", baseA+"/api/boards/b1/invite", `{"email":"bob@example.com"}`); status != http.StatusOK {
		t.Fatalf("remove on A: %d", status)
	}
	// The note crosses asynchronously; 30 s is far beyond a NOTIFY on a
	// loaded machine and half the TTL, so only the note can explain a 403.
	deadline := time.Now().Add(30 * time.Second)
	for {
		status := do(invitee, "GET", baseB+"/api/boards/b1/sync?since=0", "")
		if status == http.StatusForbidden {
			break
		}
		if status != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("removed invitee's pull on B: %d; want 403 once A's note arrived", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call sends a JSON request with session's cookie and returns the status.
func call(t *testing.T, session *http.Cookie, method, url, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(session)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
