package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// runLinks: read-only links (persist.LinkStore): create, list, find by
// hash, revoke, expiry and the per-board cap.
func runLinks(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"lifecycle", testLinkLifecycle},
		{"expiry", testLinkExpiry},
		{"cap", testLinkCap},
		{"concurrent creations keep the cap", testLinkCapConcurrent},
		{"refusals", testLinkRefusals},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
}

// linkHash is a test link's token hash: distinct per name.
func linkHash(name string) []byte {
	h := sha256.Sum256([]byte(name))
	return h[:]
}

func testLink(boardID, id string, created time.Time, ttl time.Duration) persist.Link {
	return persist.Link{ID: id, BoardID: boardID, Hash: linkHash(boardID + "/" + id), CreatedBy: Owner, CreatedAt: created, ExpiresAt: created.Add(ttl)}
}

func mustCreateLink(t *testing.T, s persist.LinkStore, l persist.Link, now time.Time, max int) {
	t.Helper()
	if err := s.CreateLink(context.Background(), l, now, max); err != nil {
		t.Fatalf("CreateLink(%s): %v", l.ID, err)
	}
}

func linkIDs(t *testing.T, s persist.LinkStore, boardID string, now time.Time) []string {
	t.Helper()
	links, err := s.ListLinks(context.Background(), boardID, now)
	if err != nil {
		t.Fatalf("ListLinks(%s): %v", boardID, err)
	}
	if links == nil {
		t.Fatalf("ListLinks(%s) = nil, want a slice", boardID)
	}
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	return ids
}

func testLinkLifecycle(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b1", "b2")
	if got := linkIDs(t, s, "b1", T0); len(got) != 0 {
		t.Fatalf("links of a fresh board = %v", got)
	}
	// Created out of order: the list is oldest first.
	mustCreateLink(t, s, testLink("b1", "second", T0.Add(time.Minute), time.Hour), T0, 50)
	mustCreateLink(t, s, testLink("b1", "first", T0, time.Hour), T0, 50)
	mustCreateLink(t, s, testLink("b2", "other", T0, time.Hour), T0, 50)
	if got := fmt.Sprint(linkIDs(t, s, "b1", T0)); got != "[first second]" {
		t.Fatalf("links of b1 = %s, want [first second]", got)
	}
	links, _ := s.ListLinks(ctx, "b1", T0)
	want := testLink("b1", "first", T0, time.Hour)
	if l := links[0]; !bytes.Equal(l.Hash, want.Hash) || l.BoardID != "b1" || l.CreatedBy != Owner || !l.CreatedAt.Equal(T0) || !l.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("listed link = %+v, want %+v", l, want)
	}

	l, err := s.FindLink(ctx, want.Hash, T0)
	if err != nil || l.ID != "first" || l.BoardID != "b1" || !l.ExpiresAt.Equal(want.ExpiresAt) || !bytes.Equal(l.Hash, want.Hash) {
		t.Fatalf("FindLink = %+v, %v; want link first of b1", l, err)
	}
	if _, err := s.FindLink(ctx, linkHash("never made"), T0); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindLink of an unknown hash: err=%v, want not_found", err)
	}
	revokeLinks(t, s, want)
}

// revokeLinks revokes want (b1's "first", beside b1's "second" and b2's
// "other") and checks what remains.
func revokeLinks(t *testing.T, s persist.Store, want persist.Link) {
	ctx := context.Background()
	// Revoking through another board is no revocation.
	if ok, err := s.DeleteLink(ctx, "b2", "first"); err != nil || ok {
		t.Fatalf("DeleteLink(b2, first) = %v, %v; want false (b1's link)", ok, err)
	}
	if ok, err := s.DeleteLink(ctx, "b1", "first"); err != nil || !ok {
		t.Fatalf("DeleteLink(b1, first) = %v, %v; want true", ok, err)
	}
	if ok, err := s.DeleteLink(ctx, "b1", "first"); err != nil || ok {
		t.Fatalf("second DeleteLink = %v, %v; want false", ok, err)
	}
	if _, err := s.FindLink(ctx, want.Hash, T0); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindLink after revoking: err=%v, want not_found", err)
	}
	if got := fmt.Sprint(linkIDs(t, s, "b1", T0)); got != "[second]" {
		t.Fatalf("links of b1 after revoking = %s", got)
	}
	if got := fmt.Sprint(linkIDs(t, s, "b2", T0)); got != "[other]" {
		t.Fatalf("links of b2 = %s", got)
	}
}

func testLinkExpiry(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b1")
	l := testLink("b1", "short", T0, time.Hour)
	mustCreateLink(t, s, l, T0, 50)
	end := T0.Add(time.Hour)
	if _, err := s.FindLink(ctx, l.Hash, end.Add(-time.Nanosecond)); err != nil {
		t.Fatalf("FindLink just before expiry: %v", err)
	}
	if _, err := s.FindLink(ctx, l.Hash, end); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("FindLink at expiry: err=%v, want not_found", err)
	}
	if got := linkIDs(t, s, "b1", end.Add(-time.Nanosecond)); len(got) != 1 {
		t.Fatalf("links just before expiry = %v", got)
	}
	if got := linkIDs(t, s, "b1", end); len(got) != 0 {
		t.Fatalf("links at expiry = %v, want none", got)
	}
}

func testLinkCap(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1", "b2")
	const max = 3
	for i := range max {
		mustCreateLink(t, s, testLink("b1", fmt.Sprint("l", i), T0, time.Hour), T0, max)
	}
	// The cap is per board.
	mustCreateLink(t, s, testLink("b2", "l0", T0, time.Hour), T0, max)
	over := testLink("b1", "over", T0, 2*time.Hour)
	if err := s.CreateLink(context.Background(), over, T0, max); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("link %d of %d: err=%v, want conflict", max+1, max, err)
	}
	if _, err := s.FindLink(context.Background(), over.Hash, T0); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("the refused link was stored: err=%v", err)
	}
	// Expired links do not count: an hour on, all three have ended.
	later := T0.Add(time.Hour)
	mustCreateLink(t, s, over, later, max)
	if got := fmt.Sprint(linkIDs(t, s, "b1", later)); got != "[over]" {
		t.Fatalf("links after the others expired = %s, want [over]", got)
	}
	// Revoking frees a place.
	for i := range max - 1 {
		mustCreateLink(t, s, testLink("b1", fmt.Sprint("m", i), later, time.Hour), later, max)
	}
	if err := s.CreateLink(context.Background(), testLink("b1", "x", later, time.Hour), later, max); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("over the cap again: err=%v, want conflict", err)
	}
	if ok, err := s.DeleteLink(context.Background(), "b1", "m0"); err != nil || !ok {
		t.Fatalf("DeleteLink: %v, %v", ok, err)
	}
	mustCreateLink(t, s, testLink("b1", "x", later, time.Hour), later, max)
}

func testLinkCapConcurrent(t *testing.T, open Opener) {
	s, _ := openWith(t, open, T0, "b1")
	const max, tries = 5, 12
	var wg sync.WaitGroup
	errs := make(chan error, tries)
	for i := range tries {
		wg.Go(func() {
			errs <- s.CreateLink(context.Background(), testLink("b1", fmt.Sprint("c", i), T0, time.Hour), T0, max)
		})
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch board.ErrorCode(err) {
		case "":
			ok++
		case board.ECONFLICT:
		default:
			t.Errorf("CreateLink: %v", err)
		}
	}
	if ok != max {
		t.Errorf("%d concurrent creations passed, want %d", ok, max)
	}
	if got := linkIDs(t, s, "b1", T0); len(got) != max {
		t.Errorf("%d links stored, want %d", len(got), max)
	}
}

func testLinkRefusals(t *testing.T, open Opener) {
	ctx := context.Background()
	s, _ := openWith(t, open, T0, "b1")
	if err := s.CreateLink(ctx, testLink("nope", "a", T0, time.Hour), T0, 50); board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("CreateLink on an unclaimed board: err=%v, want not_found", err)
	}
	l := testLink("b1", "a", T0, time.Hour)
	mustCreateLink(t, s, l, T0, 50)
	dupID := testLink("b1", "a", T0, time.Hour)
	dupID.Hash = linkHash("another token")
	if err := s.CreateLink(ctx, dupID, T0, 50); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("CreateLink with a stored ID: err=%v, want conflict", err)
	}
	dupHash := testLink("b1", "b", T0, time.Hour)
	dupHash.Hash = l.Hash
	if err := s.CreateLink(ctx, dupHash, T0, 50); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("CreateLink with a stored hash: err=%v, want conflict", err)
	}
	if got := fmt.Sprint(linkIDs(t, s, "b1", T0)); got != "[a]" {
		t.Fatalf("links after refusals = %s, want [a]", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.CreateLink(cctx, testLink("b1", "late", T0, time.Hour), T0, 50); err == nil {
		t.Fatal("CreateLink with a done context succeeded")
	}
	if ok, err := s.DeleteLink(cctx, "b1", "a"); err == nil || ok {
		t.Fatalf("DeleteLink with a done context = %v, %v", ok, err)
	}
	if got := fmt.Sprint(linkIDs(t, s, "b1", T0)); got != "[a]" {
		t.Fatalf("links after cancelled writes = %s, want [a]", got)
	}
}
