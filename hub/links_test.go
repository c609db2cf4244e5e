package hub_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"corkboard/rooms/roomstest"
	"corkboard/transport/livewire"
)

// TestHiddenConnectionAcrossNodes: a read-only link's connection
// (SubscribeHidden) on node B is in nobody's presence on A or B, and a
// kick of its identity on node A (the link revoked there) closes it on B
// with 4003.
func TestHiddenConnectionAcrossNodes(t *testing.T) {
	cl := newCluster(t, 2, "b1")
	ctx := context.Background()
	qa := roomstest.NewQueue(256)
	sa, _, err := cl.hubs[0].Subscribe(ctx, "b1", "ca", "ann@example.com", qa)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Leave()
	qb := roomstest.NewQueue(256)
	sb, _, err := cl.hubs[1].Subscribe(ctx, "b1", "cb", "bob@example.com", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Leave()
	waitPresence(t, qa, "joined", "cb")

	lease, err := cl.hubs[1].Admit("b1", "link:L1")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	sl, w, err := lease.SubscribeHidden(ctx, "cl", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Leave()
	for _, p := range w.Present {
		if p.ID == "cl" {
			t.Fatalf("the hidden connection is in its own welcome: %+v", w.Present)
		}
	}
	// Carl joins on B after the link: by the batch that tells Ann and Bob
	// of him, the link's join would have come (notes of one node keep
	// order), and no batch named it.
	sc, _, err := cl.hubs[1].Subscribe(ctx, "b1", "cc", "carl@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Leave()
	for name, q := range map[string]*roomstest.Queue{"ann (node A)": qa, "bob (node B)": qb} {
		if named := presenceUntil(t, q, "joined", "cc"); slices.Contains(named, "cl") {
			t.Fatalf("%s was told of the link's cl: %v", name, named)
		}
	}
	// Nor is the link in the presence of someone joining later, anywhere.
	sd, w2, err := cl.hubs[0].Subscribe(ctx, "b1", "cd", "dan@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Leave()
	for _, p := range w2.Present {
		if p.ID == "cl" {
			t.Fatalf("the hidden connection is in a newcomer's presence: %+v", w2.Present)
		}
	}

	cl.hubs[0].Kick("b1", "link:L1")
	select {
	case <-sl.Done():
		if code, _ := sl.CloseStatus(); code != livewire.CloseForbidden {
			t.Fatalf("the link's connection closed with %d, want %d", code, livewire.CloseForbidden)
		}
	case <-time.After(waitFor):
		t.Fatal("the link's connection on B stayed open after a kick on A")
	}
	// Its end is no leave either: no batch up to Carl's leave names it.
	sc.Leave()
	if named := presenceUntil(t, qb, "left", "cc"); slices.Contains(named, "cl") {
		t.Fatalf("bob was told of the link's cl: %v", named)
	}
}

// presenceUntil reads q's presence batches until one lists id in list
// ("joined" or "left"), and returns every ID those batches named.
func presenceUntil(tb testing.TB, q *roomstest.Queue, list, id string) []string {
	tb.Helper()
	var named []string
	for {
		m := next(tb, q, livewire.TypePresence)
		for _, p := range m.Joined {
			named = append(named, p.ID)
		}
		named = append(named, m.Left...)
		if list == "joined" && slices.ContainsFunc(m.Joined, func(p livewire.Presence) bool { return p.ID == id }) ||
			list == "left" && slices.Contains(m.Left, id) {
			return named
		}
	}
}
