package live

import (
	"slices"
	"sync"
	"testing"

	"corkboard/internal/livesock"
	"corkboard/rooms"
)

// fakeSocket is a livesock.Conn that records what it is given.
type fakeSocket struct {
	mu     sync.Mutex
	frames []string // the payloads Send and WriteNow were given, in order
	max    int      // Send refuses past this many frames
	closed int      // the close code, 0 while open
}

var _ livesock.Conn = (*fakeSocket)(nil)

func (f *fakeSocket) record(frame []byte) {
	// The frames here are short: a two-byte header.
	f.frames = append(f.frames, string(frame[2:]))
}

func (f *fakeSocket) Send(frame []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.max > 0 && len(f.frames) >= f.max {
		return false
	}
	f.record(frame)
	return true
}

func (f *fakeSocket) WriteNow(frames ...[]byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fr := range frames {
		f.record(fr)
	}
	return nil
}

func (f *fakeSocket) Ping()                    {}
func (f *fakeSocket) Read()                    {}
func (f *fakeSocket) StopReading(int, string)  {}
func (f *fakeSocket) CloseNow()                {}
func (f *fakeSocket) Close(code int, _ string) { f.mu.Lock(); f.closed = code; f.mu.Unlock() }
func (f *fakeSocket) got() []string            { f.mu.Lock(); defer f.mu.Unlock(); return slices.Clone(f.frames) }

func newTestSink(sock *fakeSocket, max int) *liveSink {
	s := newLiveSink(&liveConn{conn: sock}, max)
	s.conn = sock
	return s
}

// TestLiveSinkHoldsUntilStart: messages the room sends before start wait
// for hello, which is written first.
func TestLiveSinkHoldsUntilStart(t *testing.T) {
	sock := &fakeSocket{}
	s := newTestSink(sock, 10)
	if !s.Send(rooms.NewMessage([]byte("change"))) {
		t.Fatal("Send refused a message before start")
	}
	if err := s.writeNow(textFrame([]byte("hello"))); err != nil {
		t.Fatal(err)
	}
	s.startAbove(0)
	if !s.Send(rooms.NewMessage([]byte("later"))) {
		t.Fatal("Send refused a message after start")
	}
	if got, want := sock.got(), []string{"hello", "change", "later"}; !slices.Equal(got, want) {
		t.Fatalf("frames %q, want %q", got, want)
	}
}

// TestLiveSinkDropsChangesTheClientHas: changes messages the room sent
// while the connection was being set up, and any later, that its catch-up
// already covered are not written, so the versions a client is sent
// strictly increase; other messages (presence) go as they are.
func TestLiveSinkDropsChangesTheClientHas(t *testing.T) {
	sock := &fakeSocket{}
	s := newTestSink(sock, 10)
	for _, m := range []*rooms.Message{
		rooms.NewChangesMessage([]byte("changes to 5"), 5),
		rooms.NewMessage([]byte("join")),
		rooms.NewChangesMessage([]byte("changes to 7"), 7),
		rooms.NewChangesMessage([]byte("changes to 8"), 8),
	} {
		if !s.Send(m) {
			t.Fatal("Send refused a message before start")
		}
	}
	if err := s.writeNow(textFrame([]byte("hello 7"))); err != nil {
		t.Fatal(err)
	}
	s.startAbove(7)
	if !s.Send(rooms.NewChangesMessage([]byte("changes to 6"), 6)) || !s.Send(rooms.NewChangesMessage([]byte("changes to 9"), 9)) {
		t.Fatal("Send refused a message after start")
	}
	if got, want := sock.got(), []string{"hello 7", "join", "changes to 8", "changes to 9"}; !slices.Equal(got, want) {
		t.Fatalf("frames %q, want %q", got, want)
	}
}

// TestLiveSinkHeldBound: before start the sink holds as many messages as
// the engine's queue would, and refuses the next (the room then drops the
// slow subscriber).
func TestLiveSinkHeldBound(t *testing.T) {
	s := newTestSink(&fakeSocket{}, 3)
	for i := range 3 {
		if !s.Send(rooms.NewMessage([]byte("m"))) {
			t.Fatalf("Send refused message %d of 3", i+1)
		}
	}
	if s.Send(rooms.NewMessage([]byte("m"))) {
		t.Fatal("Send took a fourth message with 3 held")
	}
}
