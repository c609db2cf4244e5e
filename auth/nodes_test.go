package auth_test

import (
	"context"
	"testing"

	"corkboard/auth"
)

// TestLogoutEndsWatchesOnOtherNodes: a logout on node A tells SessionEnded
// the session's key; node B, sharing the store, ends its watches of that
// session when handed the key (EndSessionWatches), and only those.
func TestLogoutEndsWatchesOnOtherNodes(t *testing.T) {
	ctx := context.Background()
	ended := make(chan []byte, 4)
	a := newCodeEnv(t, auth.Config{SessionEnded: func(id []byte) { ended <- id }})
	b := auth.New(a.db, a.mail, auth.Config{Now: a.clock.Now}, nil)
	l, err := a.svc.Verify(ctx, "ada@example.com", a.send(t, "ada@example.com", ip1), ip1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := a.svc.Verify(ctx, "bob@example.com", a.send(t, "bob@example.com", ip1), ip1)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.WatchSession(ctx, l.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Stop()
	wo, err := b.WatchSession(ctx, other.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer wo.Stop()
	if err := a.svc.Logout(ctx, l.Token); err != nil {
		t.Fatal(err)
	}
	var id []byte
	select {
	case id = <-ended:
	default:
		t.Fatal("Logout did not tell SessionEnded")
	}
	if key, _ := auth.SessionKey(l.Token); string(key) != string(id) {
		t.Fatalf("SessionEnded got %x, want the session's key %x", id, key)
	}
	if isClosed(wb.Ended()) {
		t.Fatal("node B's watch ended before it was told")
	}
	b.EndSessionWatches(id)
	if !isClosed(wb.Ended()) {
		t.Fatal("node B's watch of the logged-out session did not end")
	}
	if isClosed(wo.Ended()) {
		t.Fatal("node B's watch of another session ended")
	}
}
