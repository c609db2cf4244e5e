package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// ywsRelay drives a y-websocket server (bench/yws): one room per board,
// pushes are pre-generated Yjs updates sent as sync-update messages, and a
// receiver matches what it gets to a push by the update's bytes. The server
// applies each update to its copy of the document and sends the update it
// emits (byte for byte the one sent: gen-updates.js checks) to every
// connection of the room, the sender's included: that echo is the writer's
// acknowledgement.
type ywsRelay struct {
	base    string // ws://127.0.0.1:1234
	pid     int
	prefix  string
	dial    *http.Client
	updates [][]byte
	bySum   map[string]int64 // update bytes → seq
}

func newYWSRelay(base string, pid int, prefix string, updates [][]byte) (*ywsRelay, error) {
	if _, err := checkLoopbackURL(base); err != nil {
		return nil, err
	}
	y := &ywsRelay{
		base: strings.TrimRight(base, "/"), pid: pid, prefix: prefix, updates: updates,
		dial:  &http.Client{Transport: &http.Transport{Proxy: nil}},
		bySum: make(map[string]int64, len(updates)),
	}
	for i, u := range updates {
		y.bySum[string(u)] = int64(i)
	}
	return y, nil
}

func (y *ywsRelay) Name() string { return "y-websocket" }
func (y *ywsRelay) PID() int     { return y.pid }

// Rooms names n rooms; y-websocket makes a room on its first connection.
// The prefix is new every run: a room that already holds these updates
// would apply nothing and so broadcast nothing.
func (y *ywsRelay) Rooms(ctx context.Context, n int) ([]string, error) {
	if n != 1 {
		return nil, fmt.Errorf("y-websocket runs use one room (the updates form one document)")
	}
	return []string{y.prefix}, nil
}

// seqOf finds which push an update is: by its bytes, or else by the
// "cbload:<seq>;" text every generated update carries.
func (y *ywsRelay) seqOf(update []byte) (int64, bool) {
	if seq, ok := y.bySum[string(update)]; ok {
		return seq, true
	}
	i := bytes.Index(update, []byte(markerPrefix))
	if i < 0 {
		return 0, false
	}
	seq, _, ok := cutNumber(update[i+len(markerPrefix):], ';')
	return seq, ok && seq < int64(len(y.updates))
}

// dialRoom connects and sends sync step 1 with an empty state vector, as a
// new y-websocket client does.
func (y *ywsRelay) dialRoom(ctx context.Context, room string) (*websocket.Conn, error) {
	c, res, err := websocket.Dial(ctx, y.base+"/"+room, &websocket.DialOptions{HTTPClient: y.dial})
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("y-websocket %s: %d: %w", room, res.StatusCode, err)
		}
		return nil, fmt.Errorf("y-websocket %s: %w", room, err)
	}
	c.SetReadLimit(4 << 20)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Write(wctx, websocket.MessageBinary, encodeSyncMessage(ySyncStep1, emptyStateVector)); err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("y-websocket %s: sync step 1: %w", room, err)
	}
	return c, nil
}

// updateIn returns the update a message carries, if it is a sync update.
// Step 2 (the document as it was on joining) is not a push.
func updateIn(data []byte) ([]byte, bool) {
	m, err := parseYMessage(data)
	if err != nil || m.Type != yMessageSync || m.SyncType != ySyncUpdate {
		return nil, false
	}
	return m.Payload, true
}

// DialReceiver implements relay.
func (y *ywsRelay) DialReceiver(ctx context.Context, room string, r *receiver) (func(context.Context) error, error) {
	conn, err := y.dialRoom(ctx, room)
	if err != nil {
		return nil, err
	}
	return r.readLoop(conn, func(data []byte) {
		u, ok := updateIn(data)
		if !ok {
			return
		}
		if seq, ok := y.seqOf(u); ok {
			if sent, ok := r.e.sentAt(seq); ok {
				r.record(seq, sent)
			}
		}
	}), nil
}

// DialWriter implements relay. The updates depend on one another, so one
// writer sends them all, in order.
func (y *ywsRelay) DialWriter(ctx context.Context, room string, w int, e *engine) (pusher, error) {
	if w != 0 {
		return nil, fmt.Errorf("y-websocket runs have one writer")
	}
	if int64(len(e.sentNs)) > int64(len(y.updates)) {
		return nil, fmt.Errorf("the run sends %d updates but the updates file has %d: generate more (node bench/yws/gen-updates.js N)", len(e.sentNs), len(y.updates))
	}
	conn, err := y.dialRoom(ctx, room)
	if err != nil {
		return nil, err
	}
	// Each push is acknowledged when the server sends it back.
	p := &ywsPusher{y: y}
	p.ackSocket = newAckSocket(conn, func(data []byte) {
		if u, ok := updateIn(data); ok {
			if seq, ok := y.seqOf(u); ok {
				e.ack(seq, nil)
			}
		}
	})
	return p, nil
}

type ywsPusher struct {
	*ackSocket
	y *ywsRelay
}

func (p *ywsPusher) Push(ctx context.Context, seq, sentNs int64) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.conn.Write(ctx, websocket.MessageBinary, encodeSyncMessage(ySyncUpdate, p.y.updates[seq]))
}
