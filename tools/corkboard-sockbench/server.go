package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"

	"corkboard/internal/livesock"
)

// broadcaster is a server under test: it sends data to every connection it
// holds, from the calling goroutine, without waiting for any socket.
type broadcaster interface {
	broadcast(data []byte) (refused int)
	close()
}

// runServer is the server process: it serves engine on a loopback port,
// prints the address, then answers the commands it reads ("goroutines",
// "broadcast N SIZE") until its input ends.
func runServer(engine string, in io.Reader, out io.Writer) error {
	var b broadcaster
	var addr string
	var err error
	switch engine {
	case "fast", "plain":
		b, addr, err = serveLivesock(livesock.Kind(engine))
	case "nbio":
		b, addr, err = serveNbio()
	case "nbio-std":
		b, addr, err = serveNbioStd()
	default:
		err = fmt.Errorf("unknown engine %q", engine)
	}
	if err != nil {
		return err
	}
	defer b.close()
	fmt.Fprintln(out, addr)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "goroutines":
			fmt.Fprintln(out, runtime.NumGoroutine())
		case len(f) == 2 && f[0] == "heap":
			runtime.GC()
			fmt.Fprintln(out, writeHeap(f[1]))
		case len(f) == 3 && f[0] == "broadcast":
			n, _ := strconv.Atoi(f[1])
			size, _ := strconv.Atoi(f[2])
			refused := 0
			for i := range n {
				msg := fmt.Appendf(nil, "%08d", i)
				msg = append(msg, bytes.Repeat([]byte{'x'}, max(0, size-len(msg)))...)
				refused += b.broadcast(msg)
			}
			if refused > 0 {
				return fmt.Errorf("%s refused %d messages (a slow client)", engine, refused)
			}
			fmt.Fprintln(out, "sent")
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

// writeHeap writes a heap profile to file; "ok" or the error.
func writeHeap(file string) string {
	w, err := os.Create(file)
	if err == nil {
		err = pprof.WriteHeapProfile(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

// liveServer holds livesock connections.
type liveServer struct {
	engine *livesock.Engine
	srv    *http.Server
	mu     sync.Mutex
	conns  map[*liveConn]bool
}

// liveConn is a connection's handler: it reads nothing of interest.
type liveConn struct {
	s    *liveServer
	conn livesock.Conn
}

func (c *liveConn) Message([]byte) {}
func (c *liveConn) Control() bool  { return true }
func (c *liveConn) Pong()          {}
func (c *liveConn) Ended() {
	c.s.mu.Lock()
	delete(c.s.conns, c)
	c.s.mu.Unlock()
}

func serveLivesock(kind livesock.Kind) (broadcaster, string, error) {
	e, err := livesock.New(kind, slog.Default())
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	s := &liveServer{engine: e, conns: map[*liveConn]bool{}}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &liveConn{s: s}
		conn, err := e.Accept(w, r, c, livesock.Options{})
		if err != nil {
			return
		}
		c.conn = conn
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		conn.Read()
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, ln.Addr().String(), nil
}

// broadcast frames data once and hands the frame to every connection, as
// a room's fan-out does.
func (s *liveServer) broadcast(data []byte) int {
	frame := livesock.TextFrame(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	refused := 0
	for c := range s.conns {
		if !c.conn.Send(frame) {
			refused++
		}
	}
	return refused
}

func (s *liveServer) close() {
	_ = s.srv.Shutdown(context.Background())
	_ = s.engine.Close()
}

// nbioServer holds nbio connections.
type nbioServer struct {
	engine *nbhttp.Engine
	mu     sync.Mutex
	conns  map[*websocket.Conn]bool
}

func serveNbio() (broadcaster, string, error) {
	// nbio listens itself: a free port is found first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	// Its log goes to stdout by default, which is the command pipe here.
	logging.Output = os.Stderr
	s := &nbioServer{conns: map[*websocket.Conn]bool{}}
	up := s.upgrader()
	s.engine = nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{addr},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = up.Upgrade(w, r, nil)
		}),
	})
	if err := s.engine.Start(); err != nil {
		return nil, "", err
	}
	return s, addr, nil
}

// serveNbioStd is nbio as Corkboard would use it: net/http serves the
// upgrade (the router, the session, the board guard run before it), and
// nbio takes the connection over (UpgradeAndTransferConnToPoller: the
// descriptor is duplicated into nbio's poller, the std one closed).
func serveNbioStd() (broadcaster, string, error) {
	logging.Output = os.Stderr
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	s := &nbioServer{conns: map[*websocket.Conn]bool{}}
	s.engine = nbhttp.NewEngine(nbhttp.Config{})
	if err := s.engine.Start(); err != nil {
		return nil, "", err
	}
	up := s.upgrader()
	up.Engine = s.engine
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = up.UpgradeAndTransferConnToPoller(w, r, nil)
	})}
	go func() { _ = srv.Serve(ln) }()
	return s, ln.Addr().String(), nil
}

// upgrader keeps the server's list of connections.
func (s *nbioServer) upgrader() *websocket.Upgrader {
	up := websocket.NewUpgrader()
	up.OnOpen(func(c *websocket.Conn) {
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
	})
	up.OnClose(func(c *websocket.Conn, _ error) {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	})
	return up
}

// broadcast writes data to every connection (nbio frames it per
// connection and queues what a socket does not take).
func (s *nbioServer) broadcast(data []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	refused := 0
	for c := range s.conns {
		if c.WriteMessage(websocket.TextMessage, data) != nil {
			refused++
		}
	}
	return refused
}

func (s *nbioServer) close() { s.engine.Stop() }
