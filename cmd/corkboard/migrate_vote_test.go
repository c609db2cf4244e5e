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
	const ann, ben = "ann@example.com", "ben@example.com"
	buildVoteInstallation(t, dir, ann, ben)
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
	if _, _, err := dst.ApplyPush(ctx, "b1", votePushDot(ann, "n3"), ""); board.ErrorCode(err) != board.ECONFLICT {
		t.Fatalf("ann's third dot on PostgreSQL: %v, want ECONFLICT", err)
	}
	if _, _, err := dst.ApplyPush(ctx, "b1", votePushDot(ben, "n3"), ""); err != nil {
		t.Fatalf("ben's second dot on PostgreSQL: %v", err)
	}
}

func votePushDot(who, note string) *board.Push {
	return &board.Push{Dot: &board.VoteDot{NoteID: note, Delta: 1, By: who}}
}

// buildVoteInstallation makes a bbolt installation in dir with board b1:
// notes n1 to n3 and an open vote of 2 dots a person, ann's on n1 and n2,
// ben's on n2.
func buildVoteInstallation(t *testing.T, dir, ann, ben string) {
	t.Helper()
	ctx := context.Background()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	db.Now = storetest.NewClock(storetest.T0).Now
	act := board.NewVoteAction()
	act.Action, act.ID, act.By, act.PerPerson = board.VoteStart, "v1", "owner@example.com", 2
	if _, err := db.ClaimBoard(ctx, "b1", "owner@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*board.Push{
		{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1"}, {ID: "n2"}, {ID: "n3"}}}},
		{Vote: &act}, votePushDot(ann, "n1"), votePushDot(ann, "n2"), votePushDot(ben, "n2"),
	} {
		if _, _, err := db.ApplyPush(ctx, "b1", p, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
