package transport_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"corkboard/transport"
)

// rawGet sends a GET with an explicit Accept-Encoding, so that Go's client
// neither adds gzip nor unpacks the answer.
func rawGet(tb testing.TB, url, session, acceptEncoding string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: transport.SessionCookie, Value: session})
	}
	req.Header.Set("Accept-Encoding", acceptEncoding)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, body
}

func TestCompressJSON(t *testing.T) {
	e := newEnv(t)
	ada := e.claim("ada@example.com", "big")
	e.pushOK(ada, "big", map[string]any{
		"clientVersion": 0,
		"notes": map[string]any{"upserted": []map[string]any{
			{"id": "n1", "title": "Big", "content": strings.Repeat("lorem ipsum ", 2000), "x": 0, "y": 0, "color": "yellow", "type": "sticky", "updatedAt": ""},
		}, "deleted": []string{}},
		"trackerItems": map[string]any{"upserted": []any{}, "deleted": []string{}},
	})
	url := e.srv.URL + "/api/boards/big/sync?since=0"

	t.Run("OK", func(t *testing.T) {
		res, body := rawGet(t, url, ada, "gzip, deflate, br")
		if got, want := res.Header.Get("Content-Encoding"), "gzip"; got != want {
			t.Fatalf("Content-Encoding=%q, want %q", got, want)
		}
		if got := res.Header.Get("Vary"); !strings.Contains(got, "Accept-Encoding") {
			t.Fatalf("Vary=%q, want Accept-Encoding", got)
		}
		zr, err := gzip.NewReader(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		var pull struct {
			Notes []struct{ ID string } `json:"notes"`
		}
		if err := json.Unmarshal(plain, &pull); err != nil {
			t.Fatalf("gunzipped body is not JSON: %v", err)
		}
		if got, want := len(pull.Notes), 1; got != want {
			t.Fatalf("len(notes)=%d, want %d", got, want)
		}
		if len(body) >= len(plain)/4 {
			t.Fatalf("compressed %d bytes to %d, want far smaller", len(plain), len(body))
		}
	})

	t.Run("NotAccepted", func(t *testing.T) {
		res, body := rawGet(t, url, ada, "identity")
		if got := res.Header.Get("Content-Encoding"); got != "" {
			t.Fatalf("Content-Encoding=%q, want none", got)
		}
		if !json.Valid(body) {
			t.Fatal("body is not JSON")
		}
	})

	t.Run("SmallAnswerPlain", func(t *testing.T) {
		res, body := rawGet(t, e.srv.URL+"/api/boards/big/sync?since=1", ada, "gzip")
		if got := res.Header.Get("Content-Encoding"); got != "" {
			t.Fatalf("Content-Encoding=%q, want none for %d bytes", got, len(body))
		}
		if got, want := strings.TrimSpace(string(body)), `{"serverVersion":1}`; got != want {
			t.Fatalf("body=%s, want %s", got, want)
		}
	})

	t.Run("LiveUpgradeUntouched", func(t *testing.T) {
		// The WebSocket handshake through the middleware still works.
		c, hello := e.connect(ada, "big", "")
		defer c.CloseNow()
		if got, want := hello.Type, "hello"; got != want {
			t.Fatalf("first message %q, want %q", got, want)
		}
	})
}

func TestAppFallback(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "app:"+r.URL.Path)
	})
	srv := httptest.NewServer(transport.New(transport.Config{LoginCodesInLog: true}, transport.Deps{App: app}, nil))
	defer srv.Close()

	for _, c := range []struct {
		name, path string
		status     int
		want       string
	}{
		{"Root", "/", http.StatusOK, "app:/"},
		{"BoardRoute", "/b/roadmap", http.StatusOK, "app:/b/roadmap"},
		{"ErrUnknownAPI", "/api/nope", http.StatusNotFound, `{"error":"No such endpoint."}`},
		{"ErrAPIRoot", "/api", http.StatusNotFound, `{"error":"No such endpoint."}`},
		{"Config", "/api/config", http.StatusOK, `{"loginCodesInLog":true}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, body := rawGet(t, srv.URL+c.path, "", "gzip")
			if got, want := res.StatusCode, c.status; got != want {
				t.Fatalf("status=%d, want %d", got, want)
			}
			if got := strings.TrimSpace(string(body)); got != c.want {
				t.Fatalf("body=%q, want %q", got, c.want)
			}
		})
	}
}
