package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
)

// TestMigrateCarriesVotes: an open vote's dots are rows of their own, and
// migrate carries them with the vote's totals: each person has their dots
// on PostgreSQL, so the limits hold there as they did on bbolt.
func TestMigrateCarriesVotes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := storetest.NewClock(storetest.T0)
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	db.Now = clock.Now
	const ann, ben = "ann@example.com", "ben@example.com"
	act := board.NewVoteAction()
	act.Action, act.ID, act.By, act.PerPerson = board.VoteStart, "v1", "owner@example.com", 2
	dot := func(who, note string) *board.Push {
		return &board.Push{Dot: &board.VoteDot{NoteID: note, Delta: 1, By: who}}
	}
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*board.Push{
		{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1"}, {ID: "n2"}, {ID: "n3"}}}},
		{Vote: &act}, dot(ann, "n1"), dot(ann, "n2"), dot(ben, "n2"),
	} {
		if _, _, err := db.ApplyPush(ctx, "b1", p, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := bolt.OpenReadOnly(filepath.Join(dir, bolt.FileName), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	m, err := migrate(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if m.source.Kinds[persist.CountVoteDots] != 3 || m.added[persist.CountVoteDots] != 3 || m.target.Boards["b1"].VoteDots != 3 {
		t.Fatalf("vote dots: source %d, added %d, target %d; want 3 each", m.source.Kinds[persist.CountVoteDots], m.added[persist.CountVoteDots], m.target.Boards["b1"].VoteDots)
	}
	v, mine, err := dst.MyDots(ctx, "b1", ann)
	if err != nil || v == nil || v.Dots != 3 || v.Voters != 2 || len(mine) != 2 || mine["n1"] != 1 || mine["n2"] != 1 {
		t.Fatalf("ann on PostgreSQL: vote %+v, dots %v, err %v", v, mine, err)
	}
	// Ann's two dots came along: a third is refused; Ben's second passes.
	if _, _, err := dst.ApplyPush(ctx, "b1", dot(ann, "n3"), ""); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("ann's third dot on PostgreSQL: %v, want ECONFLICT", err)
	}
	if _, _, err := dst.ApplyPush(ctx, "b1", dot(ben, "n3"), ""); err != nil {
		t.Fatalf("ben's second dot on PostgreSQL: %v", err)
	}
}
