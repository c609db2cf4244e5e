package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/persist/bolt"
)

var codeInMail = regexp.MustCompile(`login code: (\d{6})`)

// loginFromOutbox logs email in through the API, reading the code from the
// outbox the binary writes when no SMTP server is configured.
func loginFromOutbox(t *testing.T, base, data, email string) *http.Cookie {
	t.Helper()
	res, err := http.Post(base+"/api/auth/send-otp", "application/json", strings.NewReader(`{"email":"`+email+`"}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("send-otp: %v %v", res, err)
	}
	res.Body.Close()
	var code string
	for deadline := time.Now().Add(10 * time.Second); code == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(data, "outbox", "*.eml"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), email) {
				if m := codeInMail.FindSubmatch(b); m != nil {
					code = string(m[1])
				}
			}
		}
	}
	if code == "" {
		t.Fatal("no code in the outbox")
	}
	res, err = http.Post(base+"/api/auth/verify-otp", "application/json", strings.NewReader(`{"email":"`+email+`","code":"`+code+`"}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("verify-otp: %v %v", res, err)
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == "session" {
			return c
		}
	}
	t.Fatal("no session cookie")
	return nil
}

// A push whose body is still arriving when SIGTERM comes finishes and is
// kept: shutdown lets in-flight requests end before the rooms and the store
// close.
func TestShutdownFinishesInFlightPush(t *testing.T) {
	data := t.TempDir()
	// inFlight is closed when the push reaches the API's handler: its
	// request line and headers are read, so shutdown must wait for it.
	inFlight := make(chan struct{})
	var once sync.Once
	base, logs, stop := startMain(t, func(m *Main) {
		m.OnRequest = func(r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/api/boards/b1/sync" {
				once.Do(func() { close(inFlight) })
			}
		}
	}, "-data", data)
	cookie := loginFromOutbox(t, base, data, "ada@example.com")
	req, _ := http.NewRequest("POST", base+"/api/boards/b1/access", nil)
	req.AddCookie(cookie)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("claim: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	body, w := io.Pipe()
	req, _ = http.NewRequest("POST", base+"/api/boards/b1/sync", body)
	req.AddCookie(cookie)
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		// A connection of its own: an idle keep-alive one may be closed by
		// shutdown before the server sees this request, as HTTP allows.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := client.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- result{status: res.StatusCode, body: string(b)}
	}()
	half := `{"clientVersion":0,"notes":{"upserted":[{"id":"n1","title":"kept",`
	if _, err := io.WriteString(w, half); err != nil {
		t.Fatal(err)
	}

	select {
	case <-inFlight:
	case r := <-done:
		t.Fatalf("the push ended before shutdown: %+v", r)
	case <-time.After(10 * time.Second):
		t.Fatal("the push did not reach the server")
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	// Shutdown has begun once the listener refuses connections; then finish
	// the body.
	addr := strings.TrimPrefix(base, "http://")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
	}
	if _, err := io.WriteString(w, `"content":"in flight"}],"deleted":[]}}`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := <-done
	if r.err != nil || r.status != 200 || r.body != "{\"serverVersion\":1}\n" {
		t.Fatalf("in-flight push: status %d body %q err %v, want 200 {serverVersion:1}\n%s", r.status, r.body, r.err, logs)
	}
	<-stopped

	db, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ch, err := db.ChangesSince(t.Context(), "b1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Notes) != 1 || ch.Notes[0].Content != "in flight" {
		t.Fatalf("after restart the board holds %s, want the in-flight note", fmt.Sprint(ch.Notes))
	}
}
