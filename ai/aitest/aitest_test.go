package aitest_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"corkboard/ai/aitest"

	"github.com/ollama/ollama/api"
)

func post(t *testing.T, fake *aitest.Server, body string) (*http.Response, []string) {
	t.Helper()
	resp, err := http.Post(fake.URL+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return resp, lines
}

func TestServer_StreamsNDJSON(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Reply{Text: []string{"a", "b"}, ToolCalls: []aitest.ToolCall{{Name: "f", Args: `{"x":1}`}}}))
	resp, lines := post(t, fake, `{"model":"qwen3:4b","messages":[{"role":"user","content":"hi"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type = %q", ct)
	}
	if len(lines) != 4 {
		t.Fatalf("lines = %q, want 2 text, 1 tool call, 1 done", lines)
	}
	var last api.ChatResponse
	if err := json.Unmarshal([]byte(lines[3]), &last); err != nil || !last.Done || last.DoneReason != "stop" {
		t.Errorf("last line = %s", lines[3])
	}
	if !strings.Contains(lines[2], `"tool_calls":[{"id":"call_0_f","function":{"index":0,"name":"f","arguments":{"x":1}}}]`) {
		t.Errorf("tool call line = %s", lines[2])
	}
}

func TestServer_NotStreamed(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Text("{\"a\":", "1}")))
	_, lines := post(t, fake, `{"model":"qwen3:4b","stream":false,"messages":[]}`)
	var r api.ChatResponse
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &r) != nil || !r.Done || r.Message.Content != `{"a":1}` {
		t.Errorf("lines = %q, want one done line with the whole content", lines)
	}
}

func TestServer_Misbehaviour(t *testing.T) {
	tests := []struct {
		name  string
		reply aitest.Reply
		model string
		check func(t *testing.T, err error, sawDone bool)
	}{
		{"UnknownModel", aitest.Text("x"), "llama3.2:3b", func(t *testing.T, err error, _ bool) {
			var se api.StatusError
			if !errors.As(err, &se) || se.StatusCode != 404 {
				t.Errorf("err = %v, want a 404 StatusError", err)
			}
		}},
		{"ErrorLine", aitest.Reply{Text: []string{"x"}, ErrorLine: "boom"}, "qwen3:4b", func(t *testing.T, err error, _ bool) {
			if err == nil || err.Error() != "boom" {
				t.Errorf("err = %v, want boom", err)
			}
		}},
		{"Cut", aitest.Reply{Text: []string{"x"}, Cut: true}, "qwen3:4b", func(t *testing.T, err error, sawDone bool) {
			// The real client returns nil: only the missing done line tells.
			if err != nil || sawDone {
				t.Errorf("err = %v, sawDone = %v; want nil and false", err, sawDone)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := aitest.New(t, aitest.Always(tt.reply))
			base, _ := url.Parse(fake.URL)
			client := api.NewClient(base, http.DefaultClient)
			sawDone := false
			err := client.Chat(t.Context(), &api.ChatRequest{Model: tt.model}, func(r api.ChatResponse) error {
				sawDone = sawDone || r.Done
				return nil
			})
			tt.check(t, err, sawDone)
			if n := len(fake.Calls()); n != 1 {
				t.Errorf("recorded %d calls, want 1", n)
			}
		})
	}
}

func TestSeq_ExtraCallFails(t *testing.T) {
	fake := aitest.New(t, aitest.Seq(aitest.Text("one")))
	post(t, fake, `{"model":"qwen3:4b"}`)
	resp, _ := post(t, fake, `{"model":"qwen3:4b"}`)
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("second call status = %d, want 500", resp.StatusCode)
	}
}

// TestServer_GateHoldsTheCut: a gated reply sends its chunks, then waits;
// only a release (here over HTTP, as the browser tests do) lets the cut
// happen.
func TestServer_GateHoldsTheCut(t *testing.T) {
	fake := aitest.New(t, aitest.Always(aitest.Reply{Text: []string{"part"}, Cut: true, Gate: "g"}))
	resp, err := http.Post(fake.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"qwen3:4b","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	first, err := rd.ReadString('\n')
	if err != nil || !strings.Contains(first, `"part"`) {
		t.Fatalf("first line %q, %v", first, err)
	}
	rest := make(chan string, 1)
	go func() {
		b, _ := rd.ReadString(0)
		rest <- b
	}()
	select {
	case b := <-rest:
		t.Fatalf("the answer went on before the release: %q", b)
	default:
	}
	r, err := http.Post(fake.URL+"/fake/gates/g", "application/json", nil)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("release: %v %v", r, err)
	}
	r.Body.Close()
	if b := <-rest; b != "" {
		t.Errorf("after the release the cut answer sent %q, want nothing more", b)
	}
}
