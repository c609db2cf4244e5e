package transport

import (
	"encoding/json"
	"testing"
	"time"

	"corkboard/board"
)

func TestAILimiterForgetsIdleUsers(t *testing.T) {
	l := newAILimiter()
	t0 := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	for _, email := range []string{"a@example.com", "b@example.com"} {
		if _, ok := l.allow(email, 2, t0); !ok {
			t.Fatalf("%s: first call refused", email)
		}
	}
	// a keeps calling; b goes quiet.
	if _, ok := l.allow("a@example.com", 2, t0.Add(50*time.Second)); !ok {
		t.Fatal("a: refill refused")
	}
	if got := l.len(); got != 2 {
		t.Fatalf("buckets=%d, want 2", got)
	}
	l.allow("a@example.com", 2, t0.Add(60*time.Second))
	if got := l.len(); got != 1 {
		t.Fatalf("buckets after b's idle minute=%d, want 1", got)
	}
	// A forgotten user starts from a full bucket, as they would have anyway.
	for i := range 2 {
		if _, ok := l.allow("b@example.com", 2, t0.Add(61*time.Second)); !ok {
			t.Fatalf("b: call %d after eviction refused", i+1)
		}
	}
	if _, ok := l.allow("b@example.com", 2, t0.Add(61*time.Second)); ok {
		t.Fatal("b: third call in the same instant allowed with rpm 2")
	}
}

func TestAILimiterFollowsPlanChange(t *testing.T) {
	l := newAILimiter()
	t0 := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	if _, ok := l.allow("a@example.com", 1, t0); !ok {
		t.Fatal("first call refused")
	}
	wait, ok := l.allow("a@example.com", 1, t0)
	if ok || wait != time.Minute {
		t.Fatalf("second call at rpm 1: ok=%v wait=%v, want refused for 1m", ok, wait)
	}
	// An upgrade to 60 per minute: the empty bucket now refills a token a
	// second, so the wait is about a second, not the rest of a minute.
	wait, ok = l.allow("a@example.com", 60, t0.Add(time.Second))
	if ok || wait > time.Second {
		t.Fatalf("just after upgrade: ok=%v wait=%v, want refused for at most 1s", ok, wait)
	}
	if wait, ok = l.allow("a@example.com", 60, t0.Add(2*time.Second)); !ok {
		t.Fatalf("a second later: refused, wait %v", wait)
	}
}

func TestPeekBoardID(t *testing.T) {
	tests := []struct {
		name, body, want, field string
	}{
		{"OK", `{"boardId":"b1"}`, "b1", ""},
		{"OKAmongOthers", `{"content":{"boardId":"nested"},"list":[1,{"boardId":"x"}],"boardId":"b2","z":null}`, "b2", ""},
		{"ErrMissing", `{"content":"x"}`, "", "boardId"},
		{"ErrOtherCase", `{"BoardId":"b1"}`, "", "boardId"},
		{"ErrTwice", `{"boardId":"a","boardId":"b"}`, "", "boardId"},
		{"ErrNumber", `{"boardId":1}`, "", "boardId"},
		{"ErrArray", `["boardId","b1"]`, "", ""},
		{"ErrTruncated", `{"boardId":"b1"`, "", ""},
		{"ErrTrailingGarbage", `{"boardId":"b1"}}`, "", ""},
		{"ErrEmpty", ``, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := peekBoardID([]byte(tt.body))
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("peekBoardID=%q, %v; want %q", got, err, tt.want)
				}
				return
			}
			var e *board.Error
			if err == nil || board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("err=%v, want EINVALID", err)
			}
			if e, _ = err.(*board.Error); e.Field != tt.field {
				t.Fatalf("field=%q, want %q", e.Field, tt.field)
			}
		})
	}
}

func FuzzPeekBoardID(f *testing.F) {
	f.Add([]byte(`{"boardId":"b1","content":"x"}`))
	f.Add([]byte(`{"boardId":"a","boardId":"b"}`))
	f.Add([]byte(`{"a":[{"boardId":1}],"boardId":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := peekBoardID(data)
		if err != nil {
			if board.ErrorCode(err) != board.EINVALID {
				t.Fatalf("err=%v is not EINVALID", err)
			}
			return
		}
		// What the peek accepts is a JSON object whose one exact "boardId"
		// key holds the id (or null, read as "").
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("peek accepted %q, which is not a JSON object: %v", data, err)
		}
		var s *string
		if err := json.Unmarshal(m["boardId"], &s); err != nil {
			t.Fatalf("boardId of %q: %v", data, err)
		}
		if (s == nil && id != "") || (s != nil && *s != id) {
			t.Fatalf("peek=%q, decoder=%v for %q", id, s, data)
		}
	})
}
