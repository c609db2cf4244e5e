package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// clientSet is the idle connections of one measurement: each has a
// goroutine here reading and counting the server's messages.
type clientSet struct {
	conns     []net.Conn
	delivered atomic.Int64
	failed    atomic.Int64
	wg        sync.WaitGroup
}

// dialAll opens n connections to addr, conc at a time.
func dialAll(addr string, n, conc int) (*clientSet, error) {
	s := &clientSet{conns: make([]net.Conn, n)}
	errs := make(chan error, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, br, err := dialOne(addr)
			if err != nil {
				errs <- err
				return
			}
			s.conns[i] = c
			s.wg.Go(func() { s.read(br) })
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// dialOne upgrades one TCP connection.
func dialOne(addr string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	req := "GET /live HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " +
		base64.StdEncoding.EncodeToString(key) + "\r\n\r\n"
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, nil, errors.New("upgrade: " + strconv.Itoa(res.StatusCode))
	}
	_ = c.SetDeadline(time.Time{})
	return c, br, nil
}

// read counts the data messages the server sends until the connection
// closes.
func (s *clientSet) read(br *bufio.Reader) {
	var h [10]byte
	for {
		if _, err := io.ReadFull(br, h[:2]); err != nil {
			return
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(br, h[2:4]); err != nil {
				return
			}
			n = uint64(h[2])<<8 | uint64(h[3])
		case 127:
			if _, err := io.ReadFull(br, h[2:10]); err != nil {
				return
			}
			n = 0
			for _, b := range h[2:10] {
				n = n<<8 | uint64(b)
			}
		}
		if _, err := br.Discard(int(n)); err != nil {
			return
		}
		if op := h[0] & 0x0f; op < 0x8 && h[0]&0x80 != 0 {
			s.delivered.Add(1)
		} else if op == 0x8 {
			s.failed.Add(1)
			return
		}
	}
}

// waitDelivered waits until want messages have been read.
func (s *clientSet) waitDelivered(want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for s.delivered.Load() < want {
		if s.failed.Load() > 0 {
			return fmt.Errorf("%d connections closed by the server", s.failed.Load())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d messages delivered after %s", s.delivered.Load(), want, limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

func (s *clientSet) close() {
	for _, c := range s.conns {
		if c != nil {
			c.Close()
		}
	}
	s.wg.Wait()
}

// procSample is what /proc says of a process.
type procSample struct {
	rss int64
	cpu time.Duration // user + system
}

// readProc reads the process's RSS (/proc/pid/status, VmRSS) and CPU time
// (/proc/pid/stat, utime + stime in clock ticks of 10 ms).
func readProc(pid int) (procSample, error) {
	var p procSample
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return p, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			p.rss = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return p, err
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line.
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) < 13 {
		return p, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(rest[11], 10, 64)
	st, _ := strconv.ParseInt(rest[12], 10, 64)
	p.cpu = time.Duration(ut+st) * 10 * time.Millisecond
	return p, nil
}
