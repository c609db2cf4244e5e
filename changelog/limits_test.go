package changelog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
)

// TestSnapshotSizeLimit: a snapshot of exactly MaxSnapshotBytes is
// taken, one byte more is refused (ETOOLARGE naming "snapshot" and the
// limit) and keeps nothing.
func TestSnapshotSizeLimit(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, 0, "b1")
	e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1", Content: "some text"}}}})
	st, err := e.db.BoardState(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	size := len(changelog.RenderBoard(*st))
	opts := func(max int) changelog.Options {
		return changelog.Options{MaxSnapshotBytes: max, Logger: slog.New(slog.DiscardHandler)}
	}

	tooSmall := changelog.New(e.db, opts(size-1))
	_, err = tooSmall.Snapshot(ctx, "b1")
	var be *board.Error
	if !errors.As(err, &be) || be.Code != board.ETOOLARGE || be.Field != "snapshot" || be.Limit != int64(size-1) {
		t.Fatalf("Snapshot over the limit = %v, want ETOOLARGE on snapshot with limit %d", err, size-1)
	}
	if list, _ := e.db.ListSnapshots(ctx, "b1"); len(list) != 0 {
		t.Fatalf("a refused snapshot kept %v", list)
	}
	// Past the limit, current.md is not kept either: GET renders it.
	e.clock.Advance(1)
	if _, err := tooSmall.Append(ctx, "b1", []changelog.Entry{{Action: changelog.ActionRenameBoard, Content: "x"}}); err != nil {
		t.Fatalf("Append on a board past the snapshot size: %v", err)
	}
	if md, _, _ := e.db.CurrentSnapshot(ctx, "b1"); md != nil {
		t.Fatalf("current.md of %d bytes kept past the limit", len(md))
	}
	if md, err := tooSmall.Current(ctx, "b1"); err != nil || len(md) != size {
		t.Fatalf("Current = %d bytes, %v; want the rendered %d", len(md), err, size)
	}

	exact := changelog.New(e.db, opts(size))
	if _, err := exact.Snapshot(ctx, "b1"); err != nil {
		t.Fatalf("Snapshot at exactly the limit: %v", err)
	}
}

// TestSnapshotIdenticalReturnsTheNewest: taking a snapshot of a board
// that did not change since its newest keeps no copy and answers the
// newest key; a change gives a new one.
func TestSnapshotIdenticalReturnsTheNewest(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, 0, "b1")
	e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n1"}}}})
	first, err := e.log.Snapshot(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(1e9)
	again, err := e.log.Snapshot(ctx, "b1")
	if err != nil || again.Key != first.Key || !again.Existing {
		t.Fatalf("second snapshot = %+v, %v; want the first, %s", again, err, first.Key)
	}
	e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n2"}}}})
	third, err := e.log.Snapshot(ctx, "b1")
	if err != nil || third.Key == first.Key || third.Existing {
		t.Fatalf("snapshot after a change = %+v, %v; want a new key", third, err)
	}
	if list, _ := e.db.ListSnapshots(ctx, "b1"); len(list) != 2 {
		t.Fatalf("%d snapshots kept, want 2", len(list))
	}
}

// blockingStore holds the board's read (ScanChangesSince, which snapshots
// render from) until release is closed, telling entered first: a snapshot
// that holds its slot for as long as the test wants.
type blockingStore struct {
	changelog.Store
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStore) ScanChangesSince(ctx context.Context, id string, since int64, fn func(p *persist.ChangePart) error) error {
	b.entered <- struct{}{}
	<-b.release
	return b.Store.ScanChangesSince(ctx, id, since, fn)
}

// TestSnapshotSlots: with SnapshotSlots snapshots being taken, one more
// is refused at once with EUNAVAILABLE and a Retry-After; once a slot is
// free it is taken.
func TestSnapshotSlots(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, 0, "b1")
	bs := &blockingStore{Store: e.db, entered: make(chan struct{}), release: make(chan struct{})}
	l := changelog.New(bs, changelog.Options{SnapshotSlots: 2, Logger: slog.New(slog.DiscardHandler)})
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := l.Snapshot(ctx, "b1")
			done <- err
		}()
		<-bs.entered
	}
	_, err := l.Snapshot(ctx, "b1")
	var be *board.Error
	if !errors.As(err, &be) || be.Code != board.EUNAVAILABLE || be.RetryAfter < 1 {
		t.Fatalf("third concurrent snapshot = %v, want EUNAVAILABLE with RetryAfter", err)
	}
	close(bs.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("held snapshot: %v", err)
		}
	}
	go func() { <-bs.entered }()
	if _, err := l.Snapshot(ctx, "b1"); err != nil {
		t.Fatalf("snapshot once the slots are free: %v", err)
	}
}

// TestSnapshotKeepIsBounded: Keep past MaxKeep keeps MaxKeep.
func TestSnapshotKeepIsBounded(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, changelog.MaxKeep+50, "b1")
	for i := range changelog.MaxKeep + 1 {
		e.clock.Advance(1e6)
		e.push(t, "b1", board.Push{Notes: board.NoteChanges{Upserted: []board.Note{{ID: "n", Content: string(rune('a' + i%26))}}}})
		if _, err := e.log.Snapshot(ctx, "b1"); err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := e.db.ListSnapshots(ctx, "b1"); len(list) != changelog.MaxKeep {
		t.Fatalf("%d snapshots kept, want MaxKeep = %d", len(list), changelog.MaxKeep)
	}
}

// rowByRowStore refuses to read a board whole (BoardState), which costs
// every row's decoded copy at once: snapshots and exports must render
// from the store's row-by-row read.
type rowByRowStore struct{ changelog.Store }

func (rowByRowStore) BoardState(context.Context, string) (*board.State, error) {
	return nil, errors.New("the board was read whole")
}

// TestSnapshotsRenderRowByRow: taking a snapshot and exporting the
// current Markdown read the board row by row and give exactly the
// Markdown of the whole board's state, phases included.
func TestSnapshotsRenderRowByRow(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, 0, "b1")
	var notes []board.Note
	for i := range 300 {
		notes = append(notes, board.Note{ID: fmt.Sprintf("n%03d", 299-i), Title: fmt.Sprintf("Note %d", i), Content: strings.Repeat("text ", 50)})
	}
	e.push(t, "b1", board.Push{
		Notes:        board.NoteChanges{Upserted: notes},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{{ID: "i2", Key: "CB-2", Summary: "two"}, {ID: "i1", Key: "CB-1", Summary: "one"}}},
	})
	if _, err := e.db.SetPhases(ctx, "b1", &board.Phases{Phases: []json.RawMessage{json.RawMessage(`{"id":"p1","name":"Ideas"}`)}, CurrentPhaseID: "p1"}); err != nil {
		t.Fatal(err)
	}
	st, err := e.db.BoardState(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	want := string(changelog.RenderBoard(*st))

	l := changelog.New(rowByRowStore{e.db}, changelog.Options{Logger: slog.New(slog.DiscardHandler)})
	doc, err := l.CurrentDoc(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	var exported strings.Builder
	if _, err := doc.WriteTo(&exported); err != nil {
		t.Fatalf("export: %v", err)
	}
	if exported.String() != want {
		t.Fatalf("export differs from the board's Markdown:\n%.400s\nwant\n%.400s", exported.String(), want)
	}
	info, err := l.Snapshot(ctx, "b1")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	md, err := l.BoardSnapshot(ctx, "b1", info.Key)
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != want {
		t.Fatal("the snapshot differs from the board's Markdown")
	}
	// An unclaimed board's export fails when it is written.
	doc, err = l.CurrentDoc(ctx, "ghost")
	if err == nil {
		_, err = doc.WriteTo(io.Discard)
	}
	if board.ErrorCode(err) != board.ENOTFOUND {
		t.Fatalf("export of an unclaimed board: %v, want ENOTFOUND", err)
	}
}
