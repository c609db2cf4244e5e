package bolt_test

import (
	"context"
	"sync"
	"testing"

	"corkboard/board"
	"corkboard/persist"
)

func TestSpendCreditsEdge(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	for i := 1; i <= 3; i++ {
		used, ok, err := db.SpendCredits(ctx, "a@example.com", "2026-11", 3, 10)
		if err != nil || !ok || used != 3*i {
			t.Fatalf("charge %d: used=%d ok=%v err=%v", i, used, ok, err)
		}
	}
	// 9 used; 3 more would be 12 > 10.
	if used, ok, err := db.SpendCredits(ctx, "a@example.com", "2026-11", 3, 10); err != nil || ok || used != 9 {
		t.Fatalf("over-limit charge: used=%d ok=%v err=%v, want 9 false nil", used, ok, err)
	}
	// Exactly reaching the limit is allowed.
	if used, ok, err := db.SpendCredits(ctx, "a@example.com", "2026-11", 1, 10); err != nil || !ok || used != 10 {
		t.Fatalf("last credit: used=%d err=%v", used, err)
	}
	// Another month and another user are separate.
	if used, _ := db.CreditsUsed(ctx, "a@example.com", "2026-12"); used != 0 {
		t.Fatalf("next month used=%d", used)
	}
	if err := db.RefundCredits(ctx, "a@example.com", "2026-11", 4); err != nil {
		t.Fatal(err)
	}
	if used, _ := db.CreditsUsed(ctx, "a@example.com", "2026-11"); used != 6 {
		t.Fatalf("after refund used=%d, want 6", used)
	}
}

func TestSpendCreditsConcurrentNeverOverspends(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 40 {
		wg.Go(func() {
			if _, charged, err := db.SpendCredits(ctx, "b@example.com", "2026-11", 1, 25); err == nil && charged {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	used, _ := db.CreditsUsed(ctx, "b@example.com", "2026-11")
	if ok != 25 || used != 25 {
		t.Fatalf("accepted=%d used=%d, want 25 and 25", ok, used)
	}
}

func TestApplyBillingEvent(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	toPro := func(string) (string, bool) { return "pro", true }
	u, replayed, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_1", CustomerID: "cus_1", Email: "c@example.com", Plan: toPro}, "free")
	if err != nil || replayed || u.Plan != "pro" || u.CustomerID != "cus_1" {
		t.Fatalf("first event: %+v replayed=%v err=%v", u, replayed, err)
	}
	// Replay changes nothing, even with another plan.
	toTeam := func(string) (string, bool) { return "team", true }
	if _, replayed, _ := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_1", Email: "c@example.com", Plan: toTeam}, "free"); !replayed {
		t.Fatal("replay not detected")
	}
	if u, _ := db.FindUser(ctx, "c@example.com"); u.Plan != "pro" {
		t.Fatalf("plan after replay=%s", u.Plan)
	}
	// A later event found by customer id alone.
	toFree := func(string) (string, bool) { return "free", true }
	if u, _, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_2", CustomerID: "cus_1", Plan: toFree}, "free"); err != nil || u.Email != "c@example.com" || u.Plan != "free" {
		t.Fatalf("by customer: %+v err=%v", u, err)
	}
	if _, _, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_3", CustomerID: "cus_unknown", Plan: toFree}, "free"); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("unknown customer err=%v, want not_found", err)
	}
	// The failed event was not recorded: it can be retried once the user is known.
	if _, replayed, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_3", CustomerID: "cus_unknown", Email: "d@example.com", Plan: toPro}, "free"); err != nil || replayed {
		t.Fatalf("retry of failed event: replayed=%v err=%v", replayed, err)
	}
}
