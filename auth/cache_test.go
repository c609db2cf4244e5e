package auth_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/auth/authtest"
	"corkboard/board"
	"corkboard/internal/cache"
)

// neverExpires is a cache TTL no test reaches: every Authenticate after the
// first is answered from the cache, so what these tests see is the cache's
// doing.
const neverExpires = 10 * 365 * 24 * time.Hour

func (e *codeEnv) login(t *testing.T, email string) string {
	t.Helper()
	l, err := e.svc.Verify(context.Background(), email, e.send(t, email, ip1), ip1)
	if err != nil {
		t.Fatal(err)
	}
	return l.Token
}

// TestCachedSessionExpiry runs the expiry rules with the session cached:
// the sliding idle expiry, the hourly last-use write (checked in storage)
// and the 90-day cap.
func TestCachedSessionExpiry(t *testing.T) {
	ctx := context.Background()
	const day = 24 * time.Hour
	type step struct {
		advance time.Duration
		ok      bool
		// stored is the last use storage must hold after the step, as an
		// offset from the login.
		stored time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"IdleJustBefore", []step{{time.Minute, true, 0}, {15*day - time.Minute - time.Second, true, 15*day - time.Second}}},
		{"ErrIdle", []step{{time.Minute, true, 0}, {15*day - time.Minute, false, 0}}},
		{"Sliding", []step{{15*day - time.Second, true, 15*day - time.Second}, {15*day - time.Second, true, 30*day - 2*time.Second}, {15 * day, false, 0}}},
		{"UseWithinAnHourNotWritten", []step{{59 * time.Minute, true, 0}, {time.Minute, true, time.Hour}, {30 * time.Minute, true, time.Hour}}},
		{"ErrUseWithinAnHourDoesNotSlide", []step{{59 * time.Minute, true, 0}, {15*day - 59*time.Minute, false, 0}}},
		{"ErrAbsoluteCap", []step{
			{14 * day, true, 14 * day}, {14 * day, true, 28 * day}, {14 * day, true, 42 * day}, {14 * day, true, 56 * day},
			{14 * day, true, 70 * day}, {14 * day, true, 84 * day}, {6*day - time.Second, true, 90*day - time.Second}, {time.Second, false, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCodeEnv(t, auth.Config{SessionCacheTTL: neverExpires})
			token := e.login(t, "ada@example.com")
			loginAt := e.clock.Now()
			key, err := auth.SessionKey(token)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Authenticate(ctx, token); err != nil { // fills the cache
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				e.clock.Advance(s.advance)
				email, err := e.svc.Authenticate(ctx, token)
				if !s.ok {
					if board.ErrorCode(err) != board.EUNAUTHORIZED {
						t.Fatalf("step %d (+%v): err=%v, want EUNAUTHORIZED", i+1, s.advance, err)
					}
					if _, err := e.db.FindSession(ctx, key); board.ErrorCode(err) != board.ENOTFOUND {
						t.Fatalf("step %d: expired session still stored: %v", i+1, err)
					}
					if _, err := e.svc.Authenticate(ctx, token); board.ErrorCode(err) != board.EUNAUTHORIZED {
						t.Fatalf("step %d: expired session accepted again: %v", i+1, err)
					}
					continue
				}
				if err != nil || email != "ada@example.com" {
					t.Fatalf("step %d (+%v): Authenticate=%q, %v; want the session", i+1, s.advance, email, err)
				}
				sess, err := e.db.FindSession(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := sess.LastSeen.Sub(loginAt), s.stored; got != want {
					t.Fatalf("step %d: stored last use is login+%v, want login+%v", i+1, got, want)
				}
			}
		})
	}
}

// TestCachedSessionLogout: a logout ends a cached session at once, also
// while other requests of it are in flight.
func TestCachedSessionLogout(t *testing.T) {
	ctx := context.Background()
	e := newCodeEnv(t, auth.Config{SessionCacheTTL: neverExpires})
	token := e.login(t, "ada@example.com")
	other := e.login(t, "ada@example.com")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, _ = e.svc.Authenticate(ctx, token)
			}
		})
	}
	if _, err := e.svc.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Logout(ctx, token); err != nil {
		t.Fatal(err)
	}
	// Fills that read the session before the logout must not bring it back.
	for i := range 100 {
		if _, err := e.svc.Authenticate(ctx, token); board.ErrorCode(err) != board.EUNAUTHORIZED {
			t.Fatalf("Authenticate %d after logout: err=%v, want EUNAUTHORIZED", i, err)
		}
	}
	wg.Wait()
	if _, err := e.svc.Authenticate(ctx, token); board.ErrorCode(err) != board.EUNAUTHORIZED {
		t.Fatalf("after logout and the racing requests: err=%v, want EUNAUTHORIZED", err)
	}
	if _, err := e.svc.Authenticate(ctx, other); err != nil {
		t.Fatalf("the user's other session: %v", err)
	}
}

// TestSessionCacheBounded: tokens storage does not know are never cached,
// and live sessions past the bound evict each other without failing.
func TestSessionCacheBounded(t *testing.T) {
	ctx := context.Background()
	e := newCodeEnv(t, auth.Config{SessionCacheTTL: neverExpires, SessionCacheSize: 2})
	raw := make([]byte, 32)
	for range 200 {
		rand.Read(raw)
		if _, err := e.svc.Authenticate(ctx, base64.RawURLEncoding.EncodeToString(raw)); board.ErrorCode(err) != board.EUNAUTHORIZED {
			t.Fatalf("forged token: err=%v, want EUNAUTHORIZED", err)
		}
	}
	if got := e.svc.CachedSessions(); got != 0 {
		t.Fatalf("%d sessions cached after forged tokens, want 0", got)
	}
	tokens := []string{e.login(t, "ada@example.com"), e.login(t, "bob@example.com"), e.login(t, "cy@example.com")}
	for round := range 3 {
		for i, tok := range tokens {
			if _, err := e.svc.Authenticate(ctx, tok); err != nil {
				t.Fatalf("round %d, session %d: %v", round, i, err)
			}
			if got := e.svc.CachedSessions(); got > 2 {
				t.Fatalf("%d sessions cached, want at most 2", got)
			}
		}
	}
	if err := e.svc.Logout(ctx, tokens[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Authenticate(ctx, tokens[2]); board.ErrorCode(err) != board.EUNAUTHORIZED {
		t.Fatalf("after logout: err=%v, want EUNAUTHORIZED", err)
	}
}

// TestSessionInvalidateFromAnotherNode: two services on one store are two
// nodes. A logout on one is not seen by the other's cache until the feed
// calls Invalidate, which also ends the session's watches there.
func TestSessionInvalidateFromAnotherNode(t *testing.T) {
	ctx := context.Background()
	e := newCodeEnv(t, auth.Config{SessionCacheTTL: neverExpires})
	log, _ := authtest.NewLogger(t)
	node2 := auth.New(e.db, &recordingMailer{}, auth.Config{SessionCacheTTL: neverExpires, Now: e.clock.Now}, log)
	token := e.login(t, "ada@example.com")
	if _, err := node2.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	w, err := node2.WatchSession(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := e.svc.Logout(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, err := node2.Authenticate(ctx, token); err != nil {
		t.Fatalf("node 2 before the feed (cached, the documented bound): %v", err)
	}
	key, _ := auth.SessionKey(token)
	node2.Invalidate(cache.Plan, string(key)) // not the service's kind
	if isClosed(w.Ended()) {
		t.Fatal("an invalidation of another kind ended the watch")
	}
	node2.Invalidate(cache.Session, string(key))
	if _, err := node2.Authenticate(ctx, token); board.ErrorCode(err) != board.EUNAUTHORIZED {
		t.Fatalf("node 2 after the feed: err=%v, want EUNAUTHORIZED", err)
	}
	if !isClosed(w.Ended()) {
		t.Fatal("node 2's watch of the session did not end")
	}
}

// TestSessionCacheTTL: without the feed, another node's logout is seen
// once the TTL has passed.
func TestSessionCacheTTL(t *testing.T) {
	ctx := context.Background()
	e := newCodeEnv(t, auth.Config{SessionCacheTTL: 5 * time.Second})
	token := e.login(t, "ada@example.com")
	if _, err := e.svc.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	key, _ := auth.SessionKey(token)
	if err := e.db.DeleteSession(ctx, key); err != nil { // another node's logout
		t.Fatal(err)
	}
	e.clock.Advance(5*time.Second - time.Nanosecond)
	if _, err := e.svc.Authenticate(ctx, token); err != nil {
		t.Fatalf("within the TTL: %v (want the cached session)", err)
	}
	e.clock.Advance(time.Nanosecond)
	if _, err := e.svc.Authenticate(ctx, token); board.ErrorCode(err) != board.EUNAUTHORIZED {
		t.Fatalf("at the TTL: err=%v, want EUNAUTHORIZED", err)
	}
}

// BenchmarkAuthenticateCached is the session check of every request.
func BenchmarkAuthenticateCached(b *testing.B) {
	ctx := context.Background()
	e := newCodeEnv(b, auth.Config{})
	l, err := e.svc.Verify(ctx, "ada@example.com", e.send(b, "ada@example.com", ip1), ip1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.svc.Authenticate(ctx, l.Token); err != nil {
			b.Fatal(err)
		}
	}
}
