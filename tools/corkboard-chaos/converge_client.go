//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/changelog"
)

// The converge workload's clients behave as the browser client will with
// the merging server (issue 20): each keeps the server copy of every note
// and its unsent edits, each edit with the base row it started from;
// pushes carry baseVersion; a newer server row under an unsent edit is
// merged into it (board.MergeNote), and the new row becomes its base
// (unless the merge overlapped: see the overlap rules). docs/chaos.md,
// "The converge workload", is the description.

// ledger records, for the whole run, every token typed and every token a
// client removed on purpose (it deleted or replaced a line it saw, or
// deleted a note holding a line it typed and never sent).
type ledger struct {
	mu      sync.Mutex
	typed   []Typed
	removed map[string]bool
}

func (l *ledger) add(t Typed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.typed = append(l.typed, t)
}

func (l *ledger) remove(toks ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range toks {
		l.removed[t] = true
	}
}

// convStats are the converge run's counters.
type convStats struct {
	edits, creates, deletes, offline           atomic.Int64
	pushes, acks, retries, replays, busy       atomic.Int64
	crossed, serverMerged, rebases, overlaps   atomic.Int64
	revivals, pulls, gaps, liveConns, fastAcks atomic.Int64
	logsSent, logsTried, errors                atomic.Int64

	mu      sync.Mutex
	refused []string // pushes or logs the server refused (a harness or server bug)
}

func (s *convStats) refuse(desc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused = append(s.refused, desc)
}

// convEnv is what the clients share.
type convEnv struct {
	nodes  []*node
	board  string
	http   *http.Client
	ledger *ledger
	st     *convStats
	// overlapRule is what a client does when its rebase overlapped.
	overlapRule string
}

// What a client does when the rebase of an unsent edit overlapped (the
// edit won lines of the newer server row, which the server will not see as
// an overlap if the edit is pushed on that row):
const (
	// OverlapNone does nothing more: the new row becomes the edit's base
	// (the browser's first merge rule, which lost the row's lines).
	OverlapNone = "none"
	// OverlapLog writes the server row it overwrote to the changelog
	// (update_note) before pushing.
	OverlapLog = "log"
	// OverlapKeepBase pushes the edit on the base it had before the
	// overlap, so that the server's merge finds the overlap again, logs
	// the row and sends its overlap event (docs/web-client.md's rule).
	OverlapKeepBase = "keep-base"
)

// edit is a client's unsent change of one note.
type edit struct {
	// base is the server row the edit started from; nil for a note this
	// client creates. When speculative, it is instead this client's own
	// edit in the batch on its way, which has no server version yet: the
	// edit is rebased on the server row once that batch is absorbed.
	base        *board.Note
	speculative bool
	// pushBase, when set, is pushed as the edit's base instead of base:
	// the base it had before a rebase overlapped (OverlapKeepBase).
	pushBase *board.Note
	mine     board.Note
	del      bool
}

// pushedBase is the base the edit is pushed with (nil: a new note).
func (e *edit) pushedBase() *board.Note {
	if e.pushBase != nil {
		return e.pushBase
	}
	return e.base
}

// batch is a push on its way: sent (maybe more than once, always with the
// same key and body) and perhaps acknowledged, but not yet absorbed: the
// client's copy has not reached its version.
type batch struct {
	key     string
	body    []byte
	ids     []string
	edits   map[string]*edit
	acked   bool
	version int64
}

// logEntry is a changelog entry a client still has to write.
type logEntry struct {
	NoteID  string `json:"noteId"`
	Action  string `json:"action"`
	Content string `json:"content"`
}

// cclient is one converge client: live (WebSocket for changes and pushes)
// or REST (pushes and pulls). One goroutine runs it; its socket's reader
// hands messages over through a channel.
type cclient struct {
	name string
	live bool
	sess session
	rng  *rand.Rand
	e    *convEnv
	home int // the node it prefers

	version int64
	srv     map[string]board.Note
	gone    map[string]bool // notes the server reported deleted
	pend    map[string]*edit
	order   []string // pend's IDs in the order first edited
	sent    *batch
	unsent  map[string]map[string]bool // note → tokens typed and never pushed
	logs    []logEntry
	conn    *liveConn
	offline int // operations left in an offline window

	tok, notesMade, pushSeq int
	resets                  int
	deadUntil               time.Time // no network before (after an error)
}

func newClient(name string, live bool, sess session, rng *rand.Rand, e *convEnv, home int) *cclient {
	return &cclient{name: name, live: live, sess: sess, rng: rng, e: e, home: home,
		srv: map[string]board.Note{}, gone: map[string]bool{}, pend: map[string]*edit{},
		unsent: map[string]map[string]bool{}}
}

// message is a pull answer or any live message.
type message struct {
	Type           string        `json:"type"`
	ID             string        `json:"id"`
	Since          int64         `json:"since"`
	Board          *board.Header `json:"board"`
	Notes          []board.Note  `json:"notes"`
	DeletedNoteIDs []string      `json:"deletedNoteIds"`
	ServerVersion  int64         `json:"serverVersion"`
	Reset          bool          `json:"reset"`
	Replayed       bool          `json:"replayed"`
	Status         int           `json:"status"`
	Error          string        `json:"error"`
}

// ---- the local model ----

// view is the note as this client shows it: its unsent edit, else its
// edit on the way, else the server copy.
func (c *cclient) view(id string) (board.Note, bool) {
	if e := c.pend[id]; e != nil {
		return e.mine, !e.del
	}
	if c.sent != nil {
		if e := c.sent.edits[id]; e != nil {
			return e.mine, !e.del
		}
	}
	n, ok := c.srv[id]
	return n, ok
}

// visible lists the notes this client shows, in a stable order.
func (c *cclient) visible() []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			if _, ok := c.view(id); ok {
				ids = append(ids, id)
			}
		}
	}
	for id := range c.srv {
		add(id)
	}
	if c.sent != nil {
		for _, id := range c.sent.ids {
			add(id)
		}
	}
	for _, id := range c.order {
		add(id)
	}
	slices.Sort(ids)
	return ids
}

// change records n, the user's edit of note id, as the unsent edit of it.
// A second edit of a note with an unsent edit keeps the oldest base.
func (c *cclient) change(n board.Note) {
	n.UpdatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	n.Version, n.DeletedAt = 0, nil
	if e := c.pend[n.ID]; e != nil {
		e.mine = n
		return
	}
	e := &edit{mine: n}
	if c.sent != nil && c.sent.edits[n.ID] != nil {
		b := c.sent.edits[n.ID].mine
		e.base, e.speculative = &b, true
	} else if s, ok := c.srv[n.ID]; ok {
		e.base = &s
	}
	c.pend[n.ID] = e
	c.order = append(c.order, n.ID)
}

// deleteNote records the deletion of note id. Lines this client typed
// into it and never sent are removed on purpose; a note it created and
// never sent is simply forgotten.
func (c *cclient) deleteNote(id string) {
	n, _ := c.view(id)
	var mine []string
	for _, t := range tokens(n.Title + "\n" + n.Content) {
		if c.unsent[id][t] {
			mine = append(mine, t)
		}
	}
	c.e.ledger.remove(mine...)
	delete(c.unsent, id)
	e := c.pend[id]
	if e != nil && e.base == nil && (c.sent == nil || c.sent.edits[id] == nil) {
		delete(c.pend, id)
		c.order = slices.DeleteFunc(c.order, func(x string) bool { return x == id })
		return
	}
	if e == nil {
		e = &edit{}
		c.pend[id] = e
		c.order = append(c.order, id)
	}
	e.del, e.mine = true, board.Note{ID: id}
	c.e.st.deletes.Add(1)
}

// newToken types a new token into note id.
func (c *cclient) newToken(id string) string {
	c.tok++
	t := fmt.Sprintf("%s-e%d", c.name, c.tok)
	c.e.ledger.add(Typed{Token: t, Note: id, Client: c.name})
	if c.unsent[id] == nil {
		c.unsent[id] = map[string]bool{}
	}
	c.unsent[id][t] = true
	return t
}

func (c *cclient) newLine(id string) string {
	if c.rng.IntN(2) == 0 {
		return "- [ ] " + c.newToken(id)
	}
	return c.newToken(id) + " " + words[c.rng.IntN(len(words))]
}

var (
	words  = []string{"ship it", "ask Ana", "check the numbers", "needs a test", "later", "why?"}
	colors = []string{"yellow", "blue", "pink", "green"}
	types  = []string{"sticky", "decision", "task", "idea"}
)

func splitContent(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// editRandom makes one random edit of note id: a field (position, colour,
// type, title) or a line of its content (insert, append, replace, amend,
// tick, delete).
func (c *cclient) editRandom(id string) {
	n, _ := c.view(id)
	lines := splitContent(n.Content)
	r := c.e.ledger
	pick := c.rng.IntN(100)
	if len(lines) > 12 && pick >= 30 && pick < 60 {
		pick = 95 // a long note: delete a line instead of adding one
	}
	switch {
	case pick < 8:
		n.X, n.Y = float64(c.rng.IntN(2000)), float64(c.rng.IntN(1500))
	case pick < 13:
		n.Color = colors[c.rng.IntN(len(colors))]
	case pick < 16:
		n.Type = types[c.rng.IntN(len(types))]
	case pick < 22:
		r.remove(tokens(n.Title)...)
		n.Title = "Note " + c.newToken(id)
	case pick < 42 || len(lines) == 0:
		i := c.rng.IntN(len(lines) + 1)
		lines = slices.Insert(lines, i, c.newLine(id))
	case pick < 55:
		lines = append(lines, c.newLine(id))
	case pick < 67:
		i := c.rng.IntN(len(lines))
		r.remove(tokens(lines[i])...)
		lines[i] = c.newLine(id)
	case pick < 77:
		i := c.rng.IntN(len(lines))
		lines[i] += " +" + c.newToken(id)
	case pick < 88:
		var boxes []int
		for i, l := range lines {
			if strings.HasPrefix(l, "- [ ] ") || strings.HasPrefix(l, "- [x] ") {
				boxes = append(boxes, i)
			}
		}
		if len(boxes) == 0 {
			lines = append(lines, c.newLine(id))
			break
		}
		i := boxes[c.rng.IntN(len(boxes))]
		if strings.HasPrefix(lines[i], "- [ ] ") {
			lines[i] = "- [x] " + lines[i][6:]
		} else {
			lines[i] = "- [ ] " + lines[i][6:]
		}
	default:
		i := c.rng.IntN(len(lines))
		r.remove(tokens(lines[i])...)
		lines = slices.Delete(lines, i, i+1)
	}
	n.Content = strings.Join(lines, "\n")
	c.change(n)
	c.e.st.edits.Add(1)
}

// createNote creates a note with a title and a line or two.
func (c *cclient) createNote() {
	c.notesMade++
	id := fmt.Sprintf("%s-n%d", c.name, c.notesMade)
	n := board.Note{ID: id, X: float64(c.rng.IntN(2000)), Y: float64(c.rng.IntN(1500)),
		Color: colors[c.rng.IntN(len(colors))], Type: types[c.rng.IntN(len(types))]}
	n.Title = "Note " + c.newToken(id)
	lines := []string{c.newLine(id)}
	if c.rng.IntN(2) == 0 {
		lines = append(lines, c.newLine(id))
	}
	n.Content = strings.Join(lines, "\n")
	c.change(n)
	c.e.st.creates.Add(1)
}

// ---- what the server sends ----

// apply applies a pull answer or changes message by the rules of
// live-protocol.md ("Applying it"); gap reports a changes message that
// starts above this client's version (the caller pulls).
func (c *cclient) apply(m *message, live bool) (gap bool) {
	if m.Reset {
		c.resets++
		for id := range c.srv {
			c.gone[id] = true
		}
		c.srv = map[string]board.Note{}
	} else {
		if live && m.Since > c.version {
			return true
		}
		if m.ServerVersion <= c.version {
			return false
		}
	}
	for _, n := range m.Notes {
		c.srv[n.ID] = n
		delete(c.gone, n.ID)
		if e := c.pend[n.ID]; e != nil && !e.del && !e.speculative && e.base != nil && n.Version > e.base.Version {
			c.rebase(e, *e.base, n, e.base)
		}
	}
	for _, id := range m.DeletedNoteIDs {
		delete(c.srv, id)
		c.gone[id] = true
	}
	c.version = m.ServerVersion
	c.absorb()
	return false
}

// rebase merges the unsent edit e (of base) into theirs, a newer server
// row: the merge becomes the edit, theirs its base. Where both changed the
// same lines the edit wins them (it will be the later push); what happens
// to theirs then is the client's overlap rule. older is the server row
// the edit would be pushed on before this rebase (OverlapKeepBase keeps
// it).
func (c *cclient) rebase(e *edit, base, theirs board.Note, older *board.Note) {
	merged, overlap := board.MergeNote(base, theirs, e.mine)
	c.e.st.rebases.Add(1)
	if overlap {
		c.e.st.overlaps.Add(1)
		switch c.e.overlapRule {
		case OverlapLog:
			c.logs = append(c.logs, logEntry{NoteID: theirs.ID, Action: "update_note", Content: string(changelog.RenderNote(theirs))})
		case OverlapKeepBase:
			if e.pushBase == nil {
				e.pushBase = older
			}
		}
	}
	merged.Version, merged.DeletedAt = 0, nil
	e.mine = merged
	t := theirs
	e.base, e.speculative = &t, false
}

// absorb ends the batch on its way once the copy reached its version: the
// server copy now holds it, and unsent edits based on it are rebased on
// the server's rows.
func (c *cclient) absorb() {
	b := c.sent
	if b == nil || !b.acked || c.version < b.version {
		return
	}
	c.sent = nil
	for _, id := range b.ids {
		sent := b.edits[id]
		s, live := c.srv[id]
		if live && !sent.del && s.Version == b.version && !sameFields(s, sent.mine) {
			c.e.st.serverMerged.Add(1) // the server merged our row into a newer one
		}
		e := c.pend[id]
		if e == nil || !e.speculative {
			continue
		}
		if live {
			older := sent.pushedBase()
			if older == nil { // a note we created: the row our push wrote
				o := sent.mine
				o.Version = b.version
				older = &o
			}
			c.rebase(e, sent.mine, s, older)
			continue
		}
		// Deleted since our push: the edit brings the note back, based on
		// what we sent (the row of our version).
		base := sent.mine
		base.Version = b.version
		e.base, e.speculative = &base, false
	}
}

// ---- pushing ----

// wireNote is a pushed note: the row with the version it started from.
type wireNote struct {
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	Content     string  `json:"content"`
	X           float64 `json:"x"`
	Y           float64 `json:"y"`
	Color       string  `json:"color"`
	Type        string  `json:"type"`
	UpdatedAt   string  `json:"updatedAt"`
	BaseVersion int64   `json:"baseVersion,omitempty"`
}

// startBatch turns the unsent edits into the batch on its way.
func (c *cclient) startBatch() {
	up := []wireNote{}
	del := []string{}
	b := &batch{edits: c.pend, ids: c.order}
	for _, id := range c.order {
		e := c.pend[id]
		if e.del {
			del = append(del, id)
			continue
		}
		w := wireNote{ID: id, Title: e.mine.Title, Content: e.mine.Content, X: e.mine.X, Y: e.mine.Y,
			Color: e.mine.Color, Type: e.mine.Type, UpdatedAt: e.mine.UpdatedAt}
		if pb := e.pushedBase(); pb != nil {
			w.BaseVersion = pb.Version
		}
		if c.gone[id] {
			c.e.st.revivals.Add(1)
		}
		up = append(up, w)
		delete(c.unsent, id)
	}
	body, _ := json.Marshal(map[string]any{
		"clientVersion": c.version,
		"notes":         map[string]any{"upserted": up, "deleted": del},
		"trackerItems":  map[string]any{"upserted": []any{}, "deleted": []string{}},
	})
	c.pushSeq++
	b.key = fmt.Sprintf("%s-p%d-%d", c.name, c.pushSeq, c.rng.Uint64())
	b.body = body
	c.sent = b
	c.pend, c.order = map[string]*edit{}, nil
	c.e.st.pushes.Add(1)
}

// acked records the batch's acknowledgement at version v. When nobody
// pushed in between and every row was based on the server copy, the
// server's merge of each row is the row itself, so the batch is absorbed
// at once (as the browser does); otherwise the next pull absorbs it.
func (c *cclient) acked(v int64, replayed bool) {
	b := c.sent
	b.acked, b.version = true, v
	c.e.st.acks.Add(1)
	if replayed {
		c.e.st.replays.Add(1)
	}
	if v <= c.version {
		c.absorb()
		return
	}
	fast := v == c.version+1
	for _, id := range b.ids {
		e := b.edits[id]
		s, ok := c.srv[id]
		switch pb := e.pushedBase(); {
		case e.del:
		case c.gone[id]:
			fast = false // a revival: the deleted row is merged in
		case pb == nil:
			fast = fast && !ok
		default:
			fast = fast && ok && s.Version == pb.Version
		}
	}
	if !fast {
		c.e.st.crossed.Add(1)
		return
	}
	c.e.st.fastAcks.Add(1)
	m := &message{ServerVersion: v, DeletedNoteIDs: []string{}}
	for _, id := range b.ids {
		e := b.edits[id]
		if e.del {
			m.DeletedNoteIDs = append(m.DeletedNoteIDs, id)
			continue
		}
		n := e.mine
		n.Version, n.DeletedAt = v, nil
		m.Notes = append(m.Notes, n)
	}
	c.apply(m, false)
}

// errBusy is a push the server refused for now (429, 503): try later.
var errBusy = errors.New("busy")

// errRefused is a push the server refused for good (400, 403): a bug of
// the harness or the server, reported; the batch is dropped.
var errRefused = errors.New("push refused")

// sync writes pending changelog entries, then pushes: the batch on its way
// again, or the unsent edits as a new batch. It absorbs the batch (pulling
// if need be) before starting another. It returns an error when the
// network or the server failed (the client is offline until it works).
func (c *cclient) sync(ctx context.Context) error {
	if err := c.sendLogs(ctx); err != nil {
		return err
	}
	for range 3 {
		if c.sent == nil {
			if len(c.pend) == 0 {
				return nil
			}
			c.startBatch()
		}
		if !c.sent.acked {
			v, replayed, err := c.push(ctx)
			if errors.Is(err, errRefused) {
				continue
			}
			if err != nil {
				return err
			}
			c.acked(v, replayed)
		}
		if c.sent != nil {
			if err := c.pull(ctx); err != nil {
				return err
			}
		}
		if c.sent != nil {
			return nil // not absorbed yet: the next sync goes on
		}
		if err := c.sendLogs(ctx); err != nil { // a rebase may have logged
			return err
		}
	}
	return nil
}

// sendLogs writes the changelog entries the client's rebases made.
func (c *cclient) sendLogs(ctx context.Context) error {
	if len(c.logs) == 0 {
		return nil
	}
	n := c.node()
	c.e.st.logsTried.Add(int64(len(c.logs)))
	_, err := call(ctx, c.e.http, "POST", n.base()+"/api/boards/"+c.e.board+"/log", c.sess.cookie,
		map[string]any{"entries": c.logs}, nil)
	var se *statusError
	if errors.As(err, &se) && se.status < 500 && se.status != 429 {
		c.e.st.refuse(fmt.Sprintf("%s: log refused: %v", c.name, err))
		c.logs = nil
		return nil
	}
	if err != nil {
		return err
	}
	c.e.st.logsSent.Add(int64(len(c.logs)))
	c.logs = nil
	return nil
}

// push sends the batch on its way once: over the socket for a live
// client, else over REST.
func (c *cclient) push(ctx context.Context) (int64, bool, error) {
	if c.live {
		if err := c.connect(ctx); err != nil {
			return 0, false, err
		}
		return c.pushLive(ctx)
	}
	var ans struct{ ServerVersion int64 }
	n := c.node()
	hdr, err := call(ctx, c.e.http, "POST", n.base()+"/api/boards/"+c.e.board+"/sync", c.sess.cookie,
		json.RawMessage(c.sent.body), &ans, "Idempotency-Key", c.sent.key)
	if err != nil {
		return 0, false, c.pushFailed(err)
	}
	return ans.ServerVersion, hdr.Get("Idempotent-Replayed") == "true", nil
}

// pushFailed sorts a push's failure: 4xx other than 429 is a refusal (a
// bug: the batch is dropped and reported), the rest is offline.
func (c *cclient) pushFailed(err error) error {
	c.e.st.retries.Add(1)
	var se *statusError
	if errors.As(err, &se) && se.status >= 400 && se.status < 500 && se.status != 429 {
		c.e.st.refuse(fmt.Sprintf("%s: push %s refused: %v", c.name, c.sent.key, err))
		c.sent = nil
		for _, e := range c.pend { // based on the dropped batch: on the server copy again
			if e.speculative {
				e.base, e.speculative = nil, false
				if s, ok := c.srv[e.mine.ID]; ok {
					e.base = &s
				}
			}
		}
		return errRefused
	}
	if errors.As(err, &se) {
		c.e.st.busy.Add(1)
		return errBusy
	}
	return err
}

// pull brings the copy forward with one incremental pull.
func (c *cclient) pull(ctx context.Context) error {
	var m message
	n := c.node()
	url := n.base() + "/api/boards/" + c.e.board + "/sync?since=" + strconv.FormatInt(c.version, 10)
	if _, err := call(ctx, c.e.http, "GET", url, c.sess.cookie, nil, &m); err != nil {
		return err
	}
	c.e.st.pulls.Add(1)
	c.apply(&m, false)
	return nil
}

// node is the node the next request goes to: the home node, or with
// several nodes now and then another one.
func (c *cclient) node() *node {
	if len(c.e.nodes) > 1 && c.rng.IntN(3) == 0 {
		return c.e.nodes[c.rng.IntN(len(c.e.nodes))]
	}
	return c.e.nodes[c.home]
}

// ---- the live channel ----

// liveConn is a client's WebSocket; its reader hands every message to
// msgs and closes it when the connection ends.
type liveConn struct {
	ws     *websocket.Conn
	msgs   chan message
	cancel context.CancelFunc
}

// connect opens the live connection if there is none, with ?since= the
// client's version.
func (c *cclient) connect(ctx context.Context) error {
	if c.conn != nil {
		return nil
	}
	n := c.node()
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := "ws://" + n.addr + "/api/boards/" + c.e.board + "/live?since=" + strconv.FormatInt(c.version, 10)
	ws, res, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": []string{"session=" + c.sess.cookie}},
	})
	if err != nil {
		return fmt.Errorf("dial %s: %w", n.addr, err)
	}
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	ws.SetReadLimit(64 << 20)
	rctx, rcancel := context.WithCancel(ctx)
	lc := &liveConn{ws: ws, msgs: make(chan message, 1024), cancel: rcancel}
	go func() {
		defer close(lc.msgs)
		for {
			_, b, err := ws.Read(rctx)
			if err != nil {
				return
			}
			var m message
			if err := json.Unmarshal(b, &m); err != nil {
				return
			}
			select {
			case lc.msgs <- m:
			case <-rctx.Done():
				return
			}
		}
	}()
	c.conn = lc
	c.e.st.liveConns.Add(1)
	return nil
}

// disconnect closes the live connection, if any.
func (c *cclient) disconnect() {
	if c.conn == nil {
		return
	}
	c.conn.cancel()
	c.conn.ws.CloseNow()
	for range c.conn.msgs { // the reader ends
	}
	c.conn = nil
}

// handle applies one live message; a gap pulls.
func (c *cclient) handle(ctx context.Context, m *message) error {
	if m.Type != "changes" {
		return nil
	}
	if c.apply(m, true) {
		c.e.st.gaps.Add(1)
		return c.pull(ctx)
	}
	return nil
}

// drain applies the live messages that arrived, without waiting.
func (c *cclient) drain(ctx context.Context) error {
	for c.conn != nil {
		select {
		case m, ok := <-c.conn.msgs:
			if !ok {
				c.disconnect()
				return errors.New("live connection closed")
			}
			if err := c.handle(ctx, &m); err != nil {
				c.disconnect()
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// pushLive sends the batch over the socket and waits (up to 5 s) for its
// ack, applying the changes that come first.
func (c *cclient) pushLive(ctx context.Context) (int64, bool, error) {
	id := fmt.Sprintf("%s-%d", c.sent.key, c.rng.Uint32())
	msg, _ := json.Marshal(map[string]any{"type": "push", "id": id, "idempotencyKey": c.sent.key, "push": json.RawMessage(c.sent.body)})
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	err := c.conn.ws.Write(wctx, websocket.MessageText, msg)
	cancel()
	if err != nil {
		c.disconnect()
		c.e.st.retries.Add(1)
		return 0, false, err
	}
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case m, ok := <-c.conn.msgs:
			if !ok {
				c.disconnect()
				c.e.st.retries.Add(1)
				return 0, false, errors.New("live connection closed before the ack")
			}
			switch {
			case m.Type == "ack" && m.ID == id:
				return m.ServerVersion, m.Replayed, nil
			case m.Type == "error" && m.ID == id:
				return 0, false, c.pushFailed(&statusError{m.Status, m.Error})
			}
			if err := c.handle(ctx, &m); err != nil {
				c.disconnect()
				c.e.st.retries.Add(1)
				return 0, false, err
			}
		case <-timeout.C:
			c.disconnect()
			c.e.st.retries.Add(1)
			return 0, false, errors.New("no ack within 5s")
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
	}
}

// ---- the run ----

// step is one operation of the workload: mostly an edit, sometimes a
// sync, a pull, a note created or deleted, or the start of an offline
// window.
func (c *cclient) step(ctx context.Context) {
	if c.offline > 0 {
		c.offline--
		c.editSomething()
		return
	}
	c.online(ctx)
	c.editSomething()
	if c.rng.IntN(40) == 0 {
		c.offline = 5 + c.rng.IntN(20)
		c.disconnect()
		c.e.st.offline.Add(1)
		return
	}
	if c.rng.IntN(3) == 0 {
		c.talk(ctx, c.sync)
	}
	if !c.live && c.rng.IntN(3) == 0 {
		c.talk(ctx, c.pull)
	}
}

// online makes an online client talk: a live client (re)connects and
// applies what arrived.
func (c *cclient) online(ctx context.Context) {
	if c.live {
		c.talk(ctx, func(ctx context.Context) error {
			if err := c.connect(ctx); err != nil {
				return err
			}
			return c.drain(ctx)
		})
	}
}

// talk runs f unless a recent failure says the server is away; a failure
// keeps the client off the network for a moment (it edits on meanwhile).
func (c *cclient) talk(ctx context.Context, f func(context.Context) error) {
	if time.Now().Before(c.deadUntil) {
		return
	}
	if err := f(ctx); err != nil {
		c.e.st.errors.Add(1)
		c.deadUntil = time.Now().Add(time.Duration(50+c.rng.IntN(200)) * time.Millisecond)
	}
}

// editSomething edits a visible note, or creates or deletes one. The
// owner's first notes stay for the whole run and get four edits in five
// (a note that ends deleted takes its lines out of the check); the
// clients' own notes come and go, about two at a time.
func (c *cclient) editSomething() {
	ids := c.visible()
	var owners, theirs []string // the owner's notes, the clients'
	for _, id := range ids {
		if strings.HasPrefix(id, "c0-") {
			owners = append(owners, id)
		} else {
			theirs = append(theirs, id)
		}
	}
	switch {
	case len(ids) == 0 || len(theirs) < 2 && c.rng.IntN(40) == 0:
		c.createNote()
	case len(theirs) > 0 && c.rng.IntN(40) == 0:
		c.deleteNote(theirs[c.rng.IntN(len(theirs))])
	case len(owners) > 0 && c.rng.IntN(5) > 0:
		c.editRandom(owners[c.rng.IntN(len(owners))])
	default:
		c.editRandom(ids[c.rng.IntN(len(ids))])
	}
}

// flush ends any offline window and pushes until nothing is left to send
// and the last batch is absorbed, or ctx ends.
func (c *cclient) flush(ctx context.Context) error {
	c.offline = 0
	for {
		if err := c.sync(ctx); err != nil {
			c.disconnect()
		}
		if len(c.pend) == 0 && c.sent == nil && len(c.logs) == 0 {
			return nil
		}
		if err := sleep(ctx, time.Duration(20+c.rng.IntN(100))*time.Millisecond); err != nil {
			return fmt.Errorf("%s: %d unsent edits, a batch on its way: %v: %w", c.name, len(c.pend), c.sent != nil, err)
		}
	}
}

// catchUp brings the copy to version v: a live client through its socket
// (reconnecting after a silence of 3 s), a REST client by pulling.
func (c *cclient) catchUp(ctx context.Context, v int64) error {
	for c.version < v {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: at version %d of %d: %w", c.name, c.version, v, ctx.Err())
		}
		var err error
		if c.live {
			err = c.waitLive(ctx, v)
		} else {
			err = c.pull(ctx)
		}
		if err != nil {
			c.disconnect()
		}
		if c.version < v {
			_ = sleep(ctx, time.Duration(20+c.rng.IntN(100))*time.Millisecond)
		}
	}
	c.disconnect()
	return nil
}

// waitLive applies live messages until the copy reaches v; 3 s of silence
// is an error (the caller reconnects).
func (c *cclient) waitLive(ctx context.Context, v int64) error {
	if err := c.connect(ctx); err != nil {
		return err
	}
	silence := time.NewTimer(3 * time.Second)
	defer silence.Stop()
	for c.version < v {
		select {
		case m, ok := <-c.conn.msgs:
			if !ok {
				return errors.New("live connection closed")
			}
			if err := c.handle(ctx, &m); err != nil {
				return err
			}
		case <-silence.C:
			return errors.New("live connection silent for 3s")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// copyOf is the client's copy for the checker.
func (c *cclient) copyOf() NoteCopy {
	notes := map[string]board.Note{}
	for id, n := range c.srv {
		notes[id] = n
	}
	unsent := len(c.pend)
	if c.sent != nil {
		unsent += len(c.sent.ids)
	}
	return NoteCopy{Name: c.name, Version: c.version, Notes: notes, Unsent: unsent, Resets: c.resets}
}
