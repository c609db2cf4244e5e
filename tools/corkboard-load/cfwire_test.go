package main

import (
	"strings"
	"testing"
)

func TestEncodeCommands(t *testing.T) {
	got, err := encodeCommands(
		cfCommand{ID: 1, Connect: &cfConnect{Name: "corkboard-load"}},
		cfCommand{ID: 2, Subscribe: &cfSubscribe{Channel: "lt0a-0"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	// One command per line, one method field each, as the JSON protocol
	// has them.
	want := `{"id":1,"connect":{"name":"corkboard-load"}}` + "\n" + `{"id":2,"subscribe":{"channel":"lt0a-0"}}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestParseReplies(t *testing.T) {
	msg := []byte(`{"id":1,"connect":{"client":"c1","version":"6.9.1","ping":25,"pong":true}}
{"id":2,"subscribe":{}}

{}
{"push":{"channel":"lt0a-0","pub":{"data":{"m":"cbload:0.7@123;"}}}}
{"id":3,"error":{"code":103,"message":"permission denied"}}`)
	rs, err := parseReplies(msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 5 {
		t.Fatalf("%d replies, want 5 (the blank line skipped)", len(rs))
	}
	if rs[0].ID != 1 || rs[0].Connect == nil || rs[0].isPing() {
		t.Errorf("connect reply: %+v", rs[0])
	}
	// An empty subscribe result is still a subscribe reply.
	if rs[1].ID != 2 || rs[1].Subscribe == nil {
		t.Errorf("subscribe reply: %+v", rs[1])
	}
	if !rs[2].isPing() {
		t.Errorf("{} is a ping: %+v", rs[2])
	}
	if p := rs[3].Push; p == nil || p.Channel != "lt0a-0" || p.Pub == nil || string(p.Pub.Data) != `{"m":"cbload:0.7@123;"}` || rs[3].isPing() {
		t.Errorf("push: %+v", rs[3])
	}
	if e := rs[4].Error; e == nil || e.Code != 103 || !strings.Contains(e.Error(), "permission denied") {
		t.Errorf("error reply: %+v", rs[4])
	}
	if _, err := parseReplies([]byte("{}\nnot json")); err == nil {
		t.Error("a line that is not JSON was accepted")
	}
}

func TestHasPing(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want bool
	}{
		{"{}", true},
		{"{}\n", true},
		{`{"push":{"channel":"c","pub":{"data":{}}}}` + "\n{}", true},
		{`{"push":{"channel":"c","pub":{"data":{}}}}`, false},
		{`{"id":1,"connect":{}}`, false},
		{"", false},
	} {
		if got := hasPing([]byte(tt.msg)); got != tt.want {
			t.Errorf("hasPing(%q)=%v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestPublishBodyCarriesMarker(t *testing.T) {
	m := marker{Writer: 0, Seq: 41, SentNs: 987654321}
	b, err := cfPublishBody("lt0a-0", m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"channel":"lt0a-0","data":{"m":"cbload:0.41@987654321;"}}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	// What a subscriber receives is the data verbatim inside a push: the
	// marker scan finds the push and its send time in it.
	push := []byte(`{"push":{"channel":"lt0a-0","pub":{"data":{"m":"cbload:0.41@987654321;"}}}}`)
	var got []marker
	scanMarkers(push, func(m marker) { got = append(got, m) })
	if len(got) != 1 || got[0] != m {
		t.Errorf("markers %+v, want [%+v]", got, m)
	}
}

func TestPublishResult(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
		want   string // "" for success
	}{
		{200, `{}`, ""},
		{200, `{"result":{}}`, ""},
		{200, `{"error":{"code":102,"message":"unknown channel"}}`, "unknown channel"},
		{401, `Unauthorized`, "status 401"},
		{200, `garbage`, "answer"},
	} {
		err := cfPublishResult(tt.status, []byte(tt.body))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%d %s: %v", tt.status, tt.body, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%d %s: error %v, want one with %q", tt.status, tt.body, err, tt.want)
		}
	}
}

func TestCentrifugoFlags(t *testing.T) {
	testModeFlags(t, "centrifugo", []flagCase{
		{[]string{"-spawn-corkboard", "x", "-centrifugo-bin", "/tmp/cfbin/centrifugo"}, ""},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-bin", "c", "-pairs", "5"}, ""},
		{[]string{"-spawn-corkboard", "x"}, "-centrifugo-bin or -centrifugo-url"},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-bin", "c", "-centrifugo-url", "http://127.0.0.1:8000"}, "exclusive"},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-url", "http://127.0.0.1:8000"}, "-centrifugo-api-key"},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-url", "http://example.com:8000", "-centrifugo-api-key", "k"}, "loopback"},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-bin", "c", "-pairs", "0"}, "-pairs"},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-bin", "c", "-pairs", "101"}, "-pairs"},
		{[]string{"-spawn-corkboard", "x", "-centrifugo-bin", "c", "-push-over", "rest"}, "over ws"},
	})
}

func TestCompareCF(t *testing.T) {
	mk := func(p99, cpu float64, idle, held int64, conns int, missing int64) *RunResult {
		return &RunResult{Connected: conns, Missing: missing, Latency: &Summary{Count: 1, P50Ms: p99 / 2, P99Ms: p99},
			Server: &ServerStats{CPUPerMessageUs: cpu, Idle: &ProcSample{RSSBytes: idle}, Held: &ProcSample{RSSBytes: held}}}
	}
	c := mk(40, 7, 10<<20, 10<<20+1000*11*1024, 1000, 0)
	f := mk(80, 10, 10<<20, 10<<20+1000*50*1024, 1000, 0)
	cmp := compareCF(1, "corkboard", c, f)
	if cmp.P99Ratio != 2 || cmp.CorkboardIdleKiB != 11 || cmp.CentrifugoIdleKiB != 50 || !cmp.CorkboardAhead {
		t.Errorf("%+v", cmp)
	}
	// Equal p99 is "at most Centrifugo's"; a missing delivery or more
	// memory per connection is not ahead.
	if cmp := compareCF(1, "corkboard", mk(80, 7, 0, 11*1024*1000, 1000, 0), f); !cmp.CorkboardAhead {
		t.Errorf("equal p99: %+v", cmp)
	}
	if cmp := compareCF(1, "corkboard", mk(40, 7, 0, 11*1024*1000, 1000, 1), f); cmp.CorkboardAhead {
		t.Errorf("missing delivery counted as ahead: %+v", cmp)
	}
	if cmp := compareCF(1, "corkboard", mk(40, 7, 0, 60*1024*1000, 1000, 0), f); cmp.CorkboardAhead {
		t.Errorf("more memory counted as ahead: %+v", cmp)
	}
}
