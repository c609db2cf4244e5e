package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"corkboard/auth"
	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
	"corkboard/transport"
)

const (
	ada = "ada@example.com"
	bob = "bob@example.com"
	cy  = "cy@example.com"
)

// adaToken is a session token as a client holds it (43 base64url
// characters); the store keeps only its hash.
const adaToken = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

// buildInstallation makes a bbolt installation in dir through the store's
// public API with every kind of record: users and plans (one paid through
// a webhook event), credit usage, a session and a pending code, boards
// with invitees and phases, notes (one with extra fields) and items,
// tombstones on both sides of a prune (so the board has a horizon),
// idempotency keys (one from a push that changed nothing), changelog
// entries, current.md and snapshots. Times come from clock, except the
// session's, which is now so that a server accepts it.
func buildInstallation(t *testing.T, dir string, clock *storetest.Clock) {
	t.Helper()
	ctx := context.Background()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.Now = clock.Now
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.EnsureUser(ctx, ada, "free")
	must(err)
	_, err = db.UpdateUser(ctx, bob, "free", func(u *persist.User) error { u.Plan = "team"; return nil })
	must(err)
	_, _, err = db.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_1", CustomerID: "cus_1", Email: ada,
		Plan: func(string) (string, bool) { return "pro", true }}, "free")
	must(err)
	_, _, err = db.SpendCredits(ctx, ada, "2026-11", 7, 100)
	must(err)
	_, _, err = db.SpendCredits(ctx, bob, "2026-10", 3, 100)
	must(err)
	key, err := auth.SessionKey(adaToken)
	must(err)
	now := time.Now().UTC()
	must(db.CreateSession(ctx, key, persist.Session{Email: ada, CreatedAt: now, LastSeen: now.Add(123 * time.Nanosecond)}))
	must(db.PutOTP(ctx, cy, persist.OTP{Hash: []byte{1, 2, 3}, ExpiresAt: storetest.T0.Add(10*time.Minute + 7), Attempts: 2, Network: "192.0.2.0"}))

	_, err = db.ClaimBoard(ctx, "b1", ada)
	must(err)
	_, _, err = db.AddInvite(ctx, "b1", cy)
	must(err)
	_, _, err = db.AddInvite(ctx, "b1", bob)
	must(err)
	phases := &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"p1","name":"Plan"}`)}, CurrentPhaseID: "p1"}
	_, err = db.SetPhases(ctx, "b1", phases)
	must(err)
	clock.Advance(time.Second)
	_, err = db.ClaimBoard(ctx, "b2", bob)
	must(err)
	_, err = db.ClaimBoard(ctx, "b3", cy)
	must(err)

	var extra board.Note
	must(json.Unmarshal([]byte(`{"id":"n1","title":"One","content":"x","x":1.5,"y":2,"color":"yellow","type":"note","updatedAt":"","version":0,"deletedAt":null,"votes":3,"tags":["a"]}`), &extra))
	push := func(id, key string, p *board.Push) {
		t.Helper()
		if _, _, err := db.ApplyPush(ctx, id, p, key); err != nil {
			t.Fatalf("push to %s: %v", id, err)
		}
	}
	note := func(id, title string) board.Note {
		return board.Note{ID: id, Title: title, Type: "note", Color: "blue"}
	}
	push("b1", "k1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{extra, note("n2", "Two"), note("n3", "Three"), note("n4", "Four"), note("n5", "Five")}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{{ID: "i1", Key: "T-1", Type: "task", Summary: "first"}, {ID: "i2", Key: "T-2", Type: "bug", Summary: "second", Status: "open"}}}})
	push("b1", "k2", &board.Push{Board: &board.BoardPatch{Name: "Plans"}, Notes: board.NoteChanges{Upserted: []board.Note{note("n2", "Two, again")}}})
	push("b1", "k3", &board.Push{Notes: board.NoteChanges{Deleted: []string{"n3"}}, TrackerItems: board.ItemChanges{Deleted: []string{"i2"}}})
	clock.Advance(time.Hour)
	push("b1", "k4", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n6", "Six")}, Deleted: []string{"n4"}}})
	// The tombstones of v3 are forgotten: the horizon is 3, n4's stays.
	if n, err := db.PruneTombstones(ctx, storetest.T0.Add(30*time.Minute)); err != nil || n != 2 {
		t.Fatalf("PruneTombstones = %d, %v; want 2", n, err)
	}
	push("b1", "", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("n1", "One, renamed")}}})
	push("b1", "k-noop", &board.Push{Notes: board.NoteChanges{Deleted: []string{"nobody"}}})
	push("b3", "k1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{note("m1", "Mine")}},
		Frames:     board.FrameChanges{Upserted: []board.Frame{{ID: "f1", Title: "Area", W: 400, H: 300, Extra: []board.Field{{Name: "z", Value: []byte("1")}}}}},
		Connectors: board.ConnectorChanges{Upserted: []board.Connector{{ID: "c1", From: "m1", To: "f1", Label: "in"}}}})

	_, err = db.AppendLog(ctx, "b1", []persist.NewLogEntry{
		{NoteID: "n1", Action: "created", Content: []byte("# One\n")},
		{NoteID: "n2", Action: "edited", Content: []byte("# Two\n")},
		{NoteID: "", Action: "renamed", Content: []byte("Plans")},
	}, &persist.RenderedBoard{Markdown: []byte("# Plans v4\n"), Version: 4, Phases: phases})
	must(err)
	_, _, err = db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte("# Plans v5\n"), Version: 5, Phases: phases}, 5)
	must(err)
	clock.Advance(time.Minute)
	_, _, err = db.PutSnapshot(ctx, "b1", persist.RenderedBoard{Markdown: []byte("# Plans v5 again\n"), Version: 5, Phases: phases}, 5)
	must(err)
	_, err = db.AppendLog(ctx, "b1", []persist.NewLogEntry{{NoteID: "n1", Action: "edited", Content: []byte("# One, renamed\n")}}, nil)
	must(err)
	_, err = db.AppendLog(ctx, "b3", []persist.NewLogEntry{{NoteID: "m1", Action: "created", Content: []byte("# Mine\n")}}, nil)
	must(err)
	// Read-only links: b1 has two, one expiring long after the test's
	// clock, b3 one.
	for i, l := range []persist.Link{
		{ID: "L1", BoardID: "b1", CreatedBy: ada, CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(24 * time.Hour)},
		{ID: "L2", BoardID: "b1", CreatedBy: ada, CreatedAt: clock.Now().Add(time.Second), ExpiresAt: clock.Now().Add(8760 * time.Hour)},
		{ID: "L3", BoardID: "b3", CreatedBy: cy, CreatedAt: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)},
	} {
		l.Hash = migrateLinkKey(i)
		must(db.CreateLink(ctx, l, clock.Now(), 50))
	}
}

// migrateLinkKey is the storage key of the i-th link buildInstallation makes.
func migrateLinkKey(i int) []byte {
	k := make([]byte, 32)
	k[0] = byte(i + 1)
	return k
}

// compareStores reads everything buildInstallation wrote from both stores
// through persist's interfaces and fails on any difference.
func compareStores(t *testing.T, want, got persist.Store) {
	t.Helper()
	ctx := context.Background()
	same := func(what string, w, g any, werr, gerr error) {
		t.Helper()
		if werr != nil || gerr != nil {
			if board.ErrorCode(werr) != board.ErrorCode(gerr) {
				t.Fatalf("%s: bbolt err %v, PostgreSQL err %v", what, werr, gerr)
			}
			return
		}
		if d := cmp.Diff(w, g); d != "" {
			t.Fatalf("%s differs (-bbolt +PostgreSQL):\n%s", what, d)
		}
	}
	if !bytes.Equal(want.Secret(), got.Secret()) {
		t.Fatal("the server secret was not copied: codes sent before the move would not verify")
	}
	for _, email := range []string{ada, bob, cy, "nobody@example.com"} {
		wu, werr := want.FindUser(ctx, email)
		gu, gerr := got.FindUser(ctx, email)
		same("user "+email, wu, gu, werr, gerr)
		wb, werr := want.ListBoardsFor(ctx, email)
		gb, gerr := got.ListBoardsFor(ctx, email)
		same("boards of "+email, wb, gb, werr, gerr)
		for _, month := range []string{"2026-10", "2026-11"} {
			wc, werr := want.CreditsUsed(ctx, email, month)
			gc, gerr := got.CreditsUsed(ctx, email, month)
			same("credits of "+email+" in "+month, wc, gc, werr, gerr)
		}
		wo, werr := want.FindOTP(ctx, email)
		gotOTP, gerr := got.FindOTP(ctx, email)
		same("code of "+email, wo, gotOTP, werr, gerr)
	}
	key, err := auth.SessionKey(adaToken)
	if err != nil {
		t.Fatal(err)
	}
	ws, werr := want.FindSession(ctx, key)
	gs, gerr := got.FindSession(ctx, key)
	if gerr != nil {
		t.Fatalf("the session does not authenticate after the move: %v", gerr)
	}
	same("session", ws, gs, werr, gerr)
	for _, id := range []string{"b1", "b2", "b3"} {
		wl, werr := want.ListLinks(ctx, id, storetest.T0)
		gl, gerr := got.ListLinks(ctx, id, storetest.T0)
		same("links of "+id, wl, gl, werr, gerr)
	}
	for i := range 3 {
		wl, werr := want.FindLink(ctx, migrateLinkKey(i), storetest.T0)
		gl, gerr := got.FindLink(ctx, migrateLinkKey(i), storetest.T0)
		if gerr != nil {
			t.Fatalf("link %d does not open after the move: %v", i, gerr)
		}
		same(fmt.Sprint("link ", i), wl, gl, werr, gerr)
	}

	wts, werr := want.BoardsToSnapshot(ctx)
	gts, gerr := got.BoardsToSnapshot(ctx)
	same("boards to snapshot", wts, gts, werr, gerr)
	for _, id := range []string{"b1", "b2", "b3", "b-unclaimed"} {
		wb, werr := want.FindBoard(ctx, id)
		gb, gerr := got.FindBoard(ctx, id)
		same("board "+id, wb, gb, werr, gerr)
		if werr != nil {
			continue
		}
		wst, werr := want.BoardState(ctx, id)
		gst, gerr := got.BoardState(ctx, id)
		same("state of "+id, wst, gst, werr, gerr)
		// Every since, from 0 through the horizon and past the version.
		for since := int64(0); since <= wb.Version+1; since++ {
			wc, werr := want.ChangesSince(ctx, id, since)
			gc, gerr := got.ChangesSince(ctx, id, since)
			same(fmt.Sprintf("pull of %s since %d", id, since), wc, gc, werr, gerr)
		}
		wm, wf, werr := want.CurrentSnapshot(ctx, id)
		gm, gf, gerr := got.CurrentSnapshot(ctx, id)
		same("current.md of "+id, []any{string(wm), wf}, []any{string(gm), gf}, werr, gerr)
		wsn, werr := want.ListSnapshots(ctx, id)
		gsn, gerr := got.ListSnapshots(ctx, id)
		same("snapshots of "+id, wsn, gsn, werr, gerr)
		for _, s := range wsn {
			wmd, werr := want.FindSnapshot(ctx, id, s.Key)
			gmd, gerr := got.FindSnapshot(ctx, id, s.Key)
			same("snapshot "+s.Key, string(wmd), string(gmd), werr, gerr)
		}
		for _, q := range []persist.LogQuery{{}, {NoteID: "n1"}, {Action: "edited"}, {NoteID: "n1", Action: "edited"}} {
			wl := pageLog(t, want, id, q)
			gl := pageLog(t, got, id, q)
			same(fmt.Sprintf("changelog of %s by %+v", id, q), wl, gl, nil, nil)
			for _, e := range wl {
				we, werr := want.FindLogEntry(ctx, id, e.Key)
				ge, gerr := got.FindLogEntry(ctx, id, e.Key)
				same("entry "+e.Key, we, ge, werr, gerr)
			}
		}
		wl, werr := want.LatestNoteEntry(ctx, id, "n1")
		gl, gerr := got.LatestNoteEntry(ctx, id, "n1")
		same("latest entry of n1 on "+id, wl, gl, werr, gerr)
	}
}

// pageLog lists a board's changelog one entry per page, as a client pages.
func pageLog(t *testing.T, s persist.Store, id string, q persist.LogQuery) []persist.LogEntry {
	t.Helper()
	var out []persist.LogEntry
	q.Limit = 1
	for {
		page, err := s.ListLog(context.Background(), id, q)
		if err != nil {
			t.Fatalf("ListLog(%s, %+v): %v", id, q, err)
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		ts, ok := persist.ParseStamp(page[len(page)-1].Timestamp)
		if !ok {
			t.Fatalf("bad stamp %q", page[len(page)-1].Timestamp)
		}
		q.Before = &ts
	}
}

// TestMigrateRoundTrip: a bbolt installation copied into PostgreSQL reads
// back identical through every interface of the store; a second run adds
// and changes nothing; the copied store then carries on where bbolt
// stopped (versions, keys, webhook events, changelog stamps); and once it
// has moved on, a third run refuses to copy over it.
func TestMigrateRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clock := storetest.NewClock(storetest.T0)
	buildInstallation(t, dir, clock)
	src, err := bolt.OpenReadOnly(filepath.Join(dir, bolt.FileName), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dsn := pgtest.NewDatabase(t)
	dst, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	dst.Now = clock.Now

	first, err := migrate(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	checkFirstMigration(t, first)
	// The store is reopened, as a node would: the secret is read anew.
	dst2, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer dst2.Close()
	dst2.Now = clock.Now
	compareStores(t, src, dst2)

	second, err := migrate(ctx, src, dst2)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	checkSecondMigration(t, first, second)
	compareStores(t, src, dst2)

	checkCarriesOn(t, src, dst2)
	checkRefusesOverMovedBoard(t, src, dst2)
}

// checkFirstMigration checks what the first run counted and added: every
// record of buildInstallation's, and b1 whole.
func checkFirstMigration(t *testing.T, first *migration) {
	t.Helper()
	if d := first.differences(); len(d) > 0 {
		t.Fatalf("counts differ after the first run: %v", d)
	}
	wantKinds := map[string]int64{
		persist.CountSecret: 1, persist.CountUsers: 2, persist.CountCustomers: 1, persist.CountBillingEvents: 1,
		persist.CountUsage: 2, persist.CountSessions: 1, persist.CountOTPs: 1, persist.CountBoards: 3,
		persist.CountMembers: 5, persist.CountNotes: 5, persist.CountItems: 1, persist.CountFrames: 1, persist.CountConnectors: 1, persist.CountTombstones: 1,
		persist.CountRevisions: 3, persist.CountKeys: 6, persist.CountChangelogState: 2, persist.CountLogEntries: 5, persist.CountSnapshots: 2,
		persist.CountLinks: 3,
	}
	if d := cmp.Diff(wantKinds, first.source.Kinds); d != "" {
		t.Fatalf("source counts (-want +got):\n%s", d)
	}
	// The secret existed (Open made one), so it counts as new only
	// because it was replaced; every other record is new.
	if d := cmp.Diff(wantKinds, first.added); d != "" {
		t.Fatalf("added on the first run (-want +got):\n%s", d)
	}
	b1 := first.target.Boards["b1"]
	b1.Rows = [32]byte{} // compared with the source's by differences
	if got, want := b1, (persist.BoardCounts{Version: 5, Horizon: 3, Notes: 4, Items: 1, Tombstones: 1, Revisions: 3, Keys: 5, LogEntries: 4, Snapshots: 2, Links: 2}); got != want {
		t.Fatalf("board b1 in PostgreSQL: %+v, want %+v", got, want)
	}
}

// checkSecondMigration checks that a second run added and changed nothing.
func checkSecondMigration(t *testing.T, first, second *migration) {
	t.Helper()
	if d := second.differences(); len(d) > 0 {
		t.Fatalf("counts differ after the second run: %v", d)
	}
	for k, n := range second.added {
		if n != 0 {
			t.Errorf("second run added %d %s, want 0", n, k)
		}
	}
	if d := cmp.Diff(first.target, second.target); d != "" {
		t.Fatalf("the second run changed the target's counts:\n%s", d)
	}
}

// checkCarriesOn checks that PostgreSQL carries on where bbolt stopped:
// webhook events and idempotency keys replay, versions, revisions,
// changelog stamps and credits continue.
func checkCarriesOn(t *testing.T, src *bolt.DB, dst2 *postgres.Store) {
	t.Helper()
	ctx := context.Background()
	_, replayed, err := dst2.ApplyBillingEvent(ctx, persist.BillingUpdate{EventID: "evt_1", Email: ada,
		Plan: func(string) (string, bool) { return "free", true }}, "free")
	if err != nil || !replayed {
		t.Fatalf("webhook event evt_1 again: replayed=%v, %v; want a replay", replayed, err)
	}
	if plan, _ := dst2.UserPlan(ctx, ada); plan != "pro" {
		t.Fatalf("ada's plan %q after the replayed event, want pro", plan)
	}
	if v, replayed, err := dst2.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n9"}}}}, "k2"); err != nil || !replayed || v != 2 {
		t.Fatalf("push with key k2 again: v%d replayed=%v %v; want a replay of v2", v, replayed, err)
	}
	if v, _, err := dst2.ApplyPush(ctx, "b1", &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n9"}}}}, "k9"); err != nil || v != 6 {
		t.Fatalf("next push: v%d, %v; want v6", v, err)
	}
	// The revisions came along: an edit of n2 as it was at version 1
	// merges into its rename at 2 instead of undoing it.
	recolored := board.Note{ID: "n2", Title: "Two", Type: "note", Color: "red", BaseVersion: 1}
	res, err := dst2.ApplyPushes(ctx, "b1", []persist.PushInput{{Push: &board.Push{Notes: board.NoteChanges{Upserted: []board.Note{recolored}}}}})
	if err != nil || res[0].Err != nil || res[0].Merged != 1 || res[0].Changes.Notes[0].Title != "Two, again" || res[0].Changes.Notes[0].Color != "red" {
		t.Fatalf("merge on a copied revision: %+v, %v; want n2 renamed and red at v7", res, err)
	}
	last := pageLog(t, src, "b1", persist.LogQuery{})[0]
	added, err := dst2.AppendLog(ctx, "b1", []persist.NewLogEntry{{NoteID: "n9", Action: "created"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if added[0].Key <= last.Key {
		t.Fatalf("new entry %s sorts before the copied %s: the stamp sequence was not copied", added[0].Key, last.Key)
	}
	if used, ok, err := dst2.SpendCredits(ctx, ada, "2026-11", 93, 100); err != nil || !ok || used != 100 {
		t.Fatalf("spend the rest of ada's credits: %d %v %v; want 100 of 100", used, ok, err)
	}
}

// checkRefusesOverMovedBoard: now that b1 moved on in PostgreSQL, copying
// again would lose that, so a third run refuses and writes nothing.
func checkRefusesOverMovedBoard(t *testing.T, src *bolt.DB, dst2 *postgres.Store) {
	t.Helper()
	ctx := context.Background()
	before, err := dst2.DumpCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate(ctx, src, dst2); err == nil || !strings.Contains(err.Error(), "board b1 is at version 7 in PostgreSQL") {
		t.Fatalf("third run after b1 moved on: %v; want a refusal naming b1", err)
	}
	after, err := dst2.DumpCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Fatalf("a refused run wrote something:\n%s", d)
	}
}

// TestMigrateRefusesAnotherInstallation: a target whose board of the same
// ID belongs to someone else is left alone, with nothing written.
func TestMigrateRefusesAnotherInstallation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	buildInstallation(t, dir, storetest.NewClock(storetest.T0))
	src, err := bolt.OpenReadOnly(filepath.Join(dir, bolt.FileName), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, _, dsn := pgtest.Open(t, storetest.T0, "b2") // owned by pgtest.Owner, not bob
	secret := bytes.Clone(dst.Secret())
	_, err = migrate(ctx, src, dst)
	if err == nil || !strings.Contains(err.Error(), "board b2 in PostgreSQL belongs to another installation") {
		t.Fatalf("migrate onto another installation's b2: %v; want a refusal naming b2", err)
	}
	c, err := dst.DumpCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kinds[persist.CountUsers] != 0 || c.Kinds[persist.CountBoards] != 1 {
		t.Fatalf("a refused run wrote: %v", c.Kinds)
	}
	reopened, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	if !bytes.Equal(reopened.Secret(), secret) {
		t.Fatal("a refused run replaced the secret")
	}
}

// TestMigrateRefusesWhileServerRuns: the bbolt file of a running server
// (which holds its lock) is not copied.
func TestMigrateRefusesWhileServerRuns(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"migrate", "--from", filepath.Join(dir, bolt.FileName), "--to", "postgres://127.0.0.1:1/none", "--lock-timeout", "50ms"},
		func(string) string { return "" }, &out, &errOut, nil)
	if err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "stop the corkboard server") {
		t.Fatalf("migrate of a locked file: %v; want a clear refusal", err)
	}
}

// migrateTable reads the command's table: kind → bbolt, postgres, new.
func migrateTable(t *testing.T, out string) map[string][3]int64 {
	t.Helper()
	rows := map[string][3]int64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		var nums [3]int64
		ok := true
		for i, s := range f[len(f)-3:] {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				ok = false
				break
			}
			nums[i] = n
		}
		if ok {
			rows[strings.Join(f[:len(f)-3], " ")] = nums
		}
	}
	if len(rows) != len(persist.CountKinds) {
		t.Fatalf("table has %d kinds, want %d:\n%s", len(rows), len(persist.CountKinds), out)
	}
	return rows
}

// TestMigrateCommand runs `corkboard migrate` twice, then a server on the
// database: the copied session is logged in and the board pulls as it
// was.
func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	buildInstallation(t, dir, storetest.NewClock(storetest.T0))
	dsn := pgtest.NewDatabase(t)
	migrateOnce := func() map[string][3]int64 {
		t.Helper()
		var out, errOut bytes.Buffer
		// The data folder is accepted for --from as well as the file.
		err := run(context.Background(), []string{"migrate", "--from", dir, "--to", dsn}, func(string) string { return "" }, &out, &errOut, nil)
		if err != nil {
			t.Fatalf("migrate: %v\n%s%s", err, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "counts match") {
			t.Fatalf("output:\n%s", out.String())
		}
		return migrateTable(t, out.String())
	}
	first := migrateOnce()
	if got := first[persist.CountNotes]; got != [3]int64{5, 5, 5} {
		t.Fatalf("notes: %v, want 5 in bbolt, 5 in PostgreSQL, 5 new", got)
	}
	second := migrateOnce()
	for kind, n := range second {
		if n[0] != first[kind][0] || n[1] != first[kind][1] || n[2] != 0 {
			t.Errorf("second run %s: %v, want %d %d 0", kind, n, first[kind][0], first[kind][1])
		}
	}

	base, _, stop := start(t, "-store", dsn, "-data", filepath.Join(t.TempDir(), "node"))
	defer stop()
	get := func(path string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(&http.Cookie{Name: transport.SessionCookie, Value: adaToken})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	if status, body := get("/api/auth/me"); status != http.StatusOK {
		t.Fatalf("GET /api/auth/me with the copied session: %d %s", status, body)
	}
	status, body := get("/api/boards/b1/sync?since=0")
	if status != http.StatusOK {
		t.Fatalf("pull of b1: %d %s", status, body)
	}
	var ch board.Changes
	if err := json.Unmarshal(body, &ch); err != nil {
		t.Fatal(err)
	}
	if ch.ServerVersion != 5 || ch.Board.Name != "Plans" || len(ch.Notes) != 4 || len(ch.TrackerItems) != 1 {
		t.Fatalf("pull of b1 on PostgreSQL: v%d %q, %d notes, %d items; want v5 \"Plans\", 4 notes, 1 item", ch.ServerVersion, ch.Board.Name, len(ch.Notes), len(ch.TrackerItems))
	}
}

// TestGenerateMigrateInstallation writes the installation docs/postgres.md
// measures a migration on (200 boards of 500 notes, pushed 50 at a time
// with a key each, 25 deleted, 10 changelog entries per board) into the
// folder CORKBOARD_MIGRATE_GEN names; it is skipped without it.
func TestGenerateMigrateInstallation(t *testing.T) {
	dir := os.Getenv("CORKBOARD_MIGRATE_GEN")
	if dir == "" {
		t.Skip("set CORKBOARD_MIGRATE_GEN to a folder to generate the measured installation")
	}
	ctx := context.Background()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	content := strings.Repeat("A line of a note's text. ", 8)
	for b := range 200 {
		id := fmt.Sprintf("board-%03d", b)
		owner := fmt.Sprintf("user%03d@example.com", b%50)
		if _, err := db.EnsureUser(ctx, owner, "free"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ClaimBoard(ctx, id, owner); err != nil {
			t.Fatal(err)
		}
		var pushes []persist.PushInput
		for p := range 10 {
			notes := make([]board.Note, 50)
			for n := range notes {
				notes[n] = board.Note{ID: fmt.Sprintf("note-%03d", p*50+n), Title: "Note", Content: content, Type: "note", Color: "yellow", X: float64(n), Y: float64(p)}
			}
			pushes = append(pushes, persist.PushInput{Push: &board.Push{Notes: board.NoteChanges{Upserted: notes}}, IdempotencyKey: fmt.Sprintf("%s-k%d", id, p)})
		}
		var dead []string
		for n := range 25 {
			dead = append(dead, fmt.Sprintf("note-%03d", n*20))
		}
		pushes = append(pushes, persist.PushInput{Push: &board.Push{Notes: board.NoteChanges{Deleted: dead}}})
		if _, err := db.ApplyPushes(ctx, id, pushes); err != nil {
			t.Fatal(err)
		}
		var entries []persist.NewLogEntry
		for n := range 10 {
			entries = append(entries, persist.NewLogEntry{NoteID: fmt.Sprintf("note-%03d", n), Action: "edited", Content: []byte("# Note\n\n" + content)})
		}
		if _, err := db.AppendLog(ctx, id, entries, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// stopAfter passes records on until it has passed n, then fails: a
// migration interrupted part-way (a crash, a lost connection).
type stopAfter struct {
	persist.DumpSink
	n int
}

var errInterrupted = errors.New("interrupted")

func (s *stopAfter) Row(ctx context.Context, r persist.RowRecord) error {
	if s.n--; s.n < 0 {
		return errInterrupted
	}
	return s.DumpSink.Row(ctx, r)
}

// TestMigrateResumesAfterInterruption: a board bigger than one import
// batch is written in several transactions; a run that stops after the
// first of them leaves whole batches, and the next run copies the rest,
// adding exactly what was missing.
func TestMigrateResumesAfterInterruption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const notes = 5 * board.MaxUpsertedNotes
	for p := range notes / board.MaxUpsertedNotes {
		batch := make([]board.Note, board.MaxUpsertedNotes)
		for i := range batch {
			batch[i] = board.Note{ID: fmt.Sprintf("n%05d", p*board.MaxUpsertedNotes+i), Title: "x"}
		}
		if p == 0 {
			if _, err := db.ClaimBoard(ctx, "big", ada); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := db.ApplyPush(ctx, "big", &board.Push{Notes: board.NoteChanges{Upserted: batch}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if notes <= postgres.ImportBatchRecords {
		t.Fatalf("%d notes fit one import batch of %d: the test needs more", notes, postgres.ImportBatchRecords)
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

	im := dst.NewImporter()
	if err := src.Export(ctx, &stopAfter{DumpSink: im, n: postgres.ImportBatchRecords}); !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted export: %v", err)
	}
	partial := im.Added()[persist.CountNotes]
	if partial == 0 || partial >= notes {
		t.Fatalf("the interrupted run wrote %d of %d notes; want some, not all", partial, notes)
	}

	res, err := migrate(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.differences(); len(d) > 0 {
		t.Fatalf("counts differ after the resumed run: %v", d)
	}
	if got, want := res.added[persist.CountNotes], notes-partial; got != want {
		t.Fatalf("the resumed run added %d notes, want the %d missing", got, want)
	}
	for _, since := range []int64{0, 2, 4} {
		want, err := src.ChangesSince(ctx, "big", since)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dst.ChangesSince(ctx, "big", since)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("pull since %d differs (-bbolt +PostgreSQL):\n%s", since, d)
		}
	}
}

// TestMigrateArguments: what the command refuses before it opens anything.
func TestMigrateArguments(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"ErrNoFrom", []string{"migrate", "--to", "postgres://localhost/x"}, "--from is required"},
		{"ErrNoTo", []string{"migrate", "--from", dir}, "--to must be a postgres:// URL"},
		{"ErrOtherScheme", []string{"migrate", "--from", dir, "--to", "mysql://localhost/x"}, "--to must be a postgres:// URL"},
		{"ErrStoreFlagScheme", []string{"-store", "mysql://x", "migrate", "--from", dir}, "--to must be a postgres:// URL"},
		{"ErrMissingFile", []string{"migrate", "--from", filepath.Join(dir, "nope.db"), "--to", "postgres://localhost/x"}, "nope.db"},
		{"ErrExtraArgument", []string{"migrate", "--from", dir, "--to", "postgres://localhost/x", "now"}, `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, func(string) string { return "" }, io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err=%v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, bolt.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused migrate created the bbolt file: %v", err)
	}
}

// TestMigrateFindsChangedRows: a row whose content differs between the two
// sides is a mismatch even when every count agrees.
func TestMigrateFindsChangedRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	buildInstallation(t, dir, storetest.NewClock(storetest.T0))
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
	if res, err := migrate(ctx, src, dst); err != nil || len(res.differences()) > 0 {
		t.Fatalf("first run: %v", err)
	}
	if _, err := dst.Pool().Exec(ctx, `UPDATE board_rows SET data = convert_to('{"id":"n2","title":"Changed"}', 'UTF8')
		WHERE board_id = 'b1' AND id = 'n2'`); err != nil {
		t.Fatal(err)
	}
	res, err := migrate(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.differences(); len(d) != 1 || d[0] != "board b1: the same counts, but rows with other contents" {
		t.Fatalf("differences after a row changed in PostgreSQL: %q", d)
	}
}
