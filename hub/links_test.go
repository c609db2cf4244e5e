package hub_test

import (
	"context"
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
	if m := next(t, qa, livewire.TypeJoin); m.ID != "cb" {
		t.Fatalf("ann saw %+v join, want cb", m)
	}

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
	// Carl joins on B after the link: the next join Ann and Bob see is
	// his, so the link's was never sent (notes of one node keep order).
	sc, _, err := cl.hubs[1].Subscribe(ctx, "b1", "cc", "carl@example.com", roomstest.NewQueue(256))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Leave()
	for name, q := range map[string]*roomstest.Queue{"ann (node A)": qa, "bob (node B)": qb} {
		m := next(t, q, livewire.TypeJoin)
		for m.ID == "ca" { // Bob may learn of Ann, on A, by a join
			m = next(t, q, livewire.TypeJoin)
		}
		if m.ID != "cc" {
			t.Fatalf("%s saw %+v join, want cc (never the link's cl)", name, m)
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
	// Its end is no leave either: the next leave Bob sees is Carl's.
	sc.Leave()
	if m := next(t, qb, livewire.TypeLeave); m.ID != "cc" {
		t.Fatalf("bob saw %+v leave, want cc (never the link's cl)", m)
	}
}
