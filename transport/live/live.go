// Package live is the live channel (docs/live-protocol.md): the WebSocket
// endpoint that joins a board's room, writes hello and the catch-up, and
// hands the client's messages (push, pointer, editing, ping) to the room
// within the connection's budgets; the sink that passes the room's messages
// to the socket engine (sink.go); and the keeper that pings every
// connection and watches its session (keeper.go). The sockets themselves
// are internal/livesock's, used through its seam. transport mounts the
// channel behind its session and board guard.
package live

import (
	"context"
	"corkboard/transport/livewire"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"corkboard/access"
	"corkboard/auth"
	"corkboard/board"
	"corkboard/hub"
	"corkboard/internal/livesock"
	"corkboard/persist"
	"corkboard/rooms"
	"corkboard/transport/jsondec"
	"corkboard/transport/pullstream"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// Live channel limits (docs/live-protocol.md).
const (
	// liveReadLimit bounds one client message. Pushes larger than this go
	// through POST /sync, which admits the spec's largest push; a socket
	// message is held in memory whole, and 64 MiB per connection would let
	// a few clients exhaust the server.
	liveReadLimit = 1 << 20
	// liveWriteTimeout bounds one wait for a client's socket to take what
	// is queued for it; a client that cannot is disconnected.
	liveWriteTimeout = 10 * time.Second
	// liveQueueSize is how many messages a connection may have waiting
	// for its socket before it is dropped with livewire.CloseResync.
	liveQueueSize = 256
	// livePingEvery and livePingTimeout detect dead peers that TCP has not
	// noticed yet.
	livePingEvery   = 30 * time.Second
	livePingTimeout = 15 * time.Second
	// maxLiveMsgID bounds the id a client gives a push.
	maxLiveMsgID = 128
)

// Sessions is what the channel asks of auth.Service: a watch on the
// session the socket was opened with, and the session's check on every
// push.
type Sessions interface {
	WatchSession(ctx context.Context, token string) (*auth.SessionWatch, error)
	Authenticate(ctx context.Context, token string) (email string, err error)
}

// Guard is the board guard every push passes again (access.Service).
type Guard interface {
	Guard(ctx context.Context, boardID, email string) (access.Access, error)
}

// Options configure a Channel.
type Options struct {
	// QueueSize is how many messages a connection may have waiting for its
	// socket before it is dropped with livewire.CloseResync; 0 is 256.
	QueueSize int
	// PublicURL is the origin browsers use; its host may open the channel
	// besides the request's own.
	PublicURL string
	// SpoolDir is the folder large catch-ups are spooled to
	// (pullstream.HeldAnswer).
	SpoolDir string
	// Now is the clock read-only links expire by (the access service's);
	// nil is time.Now.
	Now func() time.Time
}

// Deps are the services the channel calls.
type Deps struct {
	Log      *slog.Logger
	Sessions Sessions
	Hub      *hub.Hub
	Guard    Guard
	// Sockets is the socket engine; its owner closes it.
	Sockets *livesock.Engine
	// LargeReads bounds the catch-ups larger than 64 KiB sent at once.
	LargeReads *pullstream.Gate
}

// Channel serves the live channel's connections. Build it with New.
type Channel struct {
	opts       Options
	log        *slog.Logger
	sessions   Sessions
	hub        *hub.Hub
	guard      Guard
	sockets    *livesock.Engine
	largeReads *pullstream.Gate
	// keeper pings the connections and watches their sessions (keeper.go).
	keeper keeper
}

// New builds the channel.
func New(opts Options, deps Deps) *Channel {
	if opts.QueueSize <= 0 {
		opts.QueueSize = liveQueueSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	return &Channel{opts: opts, log: deps.Log, sessions: deps.Sessions, hub: deps.Hub, guard: deps.Guard, sockets: deps.Sockets, largeReads: deps.LargeReads}
}

// Request is what the HTTP layer learned of a live request before the
// channel takes it: the board guard's answer, the session cookie, and
// ?since (-1 when absent).
type Request struct {
	Access *access.Access
	Token  string
	Since  int64
	// Recheck, for a socket opened with a read-only link (Access.Link),
	// asks again whether the link works, once the socket has joined its
	// room: a revocation between the guard and the join (whose kick found
	// no socket yet) closes it then.
	Recheck func(ctx context.Context) error
}

// Serve is GET /api/boards/{boardId}/live, after the session, the board
// guard and the parsing of ?since: after a same-site Origin check, it
// upgrades to a WebSocket and joins the board's room. since N sends what
// the client missed after version N right after hello.
func (ch *Channel) Serve(w http.ResponseWriter, r *http.Request, req Request) {
	a, since, token := req.Access, req.Since, req.Token
	if !ch.originAllowed(r) {
		ch.writeError(w, r, board.Errorf(board.EFORBIDDEN, "Cross-site WebSocket refused."))
		return
	}
	// The socket lives as long as the session it was opened with: logout
	// or expiry ends the watch, and the socket is closed with 4001. A
	// read-only link's socket has no session: it lives until the link
	// expires (the keeper) or is revoked (a kick), closed with 4003.
	var watch *auth.SessionWatch
	if a.Link == nil {
		var err error
		if watch, err = ch.sessions.WatchSession(r.Context(), token); err != nil {
			ch.writeError(w, r, err)
			return
		}
	}
	// The caps are checked before the upgrade: a refused client gets a
	// plain 429 (or 503 at the server's cap) and costs no socket.
	lease, err := ch.hub.Admit(a.Board.ID, a.Email)
	if err != nil {
		watch.Stop()
		ch.writeError(w, r, err)
		return
	}
	// The connection's context holds the user only: the request's would
	// keep the request (and the board it was checked against) for the
	// connection's life, and must not end the connection once hijacked.
	// Ended cancels it, so that what waits for the connection's pushes
	// (a push slot, a commit's answer) ends with it.
	ctx, cancel := context.WithCancel(reqctx.WithEmail(context.Background(), a.Email))
	lc := &liveConn{ch: ch, boardID: a.Board.ID, email: a.Email, token: token, watch: watch, lease: lease, pushSlots: make(chan struct{}, maxPushesInFlight), ctx: ctx, cancel: cancel}
	if a.Link != nil {
		lc.link, lc.linkEnds = true, a.Link.ExpiresAt
	}
	lc.out = newLiveSink(lc, ch.opts.QueueSize)
	conn, err := ch.sockets.Accept(w, r, lc, livesock.Options{
		OriginPatterns: ch.originPatterns(),
		ReadLimit:      liveReadLimit,
		QueueSize:      ch.opts.QueueSize,
		WriteTimeout:   liveWriteTimeout,
	})
	if err != nil {
		// Accept has answered the request.
		ch.log.DebugContext(r.Context(), "websocket upgrade failed", slog.Any("err", err))
		watch.Stop()
		lease.Release()
		cancel()
		return
	}
	lc.conn = conn
	lc.out.conn = conn
	if !lc.open(ctx, since, a.CanEdit, a.Role) {
		return // closed: the engine calls Ended
	}
	if req.Recheck != nil {
		if err := req.Recheck(ctx); board.ErrorCode(err) == board.EUNAUTHORIZED {
			lc.sub.Drop(livewire.CloseForbidden, "the read-only link no longer works")
		} else if err != nil {
			// Storage failed: not a verdict on the link; the client retries.
			ch.log.ErrorContext(ctx, "live: check the read-only link again", slog.String("board", lc.boardID), slog.Any("err", err))
			lc.sub.Drop(int(websocket.StatusInternalError), "could not check the link: reconnect")
		}
	}
	// The handler returns and net/http lets go of the request, its buffers
	// and its goroutine's stack. With the fast engine an idle connection
	// then keeps no goroutine at all; with the plain one it keeps its
	// reader (docs/architecture.md, "The socket engine").
	conn.Read()
}

// open joins the room and writes hello and the catch-up; false when the
// connection is to end (it has been closed, with the reason, and the
// engine calls Ended).
func (lc *liveConn) open(ctx context.Context, since int64, canEdit bool, role string) bool {
	ch, conn, out := lc.ch, lc.conn, lc.out
	connID := newConnID()
	subscribe := lc.lease.Subscribe
	if lc.link {
		subscribe = lc.lease.SubscribeHidden // no presence of its own
	}
	sub, welcome, err := subscribe(ctx, connID, out)
	if err != nil {
		code := websocket.StatusInternalError
		if board.ErrorCode(err) == board.EUNAVAILABLE {
			code = websocket.StatusGoingAway
		} else {
			ch.log.ErrorContext(ctx, "live subscribe failed", slog.String("board", lc.boardID), slog.Any("err", err))
		}
		conn.Close(int(code), board.ErrorMessage(err))
		return false
	}
	lc.sub = sub
	if lc.overBudget.Load() {
		// WebSocket pings that came with the upgrade spent the budget:
		// nothing more is read, not even during the close handshake.
		conn.StopReading(livewire.CloseTooManyMessages, tooManyMessages)
		conn.Close(livewire.CloseTooManyMessages, tooManyMessages)
		return false
	}
	// From here the keeper pings the peer and watches the session (a
	// logout ends the socket with 4001).
	ch.keeper.add(lc)
	hello := livewire.Hello{
		Type:          livewire.TypeHello,
		ServerVersion: welcome.ServerVersion,
		You:           livewire.You{Presence: livewire.Presence{ID: connID, Email: lc.email, Color: sub.Color()}, CanEdit: canEdit, Role: role},
		Present:       welcome.Present,
		PresentCount:  welcome.PresentCount,
		PresentMore:   welcome.PresentMore,
	}
	if lc.link {
		// A link's holder is nobody the board knows: it is not told who
		// is here (addresses), as the sink holds back presence after.
		hello.Present = []livewire.Presence{}
	}
	// hello and the catch-up are written while the writer holds the room's
	// messages back, so they come first; changes queued meanwhile follow,
	// and the client skips those at or below the catch-up's serverVersion.
	//
	// since 0 is a full sync, which a board still at version 0 answers too
	// (its header and empty lists), as GET /sync?since=0 does. The catch-up
	// is read before hello is written: with several nodes the room's
	// version may lag the store's (a client that pushed on another node
	// comes back with a since above it), and hello must never say a version
	// below what the catch-up brings or below the client's own.
	//
	// The catch-up is streamed from the store (catchup.go): hello goes
	// when the catch-up's header is known and its first bytes are about
	// to leave, the catch-up follows as one text message, in fragments
	// when it is larger than pullstream.LargeReadBuffer, which then takes
	// a slot of the large-read gate first (refused: an error message and
	// close code 1013, as docs/live-protocol.md says).
	floor := hello.ServerVersion
	if since == 0 || (since > 0 && since != welcome.ServerVersion) {
		cu := &catchUp{lc: lc, hello: &hello}
		v, changed, err := sub.PullTo(ctx, since, cu.part(since))
		if err == nil && !changed {
			hello.ServerVersion = max(hello.ServerVersion, v)
			if err := out.writeNow(textFrame(mustJSON(hello))); err != nil {
				conn.CloseNow()
				return false
			}
		} else if err == nil {
			err = cu.finish()
		}
		defer cu.release()
		if err != nil {
			if cu.out.Started() {
				// Part of the catch-up has left; the socket cannot carry
				// another message before its end.
				conn.Close(int(websocket.StatusInternalError), "catch-up failed: pull and reconnect")
				return false
			}
			_ = out.writeNow(textFrame(mustJSON(hello)))
			// The writer still holds queued messages back: written now.
			_ = out.writeNow(textFrame(lc.errorMessage(ctx, "", err)))
			if c := board.ErrorCode(err); c == board.ERATELIMIT || c == board.EUNAVAILABLE {
				conn.Close(int(websocket.StatusTryAgainLater), "too many large reads at once: reconnect later")
			} else {
				conn.Close(int(websocket.StatusInternalError), "catch-up failed: pull and reconnect")
			}
			return false
		}
		floor = max(hello.ServerVersion, v)
	} else if err := out.writeNow(textFrame(mustJSON(hello))); err != nil {
		conn.CloseNow()
		return false
	}
	// The client is at hello's version, or its catch-up's: room messages
	// at or below it are not sent.
	if since > 0 {
		floor = max(floor, since)
	}
	out.startAbove(floor)
	return true
}

// Ended implements livesock.Handler: the connection is over. The
// subscriber leaves, and the lease, the session watch and the keeper's
// entry are let go; only the first call does anything.
func (lc *liveConn) Ended() {
	if !lc.finished.CompareAndSwap(false, true) {
		return
	}
	lc.out.stop()
	lc.ch.keeper.remove(lc)
	if lc.sub != nil {
		lc.sub.Leave()
	}
	lc.watch.Stop() // nil-safe: a link's socket has none
	lc.lease.Release()
	lc.cancel()
}

// originPatterns are the hosts (besides the request's own) whose pages
// may open the live channel: the public URL's.
func (ch *Channel) originPatterns() []string {
	if u, err := url.Parse(ch.opts.PublicURL); err == nil && u.Host != "" {
		return []string{u.Host}
	}
	return nil
}

// originAllowed refuses a WebSocket opened by a page of another site:
// browsers send the cookie with it (SameSite does not cover every case of a
// cross-site WebSocket), so the Origin must be this host or the public URL'ch.
// Clients that are not browsers send no Origin and are let through.
func (ch *Channel) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, h := range ch.originPatterns() {
		if strings.EqualFold(u.Host, h) {
			return true
		}
	}
	return false
}

func newConnID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("live: encode message: " + err.Error())
	}
	return b
}

// liveConn is one live connection, the livesock.Handler of its socket:
// the engine reads its messages and hands them over (Message); what the
// room sends goes through its liveSink; the channel's keeper pings it
// and watches its session.
type liveConn struct {
	ch      *Channel
	conn    livesock.Conn
	out     *liveSink
	sub     *rooms.Subscriber
	boardID string
	email   string
	token   string // the session cookie the socket was opened with
	watch   *auth.SessionWatch
	lease   *hub.Lease
	// ctx is the connection's context for the messages it handles;
	// cancel ends it, when the connection ends.
	ctx      context.Context
	cancel   context.CancelFunc
	finished atomic.Bool

	// The keeper's, under its lock: the index in its list, when the next
	// ping is due, when the unanswered ping went out (zero: none), and
	// whether the end of the session was seen.
	keepIdx      int
	nextPing     time.Time
	pingSent     time.Time
	sessionEnded bool
	// ponged is set by the reader when a pong comes.
	ponged atomic.Bool
	// overBudget is set once the connection's messages went past its
	// budget or its person's; it is being closed with 4029.
	overBudget atomic.Bool
	// pushSlots bounds the connection's pushes taken by the room and not
	// yet answered (maxPushesInFlight): past it, the reader waits.
	pushSlots chan struct{}
	// link is set for a socket opened with a read-only link (watch is
	// then nil): it only watches. linkEnds is when the link expires.
	link     bool
	linkEnds time.Time
}

// tooManyMessages is the reason a connection past its message budget is
// closed with (livewire.CloseTooManyMessages).
const tooManyMessages = "too many messages"

// allowMessage spends one message of the connection's and its person's
// budgets (hub.Lease.AllowMessage); past either, it closes the connection
// with 4029, says so in the log once, and reports false: the message is
// not handled. Every message counts, whatever it is, answered or not, so
// that a flood of pings or invalid messages cannot make the server answer
// faster than the budget.
func (lc *liveConn) allowMessage() bool {
	if lc.overBudget.Load() {
		return false
	}
	err := lc.lease.AllowMessage()
	if err == nil {
		return true
	}
	if lc.overBudget.CompareAndSwap(false, true) {
		// Nothing more is read, and the engine closes the socket with
		// 4029; open does when this happened before it had the connection
		// (pings that came with the upgrade).
		if lc.conn != nil {
			lc.conn.StopReading(livewire.CloseTooManyMessages, tooManyMessages)
		}
		lc.ch.log.Warn("live connection closed: too many messages", slog.String("board", lc.boardID), slog.String("email", lc.email), slog.Int("code", livewire.CloseTooManyMessages), slog.String("budget", board.ErrorMessage(err)))
	}
	return false
}

// Control implements livesock.Handler: each WebSocket ping or pong frame
// costs a message of the budget (a ping makes the library write a pong);
// false drops the frame unanswered.
func (lc *liveConn) Control() bool { return lc.allowMessage() }

// Pong implements livesock.Handler: the peer is alive.
func (lc *liveConn) Pong() { lc.ponged.Store(true) }

// typePing and typePong are the application-level keepalive, an extension
// of the live protocol: browsers answer WebSocket pings without telling the
// page, so a page that wants to notice a dead connection sends a ping
// message and waits for the pong. The pong is queued behind everything
// already queued for the connection, so it also says the queue moves.
const (
	typePing = "ping"
	typePong = "pong"
)

// clientMessage is every message a client may send; Type says which
// fields apply.
type clientMessage struct {
	Type           string          `json:"type"`
	ID             string          `json:"id"`
	Push           json.RawMessage `json:"push"`
	IdempotencyKey string          `json:"idempotencyKey"`
	X              *float64        `json:"x"`
	Y              *float64        `json:"y"`
	NoteID         *string         `json:"noteId"`
	Zoom           *float64        `json:"zoom"`
	After          string          `json:"after"`
	Limit          *int            `json:"limit"`
}

// Message implements livesock.Handler: one client message, handled within
// the message budget.
func (lc *liveConn) Message(data []byte) {
	ctx := lc.ctx
	if !lc.allowMessage() {
		return
	}
	var m clientMessage
	if err := reqbody.DecodeBytes(data, clientMessageShape.Into(&m)); err != nil {
		lc.sendError(ctx, "", err)
		return
	}
	if lc.link && m.Type != typePing {
		// A read-only link watches: a push is refused as over REST, and
		// pointer, editing and the like are ignored (it has no presence).
		if m.Type == livewire.TypePush {
			lc.sendError(ctx, m.ID, access.ErrLinkViewOnly())
		}
		return
	}
	switch m.Type {
	case livewire.TypePush:
		// The push's answer (an ack in version order, or an error) comes
		// later; the reader goes on to the next message meanwhile.
		lc.sendError(ctx, m.ID, lc.push(ctx, &m))
	case livewire.TypePointer:
		if m.X == nil || m.Y == nil {
			lc.sendError(ctx, m.ID, board.FieldErrorf("x", "A pointer message needs x and y."))
			return
		}
		lc.sendError(ctx, m.ID, lc.sub.Pointer(*m.X, *m.Y))
	case livewire.TypeEditing:
		if m.NoteID == nil {
			lc.sendError(ctx, m.ID, board.FieldErrorf("noteId", "An editing message needs noteId (\"\" when the editor closed)."))
			return
		}
		lc.sendError(ctx, m.ID, lc.sub.Editing(*m.NoteID))
	case typePing:
		if len(m.ID) > maxLiveMsgID {
			lc.sendError(ctx, "", board.FieldErrorf("id", "id must be at most %d characters.", maxLiveMsgID))
			return
		}
		pong, _ := json.Marshal(struct { // two strings: cannot fail
			Type string `json:"type"`
			ID   string `json:"id,omitempty"`
		}{typePong, m.ID})
		lc.sub.Enqueue(rooms.NewMessage(pong))
	case livewire.TypeActive, livewire.TypeWho, livewire.TypeView, livewire.TypeViewOnce, livewire.TypeFollow, livewire.TypeSummon:
		lc.sendError(ctx, "", lc.presence(ctx, &m))
	default:
		lc.sendError(ctx, m.ID, board.FieldErrorf("type", "type must be one of %s.", strings.Join(clientTypes, ", ")))
	}
}

// clientTypes are the message types a client may send.
var clientTypes = []string{livewire.TypePush, livewire.TypePointer, livewire.TypeEditing, typePing,
	livewire.TypeActive, livewire.TypeWho, livewire.TypeView, livewire.TypeViewOnce, livewire.TypeFollow, livewire.TypeSummon}

// presence handles who is here, following and summons
// (docs/live-protocol.md, "Who is here"); the room keeps the state.
func (lc *liveConn) presence(ctx context.Context, m *clientMessage) error {
	switch m.Type {
	case livewire.TypeActive:
		lc.sub.Active()
		return nil
	case livewire.TypeWho:
		limit := rooms.DefaultWhoLimit
		if m.Limit != nil {
			limit = *m.Limit
		}
		return lc.sub.Who(m.After, limit)
	case livewire.TypeFollow:
		return lc.sub.Follow(m.ID)
	case livewire.TypeViewOnce:
		return lc.sub.ViewOnce(m.ID)
	}
	// view and summon: a viewport.
	for _, f := range []struct {
		name string
		v    *float64
	}{{"x", m.X}, {"y", m.Y}, {"zoom", m.Zoom}} {
		if f.v == nil {
			return board.FieldErrorf(f.name, "A %s message needs x, y and zoom.", m.Type)
		}
	}
	if m.Type == livewire.TypeView {
		return lc.sub.View(*m.X, *m.Y, *m.Zoom)
	}
	// Only the board's owner brings everyone; asked again each time, as
	// a push asks, so a change of owner needs no reconnect.
	a, err := lc.ch.guard.Guard(ctx, lc.boardID, lc.email)
	if err != nil {
		return err
	}
	if !a.IsOwner {
		return &board.Error{Code: board.EFORBIDDEN, Field: "type", Message: "Only the board's owner can bring everyone to their view."}
	}
	return lc.sub.Summon(*m.X, *m.Y, *m.Zoom)
}

// push handles a push message: the same checks as POST /sync, in the same
// order; on success the room queues the ack.
func (lc *liveConn) push(ctx context.Context, m *clientMessage) error {
	if len(m.ID) > maxLiveMsgID {
		return board.FieldErrorf("id", "id must be at most %d characters.", maxLiveMsgID)
	}
	// The push budgets come first, so that a flood costs no storage reads.
	if err := lc.sub.AllowPush(); err != nil {
		return err
	}
	// The session and access are checked again on every push, as on REST:
	// a push is refused once the session has ended (even before the close
	// reaches the client), it counts as a use of the session, and a plan
	// change or a withdrawn invite takes effect without a reconnect.
	if _, err := lc.ch.sessions.Authenticate(ctx, lc.token); err != nil {
		return err
	}
	a, err := lc.ch.guard.Guard(ctx, lc.sub.Room().ID(), lc.email)
	if err != nil {
		return err
	}
	if err := a.RequireEdit(); err != nil {
		return err
	}
	if len(m.IdempotencyKey) > persist.MaxIdempotencyKeyLen || !reqbody.VisibleASCII(m.IdempotencyKey) {
		return board.FieldErrorf("idempotencyKey", "idempotencyKey must be at most %d visible ASCII characters.", persist.MaxIdempotencyKeyLen)
	}
	if len(m.Push) == 0 || string(m.Push) == "null" {
		return board.FieldErrorf("push", "push is required.")
	}
	var p board.Push
	if err := reqbody.DecodeBytes(m.Push, reqbody.PushShape.Into(&p)); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	p.Author = a.Author() // locks and roles: board.SettleRights
	// The room takes the push in the order the connection sent it, but
	// the connection does not wait for its commit: a slow fsync would hold
	// its next pushes (each then a commit of its own, one after the other:
	// issue 26's slow seconds) and its pings. At most maxPushesInFlight
	// wait for their answer; past that the reader waits, as it did for
	// every push before.
	select {
	case lc.pushSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	id := m.ID
	err = lc.sub.QueuePush(ctx, id, &p, m.IdempotencyKey, func(err error) {
		<-lc.pushSlots
		lc.sendError(ctx, id, err)
	})
	if err != nil {
		<-lc.pushSlots
	}
	return err
}

// maxPushesInFlight is how many of a connection's pushes may wait for
// their commit at once: a client that sends faster than the board commits
// is then read no faster than it commits.
const maxPushesInFlight = 32

// sendError queues an error answer; nil err sends nothing.
func (lc *liveConn) sendError(ctx context.Context, id string, err error) {
	if err == nil {
		return
	}
	if errors.Is(err, context.Canceled) {
		return // the connection is ending
	}
	lc.sub.Enqueue(rooms.NewMessage(lc.errorMessage(ctx, id, err)))
}

// errorMessage encodes the error answer to message id, with the status the
// same request would get over HTTP; internal errors are logged.
func (lc *liveConn) errorMessage(ctx context.Context, id string, err error) []byte {
	if board.ErrorCode(err) == board.EINTERNAL {
		lc.ch.log.ErrorContext(ctx, "live message failed", slog.String("board", lc.sub.Room().ID()), slog.Any("err", err))
	}
	msg := livewire.ErrorMessage{Type: livewire.TypeError, ID: id, Status: respond.ErrorStatus(err), Error: board.ErrorMessage(err)}
	var e *board.Error
	if errors.As(err, &e) {
		msg.Field, msg.Limit = e.Field, e.Limit
	}
	return mustJSON(msg)
}

// writeError answers a request the channel refused before the upgrade.
func (ch *Channel) writeError(w http.ResponseWriter, r *http.Request, err error) {
	respond.Error(ch.log, w, r, err)
}

// clientMessageShape is a live message; the push stays raw, to be decoded
// with pushShape once the message's id is known and access checked.
var clientMessageShape = jsondec.NewShape(jsondec.Refuse[clientMessage],
	jsondec.String("type", func(m *clientMessage) *string { return &m.Type }),
	jsondec.String("id", func(m *clientMessage) *string { return &m.ID }),
	jsondec.Raw("push", liveReadLimit, func(m *clientMessage) *json.RawMessage { return &m.Push }),
	jsondec.String("idempotencyKey", func(m *clientMessage) *string { return &m.IdempotencyKey }),
	jsondec.OptFloat64("x", func(m *clientMessage) **float64 { return &m.X }),
	jsondec.OptFloat64("y", func(m *clientMessage) **float64 { return &m.Y }),
	jsondec.OptString("noteId", func(m *clientMessage) **string { return &m.NoteID }),
	jsondec.OptFloat64("zoom", func(m *clientMessage) **float64 { return &m.Zoom }),
	jsondec.String("after", func(m *clientMessage) *string { return &m.After }),
	jsondec.Func("limit", func(d *jsondec.Decoder, m *clientMessage) error {
		var n int
		if err := d.Int(&n); err != nil {
			return err
		}
		m.Limit = &n
		return nil
	}),
)
