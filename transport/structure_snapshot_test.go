package transport_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"corkboard/board"
)

// TestStructureSnapshotRestore: a snapshot holds the frames and
// connectors, and restoring it gives them back.
func TestStructureSnapshotRestore(t *testing.T) {
	e := newClEnv(t)
	s := e.claim("owner@example.com", "b1")
	e.pushOK(s, "b1", structurePush)
	var snap struct {
		Key string `json:"key"`
	}
	e.do("POST", "/api/boards/b1/snapshot", s, nil).want(t, http.StatusOK, &snap)
	md := string(e.do("GET", "/api/boards/b1/snapshot", s, nil).body)
	for _, want := range []string{"\n## Frames\n\n### Risks\n", "\n## Connectors\n\n### blocks\n", "from: 'n2'\nto: 'f1'\n"} {
		if !strings.Contains(md, want) {
			t.Fatalf("snapshot lacks %q:\n%s", want, md)
		}
	}
	// The board moves on: a connector deleted, the frame renamed.
	e.pushOK(s, "b1", `{"connectors":{"deleted":["c1"]},"frames":{"upserted":[{"id":"f1","title":"Done","w":100,"h":100}]}}`)
	for _, key := range []string{snap.Key, "current.md"} {
		var st board.State
		e.do("POST", "/api/boards/b1/log/restore", s, map[string]string{"logKey": key, "type": "board"}).want(t, http.StatusOK, &st)
		wantConns, wantTitle := []string{"c1", "c2"}, "Risks"
		if key == "current.md" {
			wantConns, wantTitle = []string{"c2"}, "Done"
		}
		got := make([]string, len(st.Connectors))
		for i, c := range st.Connectors {
			got[i] = c.ID
		}
		if !slices.Equal(got, wantConns) || len(st.Frames) != 1 || st.Frames[0].Title != wantTitle || st.Frames[0].Extra == nil && key != "current.md" {
			t.Fatalf("restore %s: connectors %v frames %+v; want %v and a frame titled %s", key, got, st.Frames, wantConns, wantTitle)
		}
	}
}
