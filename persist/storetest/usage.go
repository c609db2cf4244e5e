package storetest

import (
	"context"
	"sync"
	"testing"

	"corkboard/board"
	"corkboard/persist"
)

// runUsage: credits and billing events (persist.UsageStore,
// persist.BillingStore).
func runUsage(t *testing.T, open Opener) {
	t.Run("SpendCreditsEdge", func(t *testing.T) { testSpendCreditsEdge(t, open) })
	t.Run("SpendCreditsConcurrentNeverOverspends", func(t *testing.T) { testSpendCreditsConcurrentNeverOverspends(t, open) })
	t.Run("ApplyBillingEvent", func(t *testing.T) { testApplyBillingEvent(t, open) })
	t.Run("LastCreditsRace", func(t *testing.T) { testLastCreditsRace(t, open) })
	t.Run("RefundsRaceCharges", func(t *testing.T) { testRefundsRaceCharges(t, open) })
	t.Run("BillingEventsRace", func(t *testing.T) { testBillingEventsRace(t, open) })
}

func testSpendCreditsEdge(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

func testSpendCreditsConcurrentNeverOverspends(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

func testApplyBillingEvent(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, authT0)
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

// testLastCreditsRace: charges of mixed sizes racing for the last credits
// never take the usage past the limit, and every refusal was for more than
// was left.
func testLastCreditsRace(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0)
	const email, month, limit, start = "race@example.com", "2026-11", 30, 24
	if _, ok, err := db.SpendCredits(ctx, email, month, start, limit); err != nil || !ok {
		t.Fatalf("first charge: ok=%v err=%v", ok, err)
	}
	const n = 24
	charged := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, ok, err := db.SpendCredits(ctx, email, month, 1+i%3, limit)
			if err != nil {
				t.Error(err)
			}
			charged[i] = ok
		})
	}
	wg.Wait()
	used, err := db.CreditsUsed(ctx, email, month)
	if err != nil {
		t.Fatal(err)
	}
	sum := start
	for i, ok := range charged {
		if ok {
			sum += 1 + i%3
		} else if 1+i%3 <= limit-used {
			t.Fatalf("a charge of %d was refused, but %d credits are left", 1+i%3, limit-used)
		}
	}
	if used > limit || used != sum {
		t.Fatalf("used %d (limit %d), accepted charges add up to %d; want equal and within the limit", used, limit, sum)
	}
}

// testRefundsRaceCharges: refunds and charges racing on one month keep an
// exact count.
func testRefundsRaceCharges(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0)
	const email, month = "r@example.com", "2026-11"
	if _, ok, err := db.SpendCredits(ctx, email, month, 50, 1000); err != nil || !ok {
		t.Fatal(ok, err)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, ok, err := db.SpendCredits(ctx, email, month, 3, 1000); err != nil || !ok {
				t.Error("charge", ok, err)
			}
		})
		wg.Go(func() {
			if err := db.RefundCredits(ctx, email, month, 2); err != nil {
				t.Error("refund", err)
			}
		})
	}
	wg.Wait()
	if used, err := db.CreditsUsed(ctx, email, month); err != nil || used != 50+20*3-20*2 {
		t.Fatalf("used %d, %v; want %d", used, err, 50+20*3-20*2)
	}
	// A refund never takes usage below zero.
	if err := db.RefundCredits(ctx, email, month, 1000); err != nil {
		t.Fatal(err)
	}
	if used, _ := db.CreditsUsed(ctx, email, month); used != 0 {
		t.Fatalf("used %d after refunding more than was spent, want 0", used)
	}
	if err := db.RefundCredits(ctx, "never@example.com", month, 5); err != nil {
		t.Fatal(err)
	}
	if used, _ := db.CreditsUsed(ctx, "never@example.com", month); used != 0 {
		t.Fatalf("refund to a user who spent nothing left %d, want 0", used)
	}
}

// testBillingEventsRace: the same provider event delivered several times at
// once is applied exactly once; the others report a replay.
func testBillingEventsRace(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := openWith(t, open, T0)
	// Each application appends to the plan, so a double application shows.
	upd := persist.BillingUpdate{EventID: "evt_race", CustomerID: "cus_r", Email: "e@example.com",
		Plan: func(cur string) (string, bool) { return cur + "+", true }}
	const n = 12
	replays := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			u, replayed, err := db.ApplyBillingEvent(ctx, upd, "free")
			if err != nil || !replayed && (u == nil || u.Plan != "free+") {
				t.Errorf("delivery %d: %+v replayed=%v err=%v", i, u, replayed, err)
			}
			replays[i] = replayed
		})
	}
	wg.Wait()
	if applied := n - countTrue(replays); applied != 1 {
		t.Fatalf("%d deliveries applied, want exactly 1", applied)
	}
	if u, err := db.FindUser(ctx, "e@example.com"); err != nil || u.Plan != "free+" || u.CustomerID != "cus_r" {
		t.Fatalf("user %+v, %v; want plan free+ (applied once) with the customer id", u, err)
	}
	// A new event id applies again; a plan func answering false keeps the plan.
	upd.EventID = "evt_2"
	if u, replayed, err := db.ApplyBillingEvent(ctx, upd, "free"); err != nil || replayed || u.Plan != "free++" {
		t.Fatalf("next event: %+v replayed=%v err=%v", u, replayed, err)
	}
	keep := persist.BillingUpdate{EventID: "evt_3", CustomerID: "cus_r", Plan: func(string) (string, bool) { return "team", false }}
	if u, _, err := db.ApplyBillingEvent(ctx, keep, "free"); err != nil || u.Plan != "free++" {
		t.Fatalf("event keeping the plan: %+v, %v", u, err)
	}
	// A new address is created on the default plan.
	if u, _, err := db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_4", Email: "new@example.com"}, "free"); err != nil || u.Plan != "free" || !u.CreatedAt.Equal(T0) {
		t.Fatalf("event for a new address: %+v, %v; want a free user created at the store's clock", u, err)
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
