package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// cfRelay drives a Centrifugo server (cfwire.go): one channel per room,
// subscribers over the JSON client protocol on /connection/websocket, and
// pushes published through the HTTP API (POST /api/publish), as an
// application backend publishes. A push's data carries its marker, so a
// receiver reads which push it got and when it was sent straight from the
// message, as Corkboard's do; the HTTP answer is the acknowledgement.
type cfRelay struct {
	base        string // http://127.0.0.1:port
	pid         int
	apiKey      string
	prefix      string
	maxInFlight int
	dial        *http.Client
	http        *http.Client
	// diag is where the server's GC trace is (timeline.go).
	diag diagSource
}

func (c *cfRelay) diagnostics() diagSource { return c.diag }

func newCFRelay(base string, pid int, apiKey, prefix string, maxInFlight int) (*cfRelay, error) {
	u, err := checkLoopbackURL(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("centrifugo URL %q: want http://", base)
	}
	return &cfRelay{
		base: strings.TrimRight(base, "/"), pid: pid, apiKey: apiKey, prefix: prefix, maxInFlight: maxInFlight,
		dial: &http.Client{Transport: &http.Transport{Proxy: nil}},
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			Proxy: nil, MaxIdleConnsPerHost: maxInFlight, MaxConnsPerHost: maxInFlight, DisableCompression: true,
		}},
	}, nil
}

func (c *cfRelay) Name() string { return "centrifugo" }
func (c *cfRelay) PID() int     { return c.pid }

// Rooms names n channels; Centrifugo makes a channel on its first
// subscriber.
func (c *cfRelay) Rooms(ctx context.Context, n int) ([]string, error) {
	rooms := make([]string, n)
	for i := range rooms {
		rooms[i] = fmt.Sprintf("%s-%d", c.prefix, i)
	}
	return rooms, nil
}

// DialReceiver implements relay: connect, subscribe, and wait for both
// replies before counting the subscriber as connected.
func (c *cfRelay) DialReceiver(ctx context.Context, room string, r *receiver) (func(context.Context) error, error) {
	wsURL := "ws" + strings.TrimPrefix(c.base, "http") + "/connection/websocket"
	conn, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: c.dial})
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("centrifugo: %d: %w", res.StatusCode, err)
		}
		return nil, fmt.Errorf("centrifugo: %w", err)
	}
	conn.SetReadLimit(maxMessage)
	if err := cfSubscribeOn(ctx, conn, room); err != nil {
		conn.CloseNow()
		return nil, err
	}
	return r.readLoop(conn, func(data []byte) {
		scanMarkers(data, func(m marker) {
			if sent, ok := r.e.sentAt(m.Seq); ok && sent == m.SentNs {
				r.record(m.Seq, sent)
			}
		})
		// A ping may share a message with pushes: unanswered, the server
		// closes the connection.
		if hasPing(data) {
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = conn.Write(wctx, websocket.MessageText, cfPong)
			cancel()
		}
	}), nil
}

// cfSubscribeOn sends connect and subscribe in one message and reads until
// both are answered.
func cfSubscribeOn(ctx context.Context, conn *websocket.Conn, channel string) error {
	msg, err := encodeCommands(cfCommand{ID: 1, Connect: &cfConnect{Name: "corkboard-load"}}, cfCommand{ID: 2, Subscribe: &cfSubscribe{Channel: channel}})
	if err != nil {
		return err
	}
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("centrifugo: connect: %w", err)
	}
	var connected, subscribed bool
	for !connected || !subscribed {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return fmt.Errorf("centrifugo: waiting for connect and subscribe: %w", err)
		}
		replies, err := parseReplies(data)
		if err != nil {
			return err
		}
		for _, rep := range replies {
			switch {
			case rep.Error != nil:
				return fmt.Errorf("centrifugo: command %d: %w", rep.ID, rep.Error)
			case rep.ID == 1 && rep.Connect != nil:
				connected = true
			case rep.ID == 2 && rep.Subscribe != nil:
				subscribed = true
			}
		}
	}
	return nil
}

// DialWriter implements relay. Each writer publishes over the HTTP API,
// at most maxInFlight requests awaiting their answer.
func (c *cfRelay) DialWriter(ctx context.Context, room string, w int, e *engine) (pusher, error) {
	return &cfPusher{c: c, room: room, w: w, e: e, sem: make(chan struct{}, c.maxInFlight)}, nil
}

type cfPusher struct {
	c    *cfRelay
	room string
	w    int
	e    *engine
	sem  chan struct{}
	wg   sync.WaitGroup
}

// Push implements pusher: the request goes out on its own goroutine, and
// its answer is the acknowledgement.
func (p *cfPusher) Push(ctx context.Context, seq, sentNs int64) error {
	body, err := cfPublishBody(p.room, marker{Writer: p.w, Seq: seq, SentNs: sentNs})
	if err != nil {
		return err
	}
	select {
	case p.sem <- struct{}{}:
	default:
		return errBusy
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() { <-p.sem }()
		p.e.ack(seq, p.c.publish(ctx, body))
	}()
	return nil
}

// publish sends one publish request.
func (c *cfRelay) publish(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/publish", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", c.apiKey)
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("centrifugo publish: %w", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("centrifugo publish: %w", err)
	}
	return cfPublishResult(res.StatusCode, b)
}

// Close waits for the pushes in flight.
func (p *cfPusher) Close() { p.wg.Wait() }
