package main

import "testing"

// TestNumberAfter reads the counts a socket goes by: hello's
// presentCount and a presence batch's count (its last "count", after the
// lists).
func TestNumberAfter(t *testing.T) {
	for _, c := range []struct {
		data, key string
		last      bool
		want      int64
		ok        bool
	}{
		{`{"type":"hello","serverVersion":0,"you":{"id":"a"},"present":[],"presentCount":5000,"presentMore":true}`, `"presentCount":`, false, 5000, true},
		{`{"type":"presence","joined":[{"id":"x","email":"count@example.com"}],"count":12}`, `"count":`, true, 12, true},
		{`{"type":"hello","present":[]}`, `"presentCount":`, false, 0, false},
		{`{"type":"presence","count":}`, `"count":`, true, 0, false},
	} {
		got, ok := numberAfter([]byte(c.data), []byte(c.key), c.last)
		if got != c.want || ok != c.ok {
			t.Errorf("numberAfter(%s, %s) = %d, %v; want %d, %v", c.data, c.key, got, ok, c.want, c.ok)
		}
	}
}

// TestPresenceCounts: a socket's count follows either protocol, and the
// set counts the sockets showing the target.
func TestPresenceCounts(t *testing.T) {
	ps := newPresenceSet(t.Context(), nil, "b", 3, 1)
	a, b := ps.conns[0], ps.conns[1]
	ps.set(a, 3) // a hello with presentCount 2
	ps.add(b, 1) // before its hello: not counted
	if b.state.Load() != -1 || ps.atTarget.Load() != 1 {
		t.Fatalf("b=%d atTarget=%d, want -1 and 1", b.state.Load(), ps.atTarget.Load())
	}
	ps.set(b, 2) // an older server's hello listing one other
	ps.add(b, 1) // a join
	if ps.atTarget.Load() != 2 {
		t.Fatalf("atTarget=%d, want 2", ps.atTarget.Load())
	}
	ps.add(a, -1) // a leave
	ps.set(b, -1) // b's socket ended
	if ps.atTarget.Load() != 0 {
		t.Fatalf("atTarget=%d, want 0", ps.atTarget.Load())
	}
}

func TestPresenceFlags(t *testing.T) {
	testModeFlags(t, "presence", []flagCase{
		{[]string{"-spawn-corkboard", "/bin/corkboard", "-conns", "5000"}, ""},
		{[]string{"-conns", "5000"}, "-spawn-corkboard"},
		{[]string{"-spawn-corkboard", "/bin/corkboard", "-conns", "1"}, "-conns"},
		{[]string{"-spawn-corkboard", "/bin/corkboard", "-presence-runs", "0"}, "-presence-runs"},
	})
}
