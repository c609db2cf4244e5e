//go:build linux

package transport_test

// Black-box tests of the live channel's read side on Linux, where idle
// connections wait in the process's epoll poller (livepoll_linux.go) and a
// frame parser beneath the WebSocket library takes out the client's pongs
// and counts whole messages (liveread.go). The client here is RFC 6455
// written by hand over a plain TCP connection, so that each test decides
// exactly how the client's frames fall into TCP writes: one byte at a
// time, at random sizes, many messages in one write, split at every byte
// boundary, with pongs in between, or cut off by a close or a reset.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"corkboard/board"
	"corkboard/hub"
	"corkboard/rooms"
	"corkboard/transport"
)

// newPollEnv is a server whose push budgets and connection caps no test
// here reaches: they open hundreds of one person's connections and push in
// bursts.
func newPollEnv(t *testing.T) *env {
	return newEnv(t, withHub(hub.Options{
		MaxConnsPerUserBoard: 1000,
		MaxConnsPerUser:      1000,
		UserPushBurst:        100000,
		Room:                 rooms.Options{PushBurst: 100000},
		// Framing, not budgets: some streams here are thousands of messages.
		ConnMessageBurst: 1_000_000,
		UserMessageBurst: 1_000_000,
	}))
}

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	opCont  = 0x0
	opText  = 0x1
	opClose = 0x8
	opPing  = 0x9
	opPong  = 0xA
)

// clientFrame is one frame as a client sends it: masked, with the shortest
// length encoding.
func clientFrame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	f := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n <= 0xffff:
		f = append(f, 0x80|126, byte(n>>8), byte(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	f = append(f, mask[:]...)
	for i, c := range payload {
		f = append(f, c^mask[i%4])
	}
	return f
}

// textFrames is a text message in parts frames: the first a text frame,
// the others continuations, the last one final.
func textFrames(payload []byte, parts int) [][]byte {
	var fs [][]byte
	for i := range parts {
		lo, hi := len(payload)*i/parts, len(payload)*(i+1)/parts
		op := byte(opCont)
		if i == 0 {
			op = opText
		}
		fs = append(fs, clientFrame(i == parts-1, op, payload[lo:hi]))
	}
	return fs
}

// closeFrame is a client's close frame with code 1000.
func closeFrame() []byte { return clientFrame(true, opClose, []byte{0x03, 0xe8}) }

func pushJSON(msgID, noteID, content string) []byte {
	return mustMarshal(pushMsg{Type: "push", ID: msgID, Push: notePush(board.Note{ID: noteID, Content: content})})
}

func pingJSON(id string) []byte { return mustMarshal(map[string]string{"type": "ping", "id": id}) }

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// liveScript is what a client sends: its bytes, and what it must be
// answered (acks and pongs, each in order) and leave on the board.
type liveScript struct {
	stream  []byte
	pushes  []string
	pings   []string
	notes   map[string]string
	wsPings []string // the WebSocket pings' payloads, which pongs echo
}

// newLiveScript is pushes whose frames have every length encoding and
// straddle the poller's read-ahead bound (4 KiB), fragmented into one to
// four frames, with pings among them. big adds a push of about 90 KB (a
// 64-bit frame length); pongs puts unsolicited client pongs before the
// first message, between messages and between the fragments of a message
// (RFC 6455 section 5.5.3 allows them anywhere a control frame may be);
// wsPings puts WebSocket pings (which the library answers) between
// messages, between fragments and after the last message.
func newLiveScript(prefix string, big, pongs, wsPings bool) liveScript {
	s := liveScript{notes: map[string]string{}}
	wsPing := func() {
		if wsPings {
			p := fmt.Sprintf("wp%d", len(s.wsPings))
			s.stream = append(s.stream, clientFrame(true, opPing, []byte(p))...)
			s.wsPings = append(s.wsPings, p)
		}
	}
	pongN := 0
	pong := func() {
		if pongs {
			// Empty, short and the longest a control frame may be.
			s.stream = append(s.stream, clientFrame(true, opPong, bytes.Repeat([]byte{'p'}, []int{0, 7, 125}[pongN%3]))...)
			pongN++
		}
	}
	message := func(payload []byte, parts int) {
		for i, f := range textFrames(payload, parts) {
			if i > 0 {
				pong()
				if i == 2 {
					wsPing()
				}
			}
			s.stream = append(s.stream, f...)
		}
	}
	pong()
	lengths := []int{0, 3, 60, 110, 150, 300, 700, 1500, 2600, 4200, 5000, 9000, 4500}
	for i, n := range lengths {
		msgID := fmt.Sprintf("%s-p%d", prefix, i)
		noteID := fmt.Sprintf("%s-n%d", prefix, i)
		content := strings.Repeat(string(rune('a'+i%26)), n)
		message(pushJSON(msgID, noteID, content), 1+i%4)
		s.pushes = append(s.pushes, msgID)
		s.notes[noteID] = content
		if i%2 == 1 {
			pong()
		}
		if i%4 == 0 {
			wsPing()
		}
		if i%3 == 2 {
			id := fmt.Sprintf("%s-ping%d", prefix, i)
			message(pingJSON(id), 1+i%2)
			s.pings = append(s.pings, id)
		}
	}
	if big {
		msgID, notes := prefix+"-big", []board.Note{}
		for j := range 3 {
			n := board.Note{ID: fmt.Sprintf("%s-big%d", prefix, j), Content: strings.Repeat(string(rune('A'+j)), board.MaxNoteContent)}
			notes = append(notes, n)
			s.notes[n.ID] = n.Content
		}
		message(mustMarshal(pushMsg{Type: "push", ID: msgID, Push: notePush(notes...)}), 3)
		s.pushes = append(s.pushes, msgID)
	}
	pong()
	id := prefix + "-last"
	message(pingJSON(id), 1)
	s.pings = append(s.pings, id)
	wsPing()
	return s
}

// rawLive is the client side of a live connection over plain TCP.
type rawLive struct {
	conn  *net.TCPConn
	br    *bufio.Reader
	pongs []string // the payloads of the server's pongs, in order
}

// serverClosed is the server's close frame.
type serverClosed struct{ code int }

func (c *serverClosed) Error() string { return fmt.Sprintf("closed by the server with %d", c.code) }

// rawDial upgrades a TCP connection to the live channel of board id.
func rawDial(addr, session, id string) (*rawLive, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	r := &rawLive{conn: c.(*net.TCPConn), br: bufio.NewReader(c)}
	req := "GET /api/boards/" + id + "/live HTTP/1.1\r\nHost: " + addr +
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " +
		base64.StdEncoding.EncodeToString(key) + "\r\nCookie: " + transport.SessionCookie + "=" + session + "\r\n\r\n"
	if err := r.write([]byte(req)); err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(liveWait))
	res, err := http.ReadResponse(r.br, nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, fmt.Errorf("upgrade: status %d", res.StatusCode)
	}
	m, err := r.next()
	if err != nil || m.Type != rooms.TypeHello {
		c.Close()
		return nil, fmt.Errorf("first message %+v (%v), want hello", m, err)
	}
	return r, nil
}

// rawConnect is rawDial for the test's goroutine; the connection is
// closed when the test ends.
func (e *env) rawConnect(tb testing.TB, session, id string) *rawLive {
	tb.Helper()
	r, err := rawDial(e.srv.Listener.Addr().String(), session, id)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.conn.Close() })
	return r
}

// The deadlines below only bound a failing test.

func (r *rawLive) write(p []byte) error {
	_ = r.conn.SetWriteDeadline(time.Now().Add(liveWait))
	_, err := r.conn.Write(p)
	return err
}

// writeSizes writes p in writes of the given sizes, each its own system
// call (Go's TCP connections send at once: TCP_NODELAY).
func (r *rawLive) writeSizes(p []byte, sizes []int) error {
	for _, n := range sizes {
		if err := r.write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	if len(p) > 0 {
		return r.write(p)
	}
	return nil
}

// frame reads one server frame.
func (r *rawLive) frame() (op byte, fin bool, payload []byte, err error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(liveWait))
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		return 0, false, nil, err
	}
	if h[1]&0x80 != 0 {
		return 0, false, nil, errors.New("the server masked a frame")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126, 127:
		ext := make([]byte, map[uint64]int{126: 2, 127: 8}[n])
		if _, err := io.ReadFull(r.br, ext); err != nil {
			return 0, false, nil, err
		}
		n = 0
		for _, b := range ext {
			n = n<<8 | uint64(b)
		}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r.br, payload); err != nil {
		return 0, false, nil, err
	}
	return h[0] & 0x0f, h[0]&0x80 != 0, payload, nil
}

// next reads the next server message, answering the server's pings; a
// *serverClosed error when the server closes.
func (r *rawLive) next() (liveMsg, error) {
	var msg []byte
	for {
		op, fin, payload, err := r.frame()
		if err != nil {
			return liveMsg{}, err
		}
		switch op {
		case opClose:
			code := 1005
			if len(payload) >= 2 {
				code = int(binary.BigEndian.Uint16(payload))
			}
			return liveMsg{}, &serverClosed{code}
		case opPing:
			if err := r.write(clientFrame(true, opPong, payload)); err != nil {
				return liveMsg{}, err
			}
		case opPong:
			r.pongs = append(r.pongs, string(payload))
		default:
			msg = append(msg, payload...)
			if fin {
				var m liveMsg
				err := json.Unmarshal(msg, &m)
				return m, err
			}
		}
	}
}

// answers reads until every push of pushes has been acked and every ping of
// pings ponged, each in order, with versions that increase; an error
// answer fails. Then a last ping's pong shows that nothing else was
// answered twice: it is queued behind everything the messages caused.
func (r *rawLive) answers(pushes, pings []string) error {
	ai, pi := 0, 0
	var last int64
	for ai < len(pushes) || pi < len(pings) {
		m, err := r.next()
		if err != nil {
			return fmt.Errorf("after %d acks and %d pongs: %w", ai, pi, err)
		}
		switch m.Type {
		case rooms.TypeAck:
			if ai >= len(pushes) || m.ID != pushes[ai] || m.ServerVersion <= last {
				return fmt.Errorf("ack %q at %d after version %d, want %v[%d]", m.ID, m.ServerVersion, last, pushes, ai)
			}
			last = m.ServerVersion
			ai++
		case "pong":
			if pi >= len(pings) || m.ID != pings[pi] {
				return fmt.Errorf("pong %q, want %v[%d]", m.ID, pings, pi)
			}
			pi++
		case rooms.TypeError:
			return fmt.Errorf("error answer %+v", m)
		}
	}
	end := fmt.Sprintf("end-%d", mrand.Int64())
	if err := r.write(clientFrame(true, opText, pingJSON(end))); err != nil {
		return err
	}
	for {
		m, err := r.next()
		if err != nil {
			return fmt.Errorf("waiting for pong %s: %w", end, err)
		}
		switch {
		case m.Type == "pong" && m.ID == end:
			return nil
		case m.Type == rooms.TypeAck || m.Type == "pong" || m.Type == rooms.TypeError:
			return fmt.Errorf("%+v after every answer", m)
		}
	}
}

// wantNotes fails unless board id holds every note of want with its
// content.
func (e *env) wantNotes(tb testing.TB, session, id string, want map[string]string) {
	tb.Helper()
	got := map[string]string{}
	for _, n := range e.pull(session, id, 0).Notes {
		got[n.ID] = n.Content
	}
	for nid, content := range want {
		if c, ok := got[nid]; !ok || c != content {
			tb.Errorf("note %s: stored %t (content %d bytes), want %d bytes", nid, ok, len(c), len(content))
		}
	}
}

// eventually waits for cond, failing with what after liveWait.
func eventually(tb testing.TB, what func() string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(liveWait)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %s: %s", liveWait, what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goroutineStacks is every goroutine's stack, one string each.
func goroutineStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// liveGoroutines counts the goroutines busy with a live connection: one
// reading (the poller's burst, or the library's Read), writing or closing.
// The poller's own goroutine and the keeper's are not counted.
func liveGoroutines() (n int, stacks []string) {
	for _, s := range goroutineStacks() {
		if strings.Contains(s, "transport.(*liveConn)") || strings.Contains(s, "transport.(*socketWriter)") ||
			strings.Contains(s, "transport.(*filterConn)") || strings.Contains(s, "github.com/coder/websocket") {
			n++
			stacks = append(stacks, s)
		}
	}
	return n, stacks
}

// keeperRuns reports whether the server's live keeper goroutine runs (it
// does while there are connections, and stops a tick after the last).
func keeperRuns() bool {
	for _, s := range goroutineStacks() {
		if strings.Contains(s, "transport.(*liveKeeper).run") {
			return true
		}
	}
	return false
}

// goroutineBaseline waits until no goroutine is busy with a live
// connection and the keeper runs as keeper says, and returns the number of
// goroutines then.
func goroutineBaseline(tb testing.TB, keeper bool) int {
	tb.Helper()
	eventually(tb, func() string {
		n, _ := liveGoroutines()
		return fmt.Sprintf("%d live goroutines, keeper %t", n, keeperRuns())
	},
		func() bool { n, _ := liveGoroutines(); return n == 0 && keeperRuns() == keeper })
	return runtime.NumGoroutine()
}

// waitGoroutines waits until the goroutines are back to baseline and none
// is busy with a live connection: every connection left is parked in the
// poller, holding no goroutine.
func waitGoroutines(tb testing.TB, baseline int) {
	tb.Helper()
	eventually(tb, func() string {
		n, stacks := liveGoroutines()
		return fmt.Sprintf("%d goroutines, baseline %d; %d busy with a live connection:\n%s",
			runtime.NumGoroutine(), baseline, n, strings.Join(stacks, "\n\n"))
	}, func() bool {
		n, _ := liveGoroutines()
		return n == 0 && runtime.NumGoroutine() <= baseline
	})
}

// streamWrites are the ways a test cuts a client's stream into writes.
func streamWrites(rng *mrand.Rand) []struct {
	name  string
	big   bool // whether the stream has the 90 KB push
	sizes func(n int) []int
} {
	return []struct {
		name  string
		big   bool
		sizes func(n int) []int
	}{
		{"OneByte", false, func(n int) []int {
			s := make([]int, n)
			for i := range s {
				s[i] = 1
			}
			return s
		}},
		{"Random", true, func(n int) []int {
			var s []int
			for n > 0 {
				k := min(n, 1+rng.IntN(1500))
				s = append(s, k)
				n -= k
			}
			return s
		}},
		{"Coalesced", true, func(n int) []int { return []int{n} }},
	}
}

// everyBoundary sends, for every byte boundary of a stream of two pings
// (the first in two fragments, with a pong between them when pongs), the
// bytes before it in one write and the rest in another, and wants both
// pongs each time.
func everyBoundary(r *rawLive, pongs bool) error {
	for k := 1; ; k++ {
		a, b := fmt.Sprintf("a%d", k), fmt.Sprintf("b%d", k)
		fs := textFrames(pingJSON(a), 2)
		var stream []byte
		stream = append(stream, fs[0]...)
		if pongs {
			stream = append(stream, clientFrame(true, opPong, []byte("between"))...)
		}
		stream = append(stream, fs[1]...)
		if pongs {
			stream = append(stream, clientFrame(true, opPong, nil)...)
		}
		stream = append(stream, clientFrame(true, opText, pingJSON(b))...)
		if k >= len(stream) {
			return nil
		}
		if err := r.writeSizes(stream, []int{k}); err != nil {
			return err
		}
		if err := r.answers(nil, []string{a, b}); err != nil {
			return fmt.Errorf("split at %d of %d: %w", k, len(stream), err)
		}
	}
}

func newRand(t *testing.T) *mrand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("random write sizes: seed %d", seed)
	return mrand.New(mrand.NewPCG(seed, 0))
}

// TestLivePollSplitAndCoalesced: however the client's frames fall into
// TCP writes (a byte at a time, at random sizes, all in one write, split
// at every byte boundary), fragmented or not, every push is acked once and
// in order, every ping ponged (the protocol's, and WebSocket pings between
// and after messages), and the board holds every push.
func TestLivePollSplitAndCoalesced(t *testing.T) {
	e := newPollEnv(t)
	owner := e.login("owner@example.com")
	for _, w := range streamWrites(newRand(t)) {
		t.Run(w.name, func(t *testing.T) {
			id := "split-" + strings.ToLower(w.name)
			e.claimAs(owner, id)
			r := e.rawConnect(t, owner, id)
			s := newLiveScript(id, w.big, false, true)
			if err := r.writeSizes(s.stream, w.sizes(len(s.stream))); err != nil {
				t.Fatal(err)
			}
			if err := r.answers(s.pushes, s.pings); err != nil {
				t.Fatal(err)
			}
			// The last ping came after the last message: answered by the
			// time the pong to answers' own ping message comes.
			if !slices.Equal(r.pongs, s.wsPings) {
				t.Fatalf("WebSocket pongs %q, want %q", r.pongs, s.wsPings)
			}
			e.wantNotes(t, owner, id, s.notes)
		})
	}
	t.Run("EveryBoundary", func(t *testing.T) {
		e.claimAs(owner, "split-every")
		if err := everyBoundary(e.rawConnect(t, owner, "split-every"), false); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLivePollPongsInterleaved: unsolicited client pongs before, between
// and in the same writes as data frames, and between the fragments of a
// message, take nothing away: every message is answered, the connection
// stays open, and once answered it holds no goroutine (a pong handed to
// the library would leave a goroutine blocked in its Read).
func TestLivePollPongsInterleaved(t *testing.T) {
	e := newPollEnv(t)
	owner := e.claim("owner@example.com", "pongs")
	// The keeper runs while there is a connection: this one keeps it
	// running through each baseline.
	keep := e.rawConnect(t, owner, "pongs")
	check := func(t *testing.T, baseline int, r *rawLive) {
		t.Helper()
		if n := e.hub.Conns(); n != 2 {
			t.Fatalf("%d connections, want 2", n)
		}
		if n := transport.LivePolledForTest(e.api); n != 2 {
			t.Fatalf("the poller holds %d connections, want 2", n)
		}
		waitGoroutines(t, baseline)
		// Still open, and answering after the wait.
		if err := r.answers(nil, nil); err != nil {
			t.Fatal(err)
		}
		r.conn.Close()
		waitConns(t, e.hub, 1)
	}
	for _, w := range streamWrites(newRand(t)) {
		t.Run(w.name, func(t *testing.T) {
			baseline := goroutineBaseline(t, true)
			r := e.rawConnect(t, owner, "pongs")
			s := newLiveScript("pongs-"+strings.ToLower(w.name), w.big, true, false)
			if err := r.writeSizes(s.stream, w.sizes(len(s.stream))); err != nil {
				t.Fatal(err)
			}
			if err := r.answers(s.pushes, s.pings); err != nil {
				t.Fatal(err)
			}
			e.wantNotes(t, owner, "pongs", s.notes)
			check(t, baseline, r)
		})
	}
	t.Run("EveryBoundary", func(t *testing.T) {
		baseline := goroutineBaseline(t, true)
		r := e.rawConnect(t, owner, "pongs")
		if err := everyBoundary(r, true); err != nil {
			t.Fatal(err)
		}
		check(t, baseline, r)
	})
	if err := keep.answers(nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestLivePollCloseRace: 200 connections push and close at the same
// moment, in every way a client ends (a close frame then waiting for the
// server's, a close frame then gone, a reset right after the push or in
// the middle of it, a close frame split across writes after a pong), while
// the poller has their events in flight. Then no connection is left
// anywhere (hub, rooms, poller), no goroutine is left over, a push that
// came before a close handshake is stored, and the server serves a new
// connection.
func TestLivePollCloseRace(t *testing.T) {
	e := newPollEnv(t)
	owner := e.login("owner@example.com")
	const boards, perBoard = 10, 20
	ids := make([]string, boards)
	for i := range ids {
		ids[i] = fmt.Sprintf("race%d", i)
		e.claimAs(owner, ids[i])
		// The rooms outlive their connections: started before the
		// baseline.
		e.rawConnect(t, owner, ids[i]).conn.Close()
	}
	waitConns(t, e.hub, 0)
	baseline := goroutineBaseline(t, false)

	addr := e.srv.Listener.Addr().String()
	clients := make([]*rawLive, boards*perBoard)
	for i := range clients {
		clients[i] = e.rawConnect(t, owner, ids[i%boards])
	}
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, r := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = closeRacer(r, i)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d (kind %d): %v", i, i%5, err)
		}
	}

	waitConns(t, e.hub, 0)
	for _, id := range ids {
		room, err := e.hub.Room(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, func() string { return fmt.Sprintf("room %s has %d subscribers", id, room.Subscribers()) },
			func() bool { return room.Subscribers() == 0 })
	}
	eventually(t, func() string {
		return fmt.Sprintf("the poller holds %d connections", transport.LivePolledForTest(e.api))
	},
		func() bool { return transport.LivePolledForTest(e.api) == 0 })
	waitGoroutines(t, baseline)

	// Pushes followed by a close handshake the client waited for were
	// read before the close, so stored.
	for i := 0; i < len(clients); i += 5 {
		id := ids[i%boards]
		e.wantNotes(t, owner, id, map[string]string{fmt.Sprintf("c%d", i): "raced"})
	}

	r, err := rawDial(addr, owner, ids[0])
	if err != nil {
		t.Fatalf("a new connection after the race: %v", err)
	}
	defer r.conn.Close()
	if err := r.write(clientFrame(true, opText, pushJSON("after", "after", "still serving"))); err != nil {
		t.Fatal(err)
	}
	if err := r.answers([]string{"after"}, nil); err != nil {
		t.Fatal(err)
	}
	e.wantNotes(t, owner, ids[0], map[string]string{"after": "still serving"})
}

// closeRacer is client i of TestLivePollCloseRace: it pushes note c<i>
// and ends its connection in one of five ways.
func closeRacer(r *rawLive, i int) error {
	push := pushJSON(fmt.Sprintf("c%d", i), fmt.Sprintf("c%d", i), "raced")
	one := clientFrame(true, opText, push)
	switch i % 5 {
	case 0: // push and close frame in one write, then the server's close
		if err := r.write(append(one, closeFrame()...)); err != nil {
			return err
		}
		for {
			_, err := r.next()
			var sc *serverClosed
			switch {
			case errors.As(err, &sc):
				if sc.code != 1000 {
					return err
				}
				return r.conn.Close()
			case errors.Is(err, io.EOF):
				return r.conn.Close()
			case err != nil:
				return fmt.Errorf("waiting for the server's close: %w", err)
			}
		}
	case 1: // push and close frame, then gone without waiting
		if err := r.write(append(one, closeFrame()...)); err != nil {
			return err
		}
		return r.conn.Close()
	case 2: // push, then a reset
		if err := r.write(one); err != nil {
			return err
		}
		_ = r.conn.SetLinger(0)
		return r.conn.Close()
	case 3: // half a push, then a reset
		if err := r.write(one[:len(one)/2]); err != nil {
			return err
		}
		_ = r.conn.SetLinger(0)
		return r.conn.Close()
	default: // a fragmented push with a pong inside, a close frame in two writes, then gone
		fs := textFrames(push, 2)
		cl := closeFrame()
		var b []byte
		b = append(b, fs[0]...)
		b = append(b, clientFrame(true, opPong, nil)...)
		b = append(b, fs[1]...)
		b = append(b, cl[:3]...)
		if err := r.writeSizes(append(b, cl[3:]...), []int{len(b)}); err != nil {
			return err
		}
		return r.conn.Close()
	}
}

// TestLivePollIdleThenBurst: connections that have gone idle (parked in
// the poller: no goroutine among them) all push at the same moment; every
// push is acked and stored, and the connections park again.
func TestLivePollIdleThenBurst(t *testing.T) {
	e := newPollEnv(t)
	owner := e.login("owner@example.com")
	const boards, perBoard = 5, 10
	var clients []*rawLive
	ids := make([]string, boards)
	for i := range ids {
		ids[i] = fmt.Sprintf("burst%d", i)
		e.claimAs(owner, ids[i])
		// One connection per board before the baseline: the rooms and
		// the keeper run from then on.
		clients = append(clients, e.rawConnect(t, owner, ids[i]))
	}
	baseline := goroutineBaseline(t, true)
	for i := range boards * perBoard {
		clients = append(clients, e.rawConnect(t, owner, ids[i%boards]))
	}
	// Each reads what the others' joins queued for it, so that nothing
	// waits to be written.
	for _, r := range clients {
		if err := r.answers(nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := transport.LivePolledForTest(e.api); n != len(clients) {
		t.Fatalf("the poller holds %d connections, want %d", n, len(clients))
	}
	waitGoroutines(t, baseline)

	const pushes = 3
	errs := make([]error, len(clients))
	want := make([]map[string]string, boards)
	for i := range want {
		want[i] = map[string]string{}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, r := range clients {
		var stream []byte
		var msgIDs []string
		for j := range pushes {
			id := fmt.Sprintf("burst-%d-%d", i, j)
			stream = append(stream, clientFrame(true, opText, pushJSON(id, id, id))...)
			msgIDs = append(msgIDs, id)
			want[i%boards][id] = id
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if errs[i] = r.write(stream); errs[i] == nil {
				errs[i] = r.answers(msgIDs, nil)
			}
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	for i, id := range ids {
		e.wantNotes(t, owner, id, want[i])
	}
	waitGoroutines(t, baseline)
	if n := e.hub.Conns(); n != len(clients) {
		t.Fatalf("%d connections after the burst, want %d", n, len(clients))
	}
}
