package aihttp

import (
	"encoding/json"
	"testing"

	"corkboard/board"
)

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
