//go:build unix

package transport_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"corkboard/transport"
)

// TestSocketWriterWritesStraightToTCP: on a unix TCP socket a message goes
// out in the sender's call, with no writer goroutine running (a message
// this small always fits in an empty socket buffer).
func TestSocketWriterWritesStraightToTCP(t *testing.T) {
	server, client := socketPair(t)
	if !transport.HasDirectWriteForTest(server) {
		t.Fatal("a TCP socket has no direct write")
	}
	w, _ := transport.NewSocketWriterForTest(server, 10)
	defer w.Stop()
	w.Start() // no Run: only a direct write can reach the peer
	if !w.Send(transport.TextFrameForTest([]byte("straight"))) {
		t.Fatal("Send refused a message")
	}
	if n, _ := w.Queue(); n != 0 {
		t.Fatalf("%d frames queued, want the message written at once", n)
	}
	if err := client.SetReadDeadline(time.Now().Add(socketWait)); err != nil {
		t.Fatal(err)
	}
	f, err := readFrame(bufio.NewReader(client))
	if err != nil || string(f.payload) != "straight" {
		t.Fatalf("got %q, err %v; want the message", f.payload, err)
	}
}

// TestNoDirectWriteWithoutDescriptor: a connection without a socket of its
// own (TLS would be one) takes the queued path.
func TestNoDirectWriteWithoutDescriptor(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	if transport.HasDirectWriteForTest(server) {
		t.Fatal("net.Pipe has a direct write")
	}
}
