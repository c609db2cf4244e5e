package transport_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
	"corkboard/transport"
	"corkboard/transport/livewire"
)

// TestLiveKeeperCutsDeadPeer: a client that answers no ping (it stops
// reading, as a dead peer would) is disconnected and its slot freed.
func TestLiveKeeperCutsDeadPeer(t *testing.T) {
	e := newEnv(t)
	transport.SetLivePingsForTest(e.api, 20*time.Millisecond, 30*time.Millisecond, 5*time.Millisecond)
	owner := e.claim("owner@example.com", "b1")
	e.connect(owner, "b1", "") // never read again: pings go unanswered
	waitConns(t, e.hub, 0)
	if transport.LivePingsSentForTest(e.api) == 0 {
		t.Fatal("disconnected without a ping")
	}
}

// TestLiveKeeperKeepsAnsweringPeer: a client that reads answers the pings;
// the keeper pings it again and again (it pings only once the previous
// ping was answered) and the connection stays usable.
func TestLiveKeeperKeepsAnsweringPeer(t *testing.T) {
	e := newEnv(t)
	// The pong timeout is far longer than any test: only a lost pong
	// could end the connection, and a lost pong stops the pings.
	transport.SetLivePingsForTest(e.api, 20*time.Millisecond, time.Hour, 5*time.Millisecond)
	owner := e.claim("owner@example.com", "b1")
	c, _ := e.connect(owner, "b1", "")
	msgs := make(chan liveMsg)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(msgs)
		for {
			// Reading answers the pings (coder/websocket replies within
			// Read); the context only bounds the test.
			ctx, cancel := context.WithTimeout(context.Background(), 4*liveWait)
			m, err := readMsg(ctx, c)
			cancel()
			if err != nil {
				return
			}
			select {
			case msgs <- m:
			case <-stop:
				return
			}
		}
	}()
	deadline := time.Now().Add(4 * liveWait)
	for transport.LivePingsSentForTest(e.api) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pings sent, want 5: the pongs were not seen", transport.LivePingsSentForTest(e.api))
		}
		time.Sleep(5 * time.Millisecond)
	}
	send(t, c, pushMsg{Type: "push", ID: "p1", Push: notePush(board.Note{ID: "n1"})})
	for m := range msgs {
		if m.Type == livewire.TypeAck {
			return
		}
	}
	t.Fatal("the connection ended before the ack")
}

// readMsg reads and decodes one message.
func readMsg(ctx context.Context, c *websocket.Conn) (liveMsg, error) {
	var m liveMsg
	_, data, err := c.Read(ctx)
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(data, &m)
}
