package live

import (
	"bytes"
	"sync"
	"sync/atomic"

	"corkboard/internal/livesock"
	"corkboard/rooms"
	"corkboard/transport/livewire"
)

// liveSink is a live connection's rooms.ClosingSink: it hands the room's
// messages to the socket engine as prepared frames (framed once per
// message, rooms.Message.Wire, however many subscribers it goes to).
//
// Until start it holds them, so that hello and the catch-up (written by
// open through writeNow) go first; start sends those above the version
// the catch-up brought the client to, and from then on a changes message
// at or below it is not sent (a room's message read before the catch-up
// may arrive after it): the versions a client sees strictly increase.
type liveSink struct {
	// The fan-out's fields first, in one cache line: a message for a
	// thousand subscribers touches each subscriber's sink, and each line
	// more is a cache miss more per subscriber. started is set by start,
	// after floor; Send reads floor only then. conn is lc.conn, set once
	// the connection is accepted (before the subscriber exists).
	started atomic.Bool
	floor   int64
	conn    livesock.Conn

	lc  *liveConn
	max int // messages held at most, as the engine's queue

	mu      sync.Mutex // guards the fields below, and start
	held    []*rooms.Message
	dropped bool // the subscriber was closed before start
	stopped bool
}

func newLiveSink(lc *liveConn, max int) *liveSink { return &liveSink{lc: lc, max: max} }

// Send implements rooms.Sink: false when the client is too slow (the
// engine's queue, or before start the held messages, are full).
func (s *liveSink) Send(m *rooms.Message) bool {
	if !s.started.Load() {
		s.mu.Lock()
		if !s.started.Load() {
			defer s.mu.Unlock()
			if s.stopped {
				return true
			}
			if len(s.held) >= s.max {
				return false
			}
			s.held = append(s.held, m)
			return true
		}
		s.mu.Unlock()
	}
	if m.Version != 0 && m.Version <= s.floor {
		return true
	}
	if s.lc.link && m.Version == 0 && presenceMessage(m.Data) {
		return true // a read-only link is not told who is here
	}
	return s.conn.Send(m.Wire(livesock.TextFrame))
}

// SubscriberClosed implements rooms.ClosingSink: the room dropped the
// subscriber (or it left); the socket closes with the subscriber's code
// once the frame being written is finished. Before start, start does it.
func (s *liveSink) SubscriberClosed() {
	s.mu.Lock()
	if !s.started.Load() {
		s.dropped = true
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	code, reason := s.lc.sub.CloseStatus()
	s.lc.conn.Close(code, reason)
}

// writeNow writes frames before start, waiting for the socket (hello and
// the catch-up).
func (s *liveSink) writeNow(frames ...[]byte) error { return s.lc.conn.WriteNow(frames...) }

// startAbove ends the hold for a client that its hello and catch-up
// brought to version floor: the held messages above it are sent, then
// every later one; a drop that came meanwhile takes effect.
func (s *liveSink) startAbove(floor int64) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.floor = floor
	full := false
	for _, m := range s.held {
		if m.Version != 0 && m.Version <= floor {
			continue
		}
		if !full && !s.lc.conn.Send(m.Wire(livesock.TextFrame)) {
			full = true
		}
	}
	s.held = nil
	s.started.Store(true)
	dropped := s.dropped
	s.mu.Unlock()
	switch {
	case dropped:
		code, reason := s.lc.sub.CloseStatus()
		s.lc.conn.Close(code, reason)
	case full:
		// As the room does with a sink that refuses a message.
		s.lc.sub.Drop(livewire.CloseResync, "resync: pull and reconnect")
	}
}

// stop drops what is held; later messages are ignored.
func (s *liveSink) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.held = nil
}

// textFrame frames p as one text message, as the server sends it.
func textFrame(p []byte) []byte { return livesock.TextFrame(p) }

// dataFrame is one fragment of a text message (livesock.DataFrame).
func dataFrame(first, final bool, p []byte) []byte { return livesock.DataFrame(first, final, p) }

// presenceTypes are the room's messages about people (who is here, where
// they point and look, what they edit) that a read-only link's socket is
// not sent: its holder is nobody the board knows.
var presenceTypes = []string{"join", "leave", "pointer", "editing", "presence", "view", "follow", "summon", "who"}

// presenceMessage reports whether data, a room message (a JSON object
// whose first member is its type, as every livewire message is encoded),
// is one of presenceTypes.
func presenceMessage(data []byte) bool {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return false
	}
	rest := data[len(prefix):]
	for _, t := range presenceTypes {
		if len(rest) > len(t) && string(rest[:len(t)]) == t && rest[len(t)] == '"' {
			return true
		}
	}
	return false
}
