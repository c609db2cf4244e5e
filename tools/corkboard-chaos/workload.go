//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// changes is a pull answer or a live changes message, the parts the
// checker needs.
type changes struct {
	Type  string `json:"type"`
	Since int64  `json:"since"`
	Board struct {
		Version int64 `json:"version"`
	} `json:"board"`
	Notes []struct {
		ID      string `json:"id"`
		Content string `json:"content"`
		Version int64  `json:"version"`
	} `json:"notes"`
	DeletedNoteIDs []string `json:"deletedNoteIds"`
	ServerVersion  int64    `json:"serverVersion"`
	Reset          bool     `json:"reset"`
}

// apply applies a pull answer or changes message to c by the rules of
// docs/live-protocol.md ("Applying it"); it reports whether the answer
// was applied (false: already covered).
func (c *Copy) apply(ch *changes) bool {
	if ch.Reset {
		c.Resets++
		c.Rows = map[string]Row{}
	} else if ch.ServerVersion <= c.Version {
		return false
	}
	for _, n := range ch.Notes {
		c.Rows[n.ID] = Row{ID: n.ID, Version: n.Version, Content: n.Content}
	}
	for _, id := range ch.DeletedNoteIDs {
		delete(c.Rows, id)
	}
	c.Version = ch.ServerVersion
	return true
}

// stats are the run's counters.
type stats struct {
	pushes, acks, replays, retries, pulls atomic.Int64
	watcherConns, watcherGaps             atomic.Int64

	mu   sync.Mutex
	gaps []string // the first gaps watchers saw, for the summary
}

func (s *stats) gap(desc string) {
	s.watcherGaps.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gaps) < 10 {
		s.gaps = append(s.gaps, desc)
	}
}

// env is what the clients share.
type env struct {
	nodes []*node
	st    *stats
	http  *http.Client
}

func (e *env) randomNode(r *rand.Rand) *node { return e.nodes[r.IntN(len(e.nodes))] }

// pusher pushes one new note per push to its board over REST, each with
// its own idempotency key, retrying the same push with the same key on any
// error against a random node, and keeps a copy of the board by
// incremental pulls.
type pusher struct {
	id    int
	board string
	sess  session
	rng   *rand.Rand
	copy  Copy

	mu     sync.Mutex
	pushes []Push
	// lastAck is the highest version a push of this pusher was
	// acknowledged at; pulls records every pull made after one.
	lastAck int64
	pulls   []PullAfterAck
}

// run pushes until stop is closed, then finishes the push in flight (up to
// hard's end).
func (p *pusher) run(hard context.Context, stop <-chan struct{}, e *env, runID string) {
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("%s-p%02d-%05d", runID, p.id, seq)
		push := Push{Board: p.board, Key: key, NoteID: fmt.Sprintf("p%02d-%05d", p.id, seq), Content: "note of push " + key}
		p.mu.Lock()
		p.pushes = append(p.pushes, push)
		idx := len(p.pushes) - 1
		p.mu.Unlock()
		e.st.pushes.Add(1)
		body := map[string]any{
			"clientVersion": p.copy.Version,
			"notes": map[string]any{"upserted": []any{map[string]any{
				"id": push.NoteID, "title": "chaos", "content": push.Content,
				"x": p.rng.IntN(2000), "y": p.rng.IntN(2000), "color": "yellow", "type": "sticky",
				"updatedAt": time.Now().UTC().Format(time.RFC3339Nano),
			}}, "deleted": []string{}},
			"trackerItems": map[string]any{"upserted": []any{}, "deleted": []string{}},
		}
		for attempt := 0; ; attempt++ {
			if hard.Err() != nil {
				return
			}
			if attempt > 0 {
				e.st.retries.Add(1)
				time.Sleep(time.Duration(50+p.rng.IntN(200)) * time.Millisecond)
			}
			var ans struct{ ServerVersion int64 }
			n := e.randomNode(p.rng)
			hdr, err := call(hard, e.http, "POST", n.base()+"/api/boards/"+p.board+"/sync", p.sess.cookie, body, &ans, "Idempotency-Key", key)
			if err != nil {
				continue
			}
			if hdr.Get("Idempotent-Replayed") == "true" {
				e.st.replays.Add(1)
			}
			e.st.acks.Add(1)
			p.mu.Lock()
			p.pushes[idx].Acked, p.pushes[idx].Version = true, ans.ServerVersion
			p.lastAck = max(p.lastAck, ans.ServerVersion)
			p.mu.Unlock()
			break
		}
		if seq%4 == 3 {
			_ = p.pull(hard, e, e.randomNode(p.rng))
		}
		time.Sleep(time.Duration(20+p.rng.IntN(150)) * time.Millisecond)
	}
}

// pull brings the pusher's copy forward from n with one incremental pull.
func (p *pusher) pull(ctx context.Context, e *env, n *node) error {
	var ch changes
	url := n.base() + "/api/boards/" + p.board + "/sync?since=" + strconv.FormatInt(p.copy.Version, 10)
	if _, err := call(ctx, e.http, "GET", url, p.sess.cookie, nil, &ch); err != nil {
		return err
	}
	e.st.pulls.Add(1)
	p.mu.Lock()
	if p.lastAck > 0 {
		p.pulls = append(p.pulls, PullAfterAck{Pusher: fmt.Sprintf("pusher %d", p.id), Board: p.board, Node: n.base(), Acked: p.lastAck, Answered: ch.ServerVersion})
	}
	p.mu.Unlock()
	p.copy.apply(&ch)
	return nil
}

// catchUp pulls until the copy reaches version v (or ctx ends).
func (p *pusher) catchUp(ctx context.Context, e *env, v int64) {
	for p.copy.Version < v && ctx.Err() == nil {
		if err := p.pull(ctx, e, e.randomNode(p.rng)); err != nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if p.copy.Version < v {
		p.copy.Err = fmt.Sprintf("pulls reached version %d of %d before the deadline", p.copy.Version, v)
	}
}

// watcher follows a board over WebSocket, reconnecting with its version on
// any close, and keeps every message's versions and its copy.
type watcher struct {
	name  string
	board string
	sess  session
	home  *node
	rng   *rand.Rand
	copy  Copy

	mu     sync.Mutex
	events []WatchEvent
	target atomic.Int64 // the final version to reach; -1 while the run goes on
}

func (w *watcher) log(ev WatchEvent) {
	w.mu.Lock()
	w.events = append(w.events, ev)
	w.mu.Unlock()
}

// run follows the board until the copy reaches the target, or ctx ends.
func (w *watcher) run(ctx context.Context, e *env) {
	for conn := 0; ctx.Err() == nil; conn++ {
		if t := w.target.Load(); t >= 0 && w.copy.Version >= t {
			return
		}
		n := w.home
		if conn > 0 && w.rng.IntN(2) == 0 {
			n = e.randomNode(w.rng) // spread reconnects over the nodes
		}
		if err := w.follow(ctx, e, n, conn); err != nil && ctx.Err() == nil {
			time.Sleep(time.Duration(100+w.rng.IntN(300)) * time.Millisecond)
		}
	}
	if t := w.target.Load(); w.copy.Version < t {
		w.copy.Err = fmt.Sprintf("live messages reached version %d of %d before the deadline", w.copy.Version, t)
	}
}

// errDone ends a connection once the copy reached its target.
var errDone = errors.New("target reached")

// follow runs one connection.
func (w *watcher) follow(ctx context.Context, e *env, n *node, conn int) error {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	since := w.copy.Version
	url := "ws://" + n.addr + "/api/boards/" + w.board + "/live?since=" + strconv.FormatInt(since, 10)
	c, res, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": []string{"session=" + w.sess.cookie}},
	})
	if err != nil {
		return fmt.Errorf("dial %s: %w", n.addr, err)
	}
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	e.st.watcherConns.Add(1)
	var hello int64
	for {
		if t := w.target.Load(); t >= 0 && w.copy.Version >= t {
			return errDone
		}
		// A silent socket (a stopped node, a stalled database) is given
		// up after a few seconds: reconnecting costs nothing but a catch-up.
		rctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		_, b, err := c.Read(rctx)
		cancel()
		if err != nil {
			return err
		}
		var ch changes
		if err := json.Unmarshal(b, &ch); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		switch ch.Type {
		case "hello":
			hello = ch.ServerVersion
			w.log(WatchEvent{Conn: conn, Kind: "hello", Since: since, ServerVersion: ch.ServerVersion})
		case "changes":
			w.log(WatchEvent{Conn: conn, Kind: "changes", Since: ch.Since, ServerVersion: ch.ServerVersion, Reset: ch.Reset})
			if !ch.Reset && ch.Since > w.copy.Version {
				// Missed something: the protocol says pull or reconnect.
				e.st.gap(fmt.Sprintf("%s (board %s) on node %d: changes %d→%d at version %d (connected with %d, hello %d)",
					w.name, w.board, n.i, ch.Since, ch.ServerVersion, w.copy.Version, since, hello))
				return fmt.Errorf("gap: since %d above %d", ch.Since, w.copy.Version)
			}
			w.copy.apply(&ch)
		}
	}
}
