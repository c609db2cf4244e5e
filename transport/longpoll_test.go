package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
)

// pollWait bounds every wait for a long poll's answer; tests wait on
// channels and never assert how long anything took.
const pollWait = 20 * time.Second

// polls answers long polls sent in the background.
type polls struct {
	e    *env
	held chan struct{}
}

// newPolls reports each long poll the server holds (call before any request).
func newPolls(e *env) *polls {
	p := &polls{e: e, held: make(chan struct{}, 64)}
	e.api.OnWaitHeldForTest(func() { p.held <- struct{}{} })
	return p
}

type polled struct {
	a   answer
	err error
}

// send sends GET path in the background; the answer arrives on the channel.
func (p *polls) send(ctx context.Context, session, path string) <-chan polled {
	req := p.e.newRequest(ctx, "GET", p.e.srv.URL+path, session, nil)
	out := make(chan polled, 1)
	go func() {
		res, err := p.e.srv.Client().Do(req)
		if err != nil {
			out <- polled{err: err}
			return
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		out <- polled{a: answer{method: "GET", path: path, status: res.StatusCode, header: res.Header, body: body}, err: err}
	}()
	return out
}

// hold sends GET path and returns once the server holds it in its room: a
// push from now on answers it.
func (p *polls) hold(tb testing.TB, session, path string) <-chan polled {
	tb.Helper()
	out := p.send(context.Background(), session, path)
	select {
	case <-p.held:
	case r := <-out:
		tb.Fatalf("GET %s answered at once (%v %v), want it held", path, r.a, r.err)
	case <-time.After(pollWait):
		tb.Fatalf("GET %s was not held", path)
	}
	return out
}

// answered waits for a long poll's answer.
func answered(tb testing.TB, out <-chan polled) answer {
	tb.Helper()
	select {
	case r := <-out:
		if r.err != nil {
			tb.Fatalf("long poll: %v", r.err)
		}
		return r.a
	case <-time.After(pollWait):
		tb.Fatal("the long poll was not answered")
		return answer{}
	}
}

// boardAt claims b1 and pushes it to version 1.
func boardAt1(e *env) string {
	s := e.claim("owner@example.com", "b1")
	e.pushOK(s, "b1", notePush(board.Note{ID: "n1"}))
	return s
}

func TestLongPollAnsweredByPush(t *testing.T) {
	t.Run("REST", func(t *testing.T) {
		e := newEnv(t)
		p := newPolls(e)
		s := boardAt1(e)
		out := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
		e.pushOK(s, "b1", notePush(board.Note{ID: "n2"}))
		answered(t, out).wantBody(t, 200, `{"serverVersion":2}`)
		if got := e.hub.Waits(); got != 0 {
			t.Fatalf("hub holds %d waits after the answer, want 0", got)
		}
	})
	t.Run("WebSocket", func(t *testing.T) {
		e := newEnv(t)
		p := newPolls(e)
		s := boardAt1(e)
		c, _ := e.connect(s, "b1", "")
		out := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
		send(t, c, pushMsg{Type: "push", ID: "p1", Push: notePush(board.Note{ID: "n2"})})
		answered(t, out).wantBody(t, 200, `{"serverVersion":2}`)
	})
}

// TestLongPollRunsOut: with nothing pushed the wait ends with the version
// the client has.
func TestLongPollRunsOut(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	answered(t, p.hold(t, s, "/api/boards/b1/sync?since=1&wait=1")).wantBody(t, 200, `{"serverVersion":1}`)
}

// TestLongPollOutlivesServerTimeouts: a hold longer than the server's Read
// and WriteTimeout still gets its answer.
func TestLongPollOutlivesServerTimeouts(t *testing.T) {
	e := newEnv(t, withServerTimeout(time.Second))
	p := newPolls(e)
	s := boardAt1(e)
	answered(t, p.hold(t, s, "/api/boards/b1/sync?since=1&wait=2")).wantBody(t, 200, `{"serverVersion":1}`)
}

// TestLongPollOnlyWhenNothingIsNew: wait changes only the no-change
// answer; wait=0 is exactly a plain pull.
func TestLongPollOnlyWhenNothingIsNew(t *testing.T) {
	e := newEnv(t)
	s := boardAt1(e)
	plain := e.do("GET", "/api/boards/b1/sync?since=1", s, nil)
	zero := e.do("GET", "/api/boards/b1/sync?since=1&wait=0", s, nil)
	if string(zero.body) != string(plain.body) || zero.status != plain.status || fmt.Sprint(zero.header) != fmt.Sprint(plain.header) {
		t.Fatalf("wait=0: %v %v, want the plain pull's %v %v", zero, zero.header, plain, plain.header)
	}
	for _, q := range []string{"since=0&wait=30", "since=5&wait=30"} {
		r := e.do("GET", "/api/boards/b1/sync?"+q, s, nil)
		m := r.wantObject(t, 200)
		if _, ok := m["notes"]; !ok {
			t.Fatalf("%s: %v, want the full state at once", q, r)
		}
	}
}

func TestLongPollWaitParameter(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	for _, q := range []string{"wait=", "wait=abc", "wait=1.5", "wait=-1", "wait=-99999999999999999999", "wait=5s"} {
		t.Run(q, func(t *testing.T) {
			r := e.do("GET", "/api/boards/b1/sync?since=1&"+q, s, nil)
			r.wantExactObject(t, 400, map[string]any{"error": "wait must be a whole number of seconds from 0 to 30.", "field": "wait"})
		})
	}
	// Above the cap is clamped, not refused: held, and answered by a push.
	for i, q := range []string{"wait=30", "wait=31", "wait=99999999999999999999"} {
		t.Run(q, func(t *testing.T) {
			out := p.hold(t, s, "/api/boards/b1/sync?since="+fmt.Sprint(i+1)+"&"+q)
			e.pushOK(s, "b1", notePush(board.Note{ID: "n"}))
			answered(t, out).wantBody(t, 200, fmt.Sprintf(`{"serverVersion":%d}`, i+2))
		})
	}
}

// TestLongPollDisconnect: a client that goes away leaves nothing held.
func TestLongPollDisconnect(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	ctx, cancel := context.WithCancel(context.Background())
	served := e.whenServed("/api/boards/b1/sync")
	out := p.send(ctx, s, "/api/boards/b1/sync?since=1&wait=30")
	<-p.held
	cancel()
	if r := <-out; r.err == nil {
		t.Fatalf("cancelled poll answered %v", r.a)
	}
	select {
	case <-served:
	case <-time.After(pollWait):
		t.Fatal("the handler of a cancelled poll did not return")
	}
	r, err := e.hub.Room(context.Background(), "b1")
	if err != nil {
		t.Fatal(err)
	}
	if w, rw := e.hub.Waits(), r.Waiters(); w != 0 || rw != 0 {
		t.Fatalf("after the client left: hub waits=%d, room waiters=%d, want 0 and 0", w, rw)
	}
}

// TestLongPollCapPerPerson: the cap's last wait is held, the next is 429
// naming wait with Retry-After; other people are not affected.
func TestLongPollCapPerPerson(t *testing.T) {
	e := newEnv(t, withHub(hub.Options{MaxWaitsPerUser: 2}))
	p := newPolls(e)
	s := boardAt1(e)
	bob := e.invite(s, "b1", "bob@example.com", "pro")
	a1 := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
	a2 := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
	r := e.do("GET", "/api/boards/b1/sync?since=1&wait=30", s, nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"field":"wait"`) {
		t.Fatalf("third wait: %v (Retry-After %q), want 429 naming wait with Retry-After", r, r.header.Get("Retry-After"))
	}
	e.do("GET", "/api/boards/b1/sync?since=1", s, nil).wantBody(t, 200, `{"serverVersion":1}`) // a plain pull still works
	b := p.hold(t, bob, "/api/boards/b1/sync?since=1&wait=30")
	e.pushOK(s, "b1", notePush(board.Note{ID: "n2"}))
	for _, out := range []<-chan polled{a1, a2, b} {
		answered(t, out).wantBody(t, 200, `{"serverVersion":2}`)
	}
}

// TestLongPollShutdown: EndWaits (the server shutting down) answers held
// polls with the current version, and later ones without holding them.
func TestLongPollShutdown(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	out := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
	e.api.EndWaits()
	e.api.EndWaits() // twice is safe
	answered(t, out).wantBody(t, 200, `{"serverVersion":1}`)
	e.do("GET", "/api/boards/b1/sync?since=1&wait=30", s, nil).wantBody(t, 200, `{"serverVersion":1}`)
}

// TestLongPollHubClose: rooms closing answer their polls too.
func TestLongPollHubClose(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	out := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
	ctx, cancel := context.WithTimeout(context.Background(), pollWait)
	defer cancel()
	if err := e.hub.Close(ctx); err != nil {
		t.Fatal(err)
	}
	answered(t, out).wantBody(t, 200, `{"serverVersion":1}`)
}

// TestLongPollLogout: logging out ends the session's polls with 401; other
// sessions' polls go on.
func TestLongPollLogout(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	other := e.login("owner@example.com")
	mine := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
	theirs := p.hold(t, other, "/api/boards/b1/sync?since=1&wait=30")
	e.do("GET", "/api/auth/logout", s, nil).wantStatus(t, http.StatusOK)
	r := answered(t, mine)
	r.wantExactObject(t, 401, map[string]any{"error": "Your session ended. Log in again."})
	e.pushOK(other, "b1", notePush(board.Note{ID: "n2"}))
	answered(t, theirs).wantBody(t, 200, `{"serverVersion":2}`)
}

// TestLongPollAccessWithdrawn: removing an invitee ends their polls with
// 403; the owner's goes on.
func TestLongPollAccessWithdrawn(t *testing.T) {
	e := newEnv(t)
	p := newPolls(e)
	s := boardAt1(e)
	bob := e.invite(s, "b1", "bob@example.com", "pro")
	bobs := p.hold(t, bob, "/api/boards/b1/sync?since=1&wait=30")
	owners := p.hold(t, s, "/api/boards/b1/sync?since=1&wait=30")
	e.do("DELETE", "/api/boards/b1/invite", s, map[string]string{"email": "bob@example.com"}).wantStatus(t, http.StatusOK)
	answered(t, bobs).wantExactObject(t, 403, map[string]any{"error": "Your access to this board was withdrawn."})
	e.pushOK(s, "b1", notePush(board.Note{ID: "n2"}))
	answered(t, owners).wantBody(t, 200, `{"serverVersion":2}`)
}
