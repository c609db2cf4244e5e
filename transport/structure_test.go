package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// structureKeys are the keys of a pull answer or live message that only
// connectors and frames bring.
var structureKeys = []string{"frames", "deletedFrameIds", "connectors", "deletedConnectorIds"}

// readRawType reads live messages until one of type typ, and returns its
// top-level keys with their raw values.
func readRawType(tb testing.TB, c *websocket.Conn, typ string) map[string]json.RawMessage {
	tb.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), liveWait)
		_, data, err := c.Read(ctx)
		cancel()
		if err != nil {
			tb.Fatalf("read: %v", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			tb.Fatalf("decode %s: %v", data, err)
		}
		if string(m["type"]) == `"`+typ+`"` {
			return m
		}
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m))
}

const structurePush = `{"notes":{"upserted":[{"id":"n1","x":0,"y":0},{"id":"n2","x":300,"y":0}]},
	"frames":{"upserted":[{"id":"f1","title":"Risks","x":-20,"y":-20,"w":700,"h":300,"color":"blue","locked":true,"z":3}]},
	"connectors":{"upserted":[{"id":"c1","from":"n1","to":"n2","label":"blocks","style":"arrow","dash":"dashed","color":"red"},
		{"id":"c2","from":"n2","to":"f1","style":"line"}]}}`

// TestStructureOverRESTAndLive: connectors and frames pushed over REST
// reach a live subscriber and a pull; pushed over the socket they are
// acknowledged and stored; deleting a note takes its connectors, for
// every client.
func TestStructureOverRESTAndLive(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	c, _ := e.connect(s, "b1", "")

	if status, res := e.push(s, "b1", structurePush); status != http.StatusOK {
		t.Fatalf("push: %d %v", status, res)
	}
	m := readRawType(t, c, livewire.TypeChanges)
	var live board.Changes
	if err := json.Unmarshal([]byte(mustJSON(t, m)), &live); err != nil {
		t.Fatal(err)
	}
	if len(live.Frames) != 1 || len(live.Connectors) != 2 || live.Frames[0].Extra[0].Name != "z" || !live.Frames[0].Locked {
		t.Fatalf("live message %s: want one frame (with z) and two connectors", mustJSON(t, m))
	}
	raw := string(e.do("GET", "/api/boards/b1/sync?since=0", s, nil).body)
	for _, want := range []string{
		`"deletedTrackerItemIds":[],"frames":[{"id":"f1","title":"Risks","x":-20,"y":-20,"w":700,"h":300,"color":"blue","locked":true,"updatedAt":`,
		`"connectors":[{"id":"c1","from":"n1","to":"n2","label":"blocks","style":"arrow","dash":"dashed","color":"red","updatedAt":`,
		`"version":1,"deletedAt":null,"z":3}]`,
	} {
		if !strings.Contains(raw, want) {
			t.Fatalf("pull answer %s\nwant it to hold %s", raw, want)
		}
	}
	if strings.Contains(raw, "deletedFrameIds") || strings.Contains(raw, "deletedConnectorIds") {
		t.Fatalf("pull answer %s: empty extension lists must be left out", raw)
	}

	liveStructurePushes(t, e, s, c)
}

// liveStructurePushes pushes over the socket c what
// TestStructureOverRESTAndLive checks: a relabel, a connector to nothing
// (refused), then the deletion of n2, which takes its connectors.
func liveStructurePushes(t *testing.T, e *env, s string, c *websocket.Conn) {
	t.Helper()
	send(t, c, map[string]any{"type": "push", "id": "p1", "push": map[string]any{"connectors": map[string]any{"upserted": []any{
		map[string]any{"id": "c1", "from": "n1", "to": "n2", "label": "unblocks", "baseVersion": 1},
	}}}})
	if m := readType(t, c, livewire.TypeAck); m.ID != "p1" || m.ServerVersion != 2 {
		t.Fatalf("got %+v, want ack p1 at 2", m)
	}
	send(t, c, map[string]any{"type": "push", "id": "bad", "push": map[string]any{"connectors": map[string]any{"upserted": []any{
		map[string]any{"id": "c9", "from": "n1", "to": "ghost"},
	}}}})
	if m := readType(t, c, livewire.TypeError); m.ID != "bad" || m.Status != http.StatusBadRequest || m.Field != "connectors.upserted[0].to" {
		t.Fatalf("got %+v, want error 400 naming connectors.upserted[0].to", m)
	}
	send(t, c, map[string]any{"type": "push", "id": "p2", "push": map[string]any{"notes": map[string]any{"deleted": []string{"n2"}}}})
	if m := readType(t, c, livewire.TypeAck); m.ID != "p2" {
		t.Fatalf("got %+v, want ack p2", m)
	}
	ch := e.pull(s, "b1", 2)
	if !slices.Equal(ch.DeletedNoteIDs, []string{"n2"}) || !slices.Equal(sortedIDs(ch.DeletedConnectorIDs), []string{"c1", "c2"}) {
		t.Fatalf("pull since 2: deleted notes %v connectors %v; want [n2], [c1 c2]", ch.DeletedNoteIDs, ch.DeletedConnectorIDs)
	}
	if ch := e.pull(s, "b1", 1); len(ch.Connectors) != 0 || len(ch.Frames) != 0 {
		t.Fatalf("pull since 1 = %+v: the relabelled connector is deleted since", ch)
	}
	if full := e.pull(s, "b1", 0); len(full.Frames) != 1 || len(full.Connectors) != 0 {
		t.Fatalf("full state: %d frames %d connectors, want 1 and 0", len(full.Frames), len(full.Connectors))
	}
}

func sortedIDs(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// TestSpecClientUnaffected: on a board that has connectors and frames, a
// client that knows only the spec pushes the spec's shapes and gets back
// exactly the spec's keys, over REST and the live channel.
func TestSpecClientUnaffected(t *testing.T) {
	e := newEnv(t)
	s := e.claim("owner@example.com", "b1")
	e.pushOK(s, "b1", structurePush)
	spec, _ := e.connect(s, "b1", "")

	body := `{"clientVersion":1,"board":{"name":"Plan","updatedAt":"2026-11-22T10:00:00Z"},
		"notes":{"upserted":[{"id":"n3","title":"t","content":"c","x":1,"y":2,"color":"yellow","type":"sticky","updatedAt":"2026-11-22T10:00:00Z"}],"deleted":[]},
		"trackerItems":{"upserted":[{"id":"i1","key":"K-1","type":"story","summary":"s","updatedAt":"2026-11-22T10:00:00Z"}],"deleted":[]}}`
	r := e.post("/api/boards/b1/sync", s, body)
	if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != `{"serverVersion":2}` {
		t.Fatalf("push answer %d %s, want exactly {\"serverVersion\":2}", r.status, r.body)
	}
	var pull map[string]json.RawMessage
	e.do("GET", "/api/boards/b1/sync?since=1", s, nil).want(t, http.StatusOK, &pull)
	want := []string{"board", "deletedNoteIds", "deletedTrackerItemIds", "notes", "serverVersion", "trackerItems"}
	if got := keysOf(pull); !slices.Equal(got, want) {
		t.Fatalf("pull since 1 keys %v, want exactly %v", got, want)
	}
	m := readRawType(t, spec, livewire.TypeChanges)
	for _, k := range structureKeys {
		if _, ok := m[k]; ok {
			t.Fatalf("live message %s carries %s", mustJSON(t, m), k)
		}
	}
	// Deleting a note that has no connector stays within the spec too.
	e.pushOK(s, "b1", `{"notes":{"deleted":["n3"]}}`)
	pull = nil
	e.do("GET", "/api/boards/b1/sync?since=2", s, nil).want(t, http.StatusOK, &pull)
	if got := keysOf(pull); !slices.Equal(got, want) {
		t.Fatalf("pull since 2 keys %v, want exactly %v", got, want)
	}
}

// TestStructurePushErrors: bad connectors and frames are 400s naming the
// field, the per-push lists are bounded while decoding, and the per-board
// limits are 413s naming the table; nothing of a refused push applies.
func TestStructurePushErrors(t *testing.T) {
	e := newEnv(t, withLimits(board.Limits{ConnectorsPerBoard: 2, FramesPerBoard: 1}))
	s := e.claim("owner@example.com", "b1")
	e.pushOK(s, "b1", `{"notes":{"upserted":[{"id":"n1"},{"id":"n2"},{"id":"n3"}]}}`)
	many := func(n int) string {
		rows := make([]string, n)
		for i := range rows {
			rows[i] = fmt.Sprintf(`{"id":"c%d","from":"n1","to":"n2"}`, i)
		}
		return `{"connectors":{"upserted":[` + strings.Join(rows, ",") + `]}}`
	}
	for _, tc := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"UnknownEnd", `{"connectors":{"upserted":[{"id":"c1","from":"n1","to":"ghost"}]}}`, 400, "connectors.upserted[0].to"},
		{"SameEnds", `{"connectors":{"upserted":[{"id":"c1","from":"n1","to":"n1"}]}}`, 400, "connectors.upserted[0].to"},
		{"BadStyle", `{"connectors":{"upserted":[{"id":"c1","from":"n1","to":"n2","style":"curve"}]}}`, 400, "connectors.upserted[0].style"},
		{"WrongType", `{"connectors":{"upserted":[{"id":"c1","from":1,"to":"n2"}]}}`, 400, "connectors.upserted[0].from"},
		{"LabelTooLong", `{"connectors":{"upserted":[{"id":"c1","from":"n1","to":"n2","label":"` + strings.Repeat("x", board.MaxLabelLen+1) + `"}]}}`, 400, "connectors.upserted[0].label"},
		{"FrameTooSmall", `{"frames":{"upserted":[{"id":"f1","w":39,"h":100}]}}`, 400, "frames.upserted[0].w"},
		{"FrameLockedNotBool", `{"frames":{"upserted":[{"id":"f1","w":100,"h":100,"locked":"yes"}]}}`, 400, "frames.upserted[0].locked"},
		{"TooManyInAPush", many(board.MaxUpsertedConnectors + 1), 400, "connectors.upserted"},
		{"PastTheBoardLimit", many(3), 413, "connectors"},
		{"PastTheFrameLimit", `{"frames":{"upserted":[{"id":"f1","w":100,"h":100},{"id":"f2","w":100,"h":100}]}}`, 413, "frames"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, res := e.push(s, "b1", tc.body)
			if status != tc.status || res["field"] != tc.field {
				t.Fatalf("push: %d %v, want %d naming %s", status, res, tc.status, tc.field)
			}
			if ch := e.pull(s, "b1", 0); ch.ServerVersion != 1 {
				t.Fatalf("version %d after a refused push, want 1", ch.ServerVersion)
			}
		})
	}
	// At the limits: accepted.
	e.pushOK(s, "b1", many(2))
	e.pushOK(s, "b1", `{"frames":{"upserted":[{"id":"f1","w":40,"h":100000}]}}`)
	if ch := e.pull(s, "b1", 0); len(ch.Connectors) != 2 || len(ch.Frames) != 1 {
		t.Fatalf("full state %d connectors %d frames, want 2 and 1", len(ch.Connectors), len(ch.Frames))
	}
}
