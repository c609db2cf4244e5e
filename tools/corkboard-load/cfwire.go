package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Centrifugo's bidirectional client protocol (v2) in its JSON format, the
// little of it a subscriber needs. A client sends commands, each with an
// id and one method field ({"id":1,"connect":{}}); the server answers with
// replies carrying the same id and the method's result, or an error
// ({"id":1,"error":{"code":103,"message":"permission denied"}}), and sends
// pushes with no id ({"push":{"channel":"c","pub":{"data":...}}}). Several
// commands or replies may share one WebSocket message, one JSON object per
// line. An empty object {} from the server is a ping, which the client
// answers with {} (the connect result says so with "pong":true).

// cfCommand is one client command; exactly one method field is set.
type cfCommand struct {
	ID        uint32       `json:"id"`
	Connect   *cfConnect   `json:"connect,omitempty"`
	Subscribe *cfSubscribe `json:"subscribe,omitempty"`
}

// cfConnect is a connect command's body: no token (the spawned server
// allows insecure clients) and no data.
type cfConnect struct {
	Name string `json:"name,omitempty"`
}

type cfSubscribe struct {
	Channel string `json:"channel"`
}

// cfError is a reply's error.
type cfError struct {
	Code    uint32 `json:"code"`
	Message string `json:"message"`
}

func (e *cfError) Error() string { return fmt.Sprintf("centrifugo error %d: %s", e.Code, e.Message) }

// cfReply is one server line: a reply (ID set), a push, or a ping (none).
type cfReply struct {
	ID        uint32          `json:"id,omitempty"`
	Error     *cfError        `json:"error,omitempty"`
	Connect   json.RawMessage `json:"connect,omitempty"`
	Subscribe json.RawMessage `json:"subscribe,omitempty"`
	Push      *cfPush         `json:"push,omitempty"`
}

type cfPush struct {
	Channel string `json:"channel"`
	Pub     *struct {
		Data json.RawMessage `json:"data"`
	} `json:"pub,omitempty"`
}

// isPing reports whether the reply is the server's ping.
func (r *cfReply) isPing() bool {
	return r.ID == 0 && r.Error == nil && r.Connect == nil && r.Subscribe == nil && r.Push == nil
}

// encodeCommands encodes commands as one WebSocket message, one per line.
func encodeCommands(cmds ...cfCommand) ([]byte, error) {
	var b []byte
	for i, c := range cmds {
		line, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, line...)
	}
	return b, nil
}

// parseReplies decodes every line of one server message. Blank lines are
// skipped; a line that is not a JSON object is an error.
func parseReplies(msg []byte) ([]cfReply, error) {
	var out []cfReply
	for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var r cfReply
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("centrifugo reply %.80q: %w", line, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// hasPing reports whether a server message holds a ping line ({}),
// without decoding it: receivers look at every message, and pushes are
// far more common than pings.
func hasPing(msg []byte) bool {
	for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
		if string(bytes.TrimSpace(line)) == "{}" {
			return true
		}
	}
	return false
}

// cfPong is the client's answer to a ping.
var cfPong = []byte("{}")

// cfPublishBody is the HTTP API publish request for one push: the data
// is an object holding the push's marker (marker.go), which Centrifugo
// forwards verbatim inside every subscriber's pub.data.
func cfPublishBody(channel string, m marker) ([]byte, error) {
	return json.Marshal(struct {
		Channel string `json:"channel"`
		Data    any    `json:"data"`
	}{channel, struct {
		M string `json:"m"`
	}{string(appendMarker(nil, m))}})
}

// cfPublishResult checks an HTTP API answer: status 200 and no error
// object (Centrifugo answers API errors with 200 and {"error":{...}}).
func cfPublishResult(status int, body []byte) error {
	if status != 200 {
		return fmt.Errorf("centrifugo publish: status %d: %.200s", status, body)
	}
	var r struct {
		Error *cfError `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("centrifugo publish: answer %.200q: %w", body, err)
	}
	if r.Error != nil {
		return fmt.Errorf("centrifugo publish: %w", r.Error)
	}
	return nil
}
