package persist_test

import (
	"strings"
	"testing"
	"time"

	"corkboard/persist"
)

var clT0 = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)

func TestStampShape(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{clT0, "2026-03-01T09:30:00.123456000Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000000000Z"},
		{time.Date(2026, 1, 2, 4, 4, 5, 7, time.FixedZone("CET", 3600)), "2026-01-02T03:04:05.000000007Z"},
	} {
		if got := persist.Stamp(tc.in); got != tc.want {
			t.Errorf("Stamp(%v)=%q, want %q", tc.in, got, tc.want)
		}
		if got, ok := persist.ParseStamp(tc.want); !ok || !got.Equal(tc.in) {
			t.Errorf("ParseStamp(%q)=%v,%v, want %v", tc.want, got, ok, tc.in)
		}
	}
	for _, bad := range []string{"", "2026-03-01T09:30:00Z", "2026-03-01T09:30:00.123Z", "2026-13-01T09:30:00.000000000Z", "2026-03-01T09:30:00.000000000+00:00"} {
		if _, ok := persist.ParseStamp(bad); ok {
			t.Errorf("ParseStamp(%q) ok, want refused", bad)
		}
	}
}

// TestCanonicalKeys: a key's timestamp of any precision names the entry
// or snapshot recorded at that instant, in the form the store writes.
func TestCanonicalKeys(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"log/2026-03-01T09:30:00.123456789Z-n1", "log/2026-03-01T09:30:00.123456789Z-n1"},
		{"log/2026-03-01T09:30:00.123Z-n1", "log/2026-03-01T09:30:00.123000000Z-n1"},
		{"log/2026-03-01T09:30:00Z-a-b", "log/2026-03-01T09:30:00.000000000Z-a-b"},
		{"log/2026-03-01T09:30:00.5+00:00-n1", "log/2026-03-01T09:30:00.500000000Z-n1"},
	} {
		if got, ok := persist.CanonicalLogKey(tc.in); !ok || got != tc.want {
			t.Errorf("CanonicalLogKey(%q)=%q,%v, want %q", tc.in, got, ok, tc.want)
		}
	}
	if got, ok := persist.CanonicalSnapshotKey("snapshots/2026-03-02T00:00:00Z.md"); !ok || got != "snapshots/2026-03-02T00:00:00.000000000Z.md" {
		t.Errorf("CanonicalSnapshotKey=%q,%v", got, ok)
	}
}

func TestLogKeyID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"n1", "n1"},
		{"3f2b9c1e-7a4d-4c1b-9e1f-2d6a8b0c4e5f", "3f2b9c1e-7a4d-4c1b-9e1f-2d6a8b0c4e5f"},
		{"note.v2~x_y", "note.v2~x_y"},
		{"", "board"},
		{"a/b", "a_b"},
		{"../../etc", "______etc"},
		{"a..b", "a__b"},
		{"note 7", "note_7"},
		{"заметка", "_______"},
		{"a%2Fb", "a_2Fb"},
		{strings.Repeat("x", 128), strings.Repeat("x", 128)},
		{strings.Repeat("é", 128), strings.Repeat("_", 128)},
	} {
		got := persist.LogKeyID(tc.in)
		if got != tc.want {
			t.Errorf("LogKeyID(%q)=%q, want %q", tc.in, got, tc.want)
		}
		if key := "log/2026-03-01T09:30:00.123456000Z-" + got; !persist.ValidLogKey(key) {
			t.Errorf("ValidLogKey(%q)=false for a key LogKeyID made", key)
		}
	}
}

func TestValidKeys(t *testing.T) {
	const ts = "2026-03-01T09:30:00.123456000Z"
	for _, tc := range []struct {
		key       string
		log, snap bool
	}{
		{"log/" + ts + "-n1", true, false},
		{"log/" + ts + "-board", true, false},
		{"log/" + ts + "-a-b-c", true, false},
		{"snapshots/" + ts + ".md", false, true},
		{"log/" + ts + "-", false, false},
		{"log/" + ts, false, false},
		{"log/" + ts + "-a/b", false, false},
		{"log/" + ts + "-..", false, false},
		{"log/" + ts + "-a..b", false, false},
		{"log/../" + ts + "-n1", false, false},
		{"b2/log/" + ts + "-n1", false, false},
		{"log/2026-03-01T09:30:00Z-n1", true, false},
		{"log/2026-03-01T09:30:00.123Z-n1", true, false},
		{"log/2026-03-01T09:30:00.123456+00:00-n1", true, false},
		{"snapshots/2026-03-01T09:30:00.1Z.md", false, true},
		{"log/2026-03-01T09:30:00.Z-n1", false, false},
		{"log/2026-03-01T09:30:00.1234567890Z-n1", false, false},
		{"log/2026-03-01T09:30:00+01:00-n1", false, false},
		{"log/2026-03-01T09:30:00-n1", false, false},
		{"log/2026-03-01T9:30:00Z-n1", false, false},
		{"log/2026-03-01 09:30:00Z-n1", false, false},
		{"log/2026-02-30T09:30:00Z-n1", false, false},
		{"log/2026-03-01T09:30:00Z", false, false},
		{"log/2026-03-01T09:30:00Z-", false, false},
		{"snapshots/2026-03-01T09:30:00Z.mdx", false, false},
		{"log/2026-03-01T09:30:00.123456000Z-" + strings.Repeat("x", 129), false, false},
		{"log/" + ts + "-n%2F1", false, false},
		{"snapshots/" + ts, false, false},
		{"snapshots/../" + ts + ".md", false, false},
		{"current.md", false, false},
		{"", false, false},
		{"garbage", false, false},
	} {
		if got := persist.ValidLogKey(tc.key); got != tc.log {
			t.Errorf("ValidLogKey(%q)=%v, want %v", tc.key, got, tc.log)
		}
		if got := persist.ValidSnapshotKey(tc.key); got != tc.snap {
			t.Errorf("ValidSnapshotKey(%q)=%v, want %v", tc.key, got, tc.snap)
		}
	}
}
