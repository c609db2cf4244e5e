package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/transport/livewire"
)

// corkRelay drives Corkboard's live channel (docs/live-protocol.md).
type corkRelay struct {
	api      *api
	pid      int
	prefix   string // board IDs are <prefix>-<i>
	pushOver string // "ws" or "rest"
	// maxInFlight bounds a REST writer's pushes awaiting their answer.
	maxInFlight int
	// diag is where the server's stage log and GC trace are (timeline.go).
	diag diagSource
}

func (c *corkRelay) diagnostics() diagSource { return c.diag }

func (c *corkRelay) Name() string { return "corkboard" }
func (c *corkRelay) PID() int     { return c.pid }

// Rooms claims n boards, 16 claims at a time.
func (c *corkRelay) Rooms(ctx context.Context, n int) ([]string, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", c.prefix, i)
	}
	return ids, forEach(ctx, ids, 16, c.api.claim)
}

// forEach runs fn on every item, conc at a time, and returns the first error.
func forEach(ctx context.Context, items []string, conc int, fn func(context.Context, string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, it := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, it); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// helloPrefix starts every hello message.
var helloPrefix = []byte(`{"type":"` + livewire.TypeHello + `"`)

// liveHead is the part of a server message the tool decodes.
type liveHead struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Status int    `json:"status"`
	Error  string `json:"error"`
	Field  string `json:"field"`
	// ServerVersion is an ack's version.
	ServerVersion int64 `json:"serverVersion"`
}

// changesPrefix starts every changes message.
var changesPrefix = []byte(`{"type":"` + livewire.TypeChanges + `"`)

// dialHello opens the board's live channel and reads the hello.
func (c *corkRelay) dialHello(ctx context.Context, room string) (*websocket.Conn, error) {
	conn, err := c.api.dialLive(ctx, room)
	if err != nil {
		return nil, err
	}
	_, data, err := conn.Read(ctx)
	if err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("live %s: read hello: %w", room, err)
	}
	// The server encodes the type first. A prefix test, not a decode:
	// hello lists everyone present, so on a board of 5,000 the hellos of
	// all the joins add up to over a gigabyte of JSON, which decoding made
	// the tool's own bottleneck in the connect phase.
	if !bytes.HasPrefix(data, helloPrefix) {
		conn.CloseNow()
		return nil, fmt.Errorf("live %s: first message is not hello: %.200s", room, data)
	}
	return conn, nil
}

// DialReceiver implements relay: every changes message's markers are
// deliveries; everything else (presence) is only counted.
func (c *corkRelay) DialReceiver(ctx context.Context, room string, r *receiver) (func(context.Context) error, error) {
	conn, err := c.dialHello(ctx, room)
	if err != nil {
		return nil, err
	}
	return r.readLoop(conn, func(data []byte) {
		// The server encodes the type first; a cheap prefix test keeps
		// 50,000 messages a second from costing the tool a JSON decode each.
		if bytes.HasPrefix(data, changesPrefix) {
			scanMarkers(data, func(m marker) { r.record(m.Seq, m.SentNs) })
		}
	}), nil
}

// DialWriter implements relay.
func (c *corkRelay) DialWriter(ctx context.Context, room string, w int, e *engine) (pusher, error) {
	if c.pushOver == "rest" {
		return &restPusher{c: c, board: room, w: w, e: e, sem: make(chan struct{}, max(c.maxInFlight, 1))}, nil
	}
	conn, err := c.dialHello(ctx, room)
	if err != nil {
		return nil, err
	}
	p := &wsPusher{w: w}
	p.ackSocket = newAckSocket(conn, func(data []byte) { p.readAck(e, data) })
	return p, nil
}

// notePush is a single-note push carrying m in the note's content. Note IDs
// cycle over 64 per writer so the board stays small however long the run.
func notePush(m marker) board.Push {
	return board.Push{
		Notes: board.NoteChanges{Upserted: []board.Note{{
			ID:      fmt.Sprintf("load-%d-%d", m.Writer, m.Seq/64%64),
			Title:   "load test",
			Content: string(appendMarker(nil, m)),
			X:       float64(m.Seq % 1000),
			Y:       float64(m.Writer),
			Color:   "yellow",
		}}, Deleted: []string{}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{}, Deleted: []string{}},
	}
}

// wsPusher pushes over the live channel; acks come back on the same socket.
type wsPusher struct {
	*ackSocket
	w int
}

type pushMessage struct {
	Type string     `json:"type"`
	ID   string     `json:"id"`
	Push board.Push `json:"push"`
}

func (p *wsPusher) Push(ctx context.Context, seq, sentNs int64) error {
	msg, err := json.Marshal(pushMessage{Type: livewire.TypePush, ID: strconv.FormatInt(seq, 10), Push: notePush(marker{Writer: p.w, Seq: seq, SentNs: sentNs})})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.conn.Write(ctx, websocket.MessageText, msg)
}

// readAck turns an ack or an error into the engine's answer. Changes from
// other writers on the board are ignored.
func (p *wsPusher) readAck(e *engine, data []byte) {
	if bytes.HasPrefix(data, changesPrefix) {
		return
	}
	var h liveHead
	if err := json.Unmarshal(data, &h); err != nil {
		e.error(fmt.Errorf("writer %d: undecodable message: %.100s", p.w, data))
		return
	}
	if h.Type != livewire.TypeAck && h.Type != livewire.TypeError {
		return
	}
	seq, err := strconv.ParseInt(h.ID, 10, 64)
	if err != nil {
		e.error(fmt.Errorf("writer %d: %s without a push id: %.200s", p.w, h.Type, data))
		return
	}
	if h.Type == livewire.TypeError {
		e.ack(seq, fmt.Errorf("error %d: %s %s", h.Status, h.Field, h.Error))
	} else {
		e.ackVersion(seq, h.ServerVersion)
	}
}

// restPusher pushes with POST /api/boards/{id}/sync, each push in a
// goroutine of its own so the rate holds while the server fsyncs, at most
// maxInFlight at once.
type restPusher struct {
	c     *corkRelay
	board string
	w     int
	e     *engine
	sem   chan struct{}
	wg    sync.WaitGroup
}

func (p *restPusher) Push(ctx context.Context, seq, sentNs int64) error {
	select {
	case p.sem <- struct{}{}:
	default:
		return errBusy
	}
	body, err := json.Marshal(notePush(marker{Writer: p.w, Seq: seq, SentNs: sentNs}))
	if err != nil {
		<-p.sem
		return err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() { <-p.sem }()
		_, err := p.c.api.do(ctx, "POST", "/api/boards/"+p.board+"/sync", body, nil)
		p.e.ack(seq, err)
	}()
	return nil
}

// Close waits for the pushes in flight (each bounded by the client's
// timeout).
func (p *restPusher) Close() { p.wg.Wait() }
