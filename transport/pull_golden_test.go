package transport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The pull and live catch-up answers, byte for byte, as they were before
// pulls were streamed from the store (issue 21): a streamed answer must
// not differ from the one encoded whole in memory by a single byte.
// -update rewrites testdata/pull-golden/ from the code as it is.

// goldenBoard claims board "gold" at a fixed clock and gives it three
// versions holding what a pull carries: notes and items with every field,
// extra fields of both, unicode and characters JSON escapes, odd floats,
// note and item deletions, phases (which a pull does not carry).
func goldenBoard(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t, withClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)))
	s := e.claim("owner@example.com", "gold")
	e.do("PATCH", "/api/boards/gold/access", s, `{"phases":{"phases":[{"id":"p1","name":"Plan ✎"},{"id":"p2"}],"currentPhaseId":"p1"}}`).wantStatus(t, http.StatusOK)
	notes := make([]string, 0, 12)
	for i := range 12 {
		notes = append(notes, fmt.Sprintf(`{"id":"n%02d","title":"Note %d — ünïcödé 🧷","content":"# Heading\n\n<script>alert(%d)</script> & \"quotes\" \\ tab\tend\u2028","x":%g,"y":%g,"color":"yellow","type":"note","updatedAt":"2026-11-26T09:00:%02dZ","priority":%d,"tags":["a","b"],"nested":{"k":[1,2.5,null,true]}}`,
			i, i, i, float64(i)*12.5, -float64(i)*0.001, i, i))
	}
	push := func(body string) {
		t.Helper()
		e.post("/api/boards/gold/sync", s, body).wantStatus(t, http.StatusOK)
	}
	push(`{"clientVersion":0,"board":{"name":"Golden ✓ <board>","updatedAt":"2026-11-26T09:00:00Z"},
		"notes":{"upserted":[` + strings.Join(notes, ",") + `],"deleted":[]},
		"trackerItems":{"upserted":[
			{"id":"i1","key":"CB-1","type":"epic","summary":"Épopée","description":"Long\ndescription","status":"todo","updatedAt":"2026-11-26T09:00:00Z","assignee":"ada","labels":["x"]},
			{"id":"i2","key":"CB-2","type":"story","summary":"Child","parentId":"i1","updatedAt":"2026-11-26T09:00:00Z"},
			{"id":"i3","key":"CB-3","type":"task","summary":"Plain","updatedAt":"2026-11-26T09:00:00Z"}],"deleted":[]}}`)
	push(`{"clientVersion":1,"notes":{"upserted":[
			{"id":"n05","title":"Moved","content":"changed","x":123456789.125,"y":-0.000001,"color":"blue","type":"note","updatedAt":"2026-11-26T09:01:00Z","extra":"kept"}],"deleted":["n03"]},
		"trackerItems":{"upserted":[],"deleted":["i2"]}}`)
	push(`{"clientVersion":2,"board":{"name":"Golden v3","updatedAt":"2026-11-26T09:02:00Z"},
		"notes":{"upserted":[{"id":"a-first","title":"","content":"","x":0,"y":0,"color":"","type":"note","updatedAt":"2026-11-26T09:02:00Z"}],"deleted":["n07","n-unknown"]},
		"trackerItems":{"upserted":[{"id":"i4","key":"CB-4","type":"bug","summary":"Late","status":"done","updatedAt":"2026-11-26T09:02:00Z"}],"deleted":[]}}`)

	// Board "big" is many buffers long (about 190 KB), so that a streamed
	// answer crosses every buffer and gzip boundary it has.
	e.claimAs(s, "big")
	for p := range 2 {
		rows := make([]string, 0, 300)
		for i := range 300 {
			rows = append(rows, fmt.Sprintf(`{"id":"b%d-%03d","title":"Big %d","content":"%s","x":%d,"y":%d,"color":"green","type":"note","updatedAt":"2026-11-26T09:03:00Z","k":%d}`,
				p, i, i, strings.Repeat("lorem ipsum ✓ ", 1+i%40), i, p, i))
		}
		e.post("/api/boards/big/sync", s, `{"clientVersion":0,"notes":{"upserted":[`+strings.Join(rows, ",")+`],"deleted":["b0-001","b0-002"]},"trackerItems":{"upserted":[],"deleted":[]}}`).wantStatus(t, http.StatusOK)
	}
	return e, s
}

// checkGolden compares got with testdata/pull-golden/name, or rewrites it
// with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "pull-golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden answer: %v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: answer differs from the golden one at byte %d of %d (want %d bytes):\n got …%s…\nwant …%s…",
			name, i, len(got), len(want), excerpt(got, i), excerpt(want, i))
	}
}

func excerpt(b []byte, i int) []byte {
	return b[max(0, i-60):min(len(b), i+60)]
}

func TestPullGolden(t *testing.T) {
	e, s := goldenBoard(t)
	for _, since := range []int64{0, 1, 2, 3, 99} {
		name := fmt.Sprintf("pull-since-%d.json", since)
		path := fmt.Sprintf("/api/boards/gold/sync?since=%d", since)
		t.Run(fmt.Sprintf("Since%d", since), func(t *testing.T) {
			plain := e.do("GET", path, s, nil, http.Header{"Accept-Encoding": {"identity"}})
			plain.wantStatus(t, http.StatusOK)
			if got := plain.header.Get("Content-Encoding"); got != "" {
				t.Fatalf("Content-Encoding=%q without gzip asked for", got)
			}
			checkGolden(t, name, plain.body)

			req := e.newRequest(context.Background(), "GET", e.srv.URL+path, s, nil, http.Header{"Accept-Encoding": {"gzip"}})
			zipped := e.send(req)
			zipped.wantStatus(t, http.StatusOK)
			body := zipped.body
			if len(plain.body) >= 1024 {
				if got := zipped.header.Get("Content-Encoding"); got != "gzip" {
					t.Fatalf("Content-Encoding=%q for a %d-byte answer, want gzip", got, len(plain.body))
				}
				zr, err := gzip.NewReader(bytes.NewReader(zipped.body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("gunzip: %v", err)
				}
			}
			checkGolden(t, name, body)
		})
	}
	for _, since := range []int64{0, 1} {
		t.Run(fmt.Sprintf("BigSince%d", since), func(t *testing.T) {
			path := fmt.Sprintf("/api/boards/big/sync?since=%d", since)
			name := fmt.Sprintf("pull-big-since-%d.json", since)
			req := e.newRequest(context.Background(), "GET", e.srv.URL+path, s, nil, http.Header{"Accept-Encoding": {"gzip"}})
			zipped := e.send(req)
			zipped.wantStatus(t, http.StatusOK)
			zr, err := gzip.NewReader(bytes.NewReader(zipped.body))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("gunzip: %v", err)
			}
			checkGolden(t, name, body)
			plain := e.do("GET", path, s, nil, http.Header{"Accept-Encoding": {"identity"}})
			plain.wantStatus(t, http.StatusOK)
			checkGolden(t, name, plain.body)
		})
	}
}

func TestLiveCatchUpGolden(t *testing.T) {
	e, s := goldenBoard(t)
	for _, since := range []int64{0, 1, 2, 99} {
		t.Run(fmt.Sprintf("Since%d", since), func(t *testing.T) {
			c, hello := e.connect(s, "gold", fmt.Sprintf("?since=%d", since))
			if got, want := hello.ServerVersion, int64(3); got != want {
				t.Fatalf("hello serverVersion=%d, want %d", got, want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), liveWait)
			defer cancel()
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("read catch-up: %v", err)
			}
			checkGolden(t, fmt.Sprintf("live-since-%d.json", since), data)
		})
	}
	t.Run("Big", func(t *testing.T) {
		c, _ := e.connect(s, "big", "?since=0")
		ctx, cancel := context.WithTimeout(context.Background(), liveWait)
		defer cancel()
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read catch-up: %v", err)
		}
		checkGolden(t, "live-big-since-0.json", data)
	})
}
