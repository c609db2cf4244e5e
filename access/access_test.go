package access_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/access"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
)

// Who is who on the board "roadmap" that persisttest.Owner claims.
const (
	owner    = persisttest.Owner
	freeBob  = "bob@example.com" // invited, on free: views
	proCarol = "carol@example.com"
	stranger = "eve@example.com"
)

// countingStore counts the reads of boards that reach the store.
type countingStore struct {
	persist.BoardStore
	finds atomic.Int64
}

func (c *countingStore) FindBoard(ctx context.Context, id string) (*board.Board, error) {
	c.finds.Add(1)
	return c.BoardStore.FindBoard(ctx, id)
}

type fixture struct {
	svc       *access.Service
	db        *bolt.DB
	store     *countingStore
	clock     *persisttest.Clock
	mu        sync.Mutex
	announced []string
}

// newFixture is a service on a real bbolt store and a real Meter, with the
// board "roadmap" shared with bob (free) and carol (pro), and a cache TTL
// of a minute.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	db, clock, _ := persisttest.Open(t, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), "roadmap")
	ctx := context.Background()
	for email, plan := range map[string]string{owner: billing.Free, freeBob: billing.Free, proCarol: billing.Pro, stranger: billing.Pro} {
		if _, err := db.EnsureUser(ctx, email, plan); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []string{freeBob, proCarol} {
		if _, _, err := db.AddInvite(ctx, "roadmap", e); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{db: db, store: &countingStore{BoardStore: db}, clock: clock}
	meter := billing.NewMeter(billing.MeterConfig{Store: db, DefaultPlan: billing.Free, Now: clock.Now})
	f.svc = access.New(f.store, meter, access.Options{CacheTTL: time.Minute, Now: clock.Now, Announce: func(kind cache.Kind, key string) {
		if kind == cache.Board {
			f.mu.Lock()
			f.announced = append(f.announced, key)
			f.mu.Unlock()
		}
	}})
	return f
}

func TestGuard(t *testing.T) {
	tests := []struct {
		name, board, email  string
		wantCode            string
		wantOwner, wantEdit bool
	}{
		{"Owner", "roadmap", owner, "", true, true},
		{"InviteeOnFreeViews", "roadmap", freeBob, "", false, false},
		{"InviteeOnProEdits", "roadmap", proCarol, "", false, true},
		{"ErrStranger", "roadmap", stranger, board.EFORBIDDEN, false, false},
		{"ErrUnclaimed", "nobody-here", owner, board.ENOTFOUND, false, false},
		{"ErrMalformedID", "no spaces", owner, board.EINVALID, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			a, err := f.svc.Guard(context.Background(), tt.board, tt.email)
			if tt.wantCode != "" {
				if board.ErrorCode(err) != tt.wantCode || a.Board != nil {
					t.Fatalf("Guard = %+v, %v; want %s", a, err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Board.ID != tt.board || a.Email != tt.email || a.IsOwner != tt.wantOwner || a.CanEdit != tt.wantEdit {
				t.Fatalf("Guard = %+v; want owner %v, canEdit %v", a, tt.wantOwner, tt.wantEdit)
			}
			if err := a.RequireEdit(); (err == nil) != tt.wantEdit || (err != nil && board.ErrorCode(err) != board.EFORBIDDEN) {
				t.Fatalf("RequireEdit = %v; canEdit %v", err, tt.wantEdit)
			}
		})
	}
	t.Run("ErrMalformedIDNamesTheField", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.svc.Guard(context.Background(), "no spaces", owner)
		var e *board.Error
		if !asBoardError(err, &e) || e.Field != "boardId" {
			t.Fatalf("err = %#v, want field boardId", err)
		}
		if n := f.store.finds.Load(); n != 0 {
			t.Fatalf("a malformed ID read the store %d times", n)
		}
	})
}

func asBoardError(err error, e **board.Error) bool {
	be, ok := err.(*board.Error)
	*e = be
	return ok
}

// TestCacheWritesCountAtOnce: reads are served from memory, and every
// write through the service (invite removed or added, phases, claim) is
// seen by the very next guard and announced to the other nodes.
func TestCacheWritesCountAtOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for range 5 {
		if _, err := f.svc.Guard(ctx, "roadmap", freeBob); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.store.finds.Load(); n != 1 {
		t.Fatalf("5 guards read the store %d times, want 1", n)
	}

	if _, removed, err := f.svc.RemoveInvite(ctx, "roadmap", freeBob); err != nil || !removed {
		t.Fatalf("RemoveInvite = %v, %v", removed, err)
	}
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); board.ErrorCode(err) != board.EFORBIDDEN {
		t.Fatalf("guard after removal: %v, want EFORBIDDEN", err)
	}
	if _, _, err := f.svc.AddInvite(ctx, "roadmap", freeBob); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); err != nil {
		t.Fatalf("guard after a new invite: %v", err)
	}
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"do","name":"Do"}`)}, CurrentPhaseID: "do"}
	if _, err := f.svc.SetPhases(ctx, "roadmap", ph); err != nil {
		t.Fatal(err)
	}
	if a, err := f.svc.Guard(ctx, "roadmap", owner); err != nil || a.Board.Phases == nil || a.Board.Phases.CurrentPhaseID != "do" {
		t.Fatalf("guard after SetPhases: %+v, %v; want the new phases", a, err)
	}
	if _, err := f.svc.Guard(ctx, "fresh", owner); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("unclaimed: %v", err)
	}
	if err := f.svc.Claim(ctx, "fresh", owner); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Guard(ctx, "fresh", owner); err != nil {
		t.Fatalf("guard right after the claim: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if want := []string{"roadmap", "roadmap", "roadmap", "fresh"}; !slices.Equal(f.announced, want) {
		t.Fatalf("announced %v, want %v", f.announced, want)
	}
}

// TestCacheOtherNodes: a write another node made (straight to the store)
// is seen after Invalidate, or after the TTL at the latest.
func TestCacheOtherNodes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	removeElsewhere := func() {
		t.Helper()
		if _, _, err := f.db.RemoveInvite(ctx, "roadmap", freeBob); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); err != nil {
		t.Fatal(err)
	}
	removeElsewhere()
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); err != nil {
		t.Fatalf("within the TTL the cached board answers: %v", err)
	}
	f.svc.Invalidate(cache.Plan, "roadmap") // not the service's kind
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); err != nil {
		t.Fatalf("a plan invalidation dropped the board: %v", err)
	}
	f.svc.Invalidate(cache.Board, "roadmap")
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); board.ErrorCode(err) != board.EFORBIDDEN {
		t.Fatalf("after Invalidate: %v, want EFORBIDDEN", err)
	}

	if _, _, err := f.db.AddInvite(ctx, "roadmap", freeBob); err != nil {
		t.Fatal(err)
	}
	f.svc.Invalidate(cache.Board, "roadmap")
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); err != nil {
		t.Fatal(err)
	}
	removeElsewhere()
	f.clock.Advance(time.Minute + time.Second)
	if _, err := f.svc.Guard(ctx, "roadmap", freeBob); board.ErrorCode(err) != board.EFORBIDDEN {
		t.Fatalf("after the TTL: %v, want EFORBIDDEN", err)
	}
}

func TestClaim(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := f.svc.Claim(ctx, "roadmap", owner); err != nil {
		t.Fatalf("the owner claiming again: %v, want nil", err)
	}
	if err := f.svc.Claim(ctx, "roadmap", stranger); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("someone else claiming: %v, want ECONFLICT", err)
	}
}

func TestLook(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ph := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"plan","name":"Plan"}`)}, CurrentPhaseID: "plan"}
	if _, err := f.svc.SetPhases(ctx, "roadmap", ph); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, board, email string
		want               access.Standing
	}{
		{"Unclaimed", "nobody-here", owner, access.Standing{Unclaimed: true}},
		{"StrangerLearnsNoPhases", "roadmap", stranger, access.Standing{}},
		{"Viewer", "roadmap", freeBob, access.Standing{IsMember: true, Role: board.RoleView, Phases: ph}},
		{"Owner", "roadmap", owner, access.Standing{IsMember: true, IsOwner: true, CanEdit: true, Role: board.RoleEdit, Phases: ph}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.svc.Look(ctx, tt.board, tt.email)
			if err != nil {
				t.Fatal(err)
			}
			samePhases := (got.Phases == nil) == (tt.want.Phases == nil) && (got.Phases == nil || got.Phases.CurrentPhaseID == tt.want.Phases.CurrentPhaseID)
			got.Phases, tt.want.Phases = nil, nil
			if got != tt.want || !samePhases {
				t.Fatalf("Look = %+v, want %+v (phases equal: %v)", got, tt.want, samePhases)
			}
		})
	}
}

func TestInvitedAccess(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// carol owns a board of her own: an owner always edits, so it is not
	// among the boards a plan change concerns.
	if err := f.svc.Claim(ctx, "carols", proCarol); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		email      string
		wantBoards []string
		wantEdit   bool
	}{
		{freeBob, []string{"roadmap"}, false},
		{proCarol, []string{"roadmap"}, true},
		{owner, nil, false},
		{stranger, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.email, func(t *testing.T) {
			boards, canEdit, err := f.svc.InvitedAccess(ctx, tt.email)
			if err != nil || !slices.Equal(boards, tt.wantBoards) || canEdit != tt.wantEdit {
				t.Fatalf("InvitedAccess = %v, %v, %v; want %v, %v", boards, canEdit, err, tt.wantBoards, tt.wantEdit)
			}
		})
	}
}

// TestGuardCachedAllocatesNothing: the guard of a cached board, for its
// owner and for an invitee whose plan is cached, allocates nothing; every
// request to a board pays it (docs/benchmarks.md).
func TestGuardCachedAllocatesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, email := range []string{owner, proCarol} {
		if _, err := f.svc.Guard(ctx, "roadmap", email); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := f.svc.Guard(ctx, "roadmap", email); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Fatalf("guard of %s: %v allocations, want 0", email, n)
		}
	}
}

func BenchmarkGuardCached(b *testing.B) {
	db, clock, _ := persisttest.Open(b, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), "roadmap")
	if _, _, err := db.AddInvite(context.Background(), "roadmap", proCarol); err != nil {
		b.Fatal(err)
	}
	if _, err := db.EnsureUser(context.Background(), proCarol, billing.Pro); err != nil {
		b.Fatal(err) // a user with no record is not cached: the plan would be read every time
	}
	meter := billing.NewMeter(billing.MeterConfig{Store: db, DefaultPlan: billing.Free, Now: clock.Now})
	svc := access.New(db, meter, access.Options{Now: clock.Now})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Guard(ctx, "roadmap", proCarol); err != nil {
			b.Fatal(err)
		}
	}
}

// TestInvitees: each invitee's editing follows their own plan, and the
// plans that let invitees edit are named in the table's order.
func TestInvitees(t *testing.T) {
	f := newFixture(t)
	got, err := f.svc.Invitees(context.Background(), []string{proCarol, freeBob, "new@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	want := []access.Invitee{
		{Email: proCarol, CanEdit: true, Plan: billing.Pro},
		{Email: freeBob, CanEdit: false, Plan: billing.Free},
		{Email: "new@example.com", CanEdit: false, Plan: billing.Free}, // no account yet: the default plan
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Invitees = %+v, want %+v", got, want)
	}
	if got, want := f.svc.EditPlans(), []string{billing.Pro, billing.Team}; !slices.Equal(got, want) {
		t.Fatalf("EditPlans = %v, want %v", got, want)
	}
}
