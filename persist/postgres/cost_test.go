//go:build linux

package postgres_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"corkboard/changelog"
	"corkboard/persist/postgres"
	"corkboard/persist/postgres/pgtest"
	"corkboard/persist/storetest"
)

// BenchmarkApplyPushEditCost says where a push of BenchmarkApplyPushEdit
// spends, with and without baseVersion: CPU per push in this process (the
// client: pgx, the store, the merge, and the benchmark's own bookkeeping)
// and in the database's backends (from /proc/<pid>/schedstat, so only
// when the server is local and readable: else that metric is absent),
// and, through a counting proxy in front of the server, what goes over
// the wire per push: bytes each way, the statements executed and the
// round trips (a Sync or a simple Query each answered by ReadyForQuery).
// Times here are CPU, not latency; the proxy's own CPU is counted in the
// client's in the wire runs, which report no CPU for that reason. The cpu
// runs push to one board at a time (as BenchmarkApplyPushEdit) or to 100
// at once (as BenchmarkApplyPushEdit100Boards; run those with -benchtime
// of a few dozen x).
func BenchmarkApplyPushEditCost(b *testing.B) {
	for _, bc := range []struct {
		name  string
		merge bool
	}{{"base=none", false}, {"base=previous", true}} {
		for _, boards := range []int{1, 100} {
			b.Run(fmt.Sprintf("cpu/boards=%d/%s", boards, bc.name), func(b *testing.B) {
				ids := storetest.BoardIDs(boards)
				db, _, _ := openSyncDB(b, ids...)
				eds := make([]*storetest.NoteEditor, boards)
				for i := range eds {
					eds[i] = storetest.NewNoteEditor()
				}
				round := func() {
					var wg sync.WaitGroup
					for i, id := range ids {
						wg.Go(func() {
							if err := eds[i].Push(db, id, bc.merge); err != nil {
								b.Error(err)
							}
						})
					}
					wg.Wait()
					if b.Failed() {
						b.FailNow()
					}
				}
				// Warm up: the pool's connections and their prepared
				// statements, and the first two pushes, which cannot merge.
				for range 20 {
					round()
				}
				pids := backendPIDs(b, db)
				srv0, srvOK := serverCPU(pids)
				cli0 := clientCPU()
				n := 0
				for b.Loop() {
					round()
					n += boards
				}
				cli := clientCPU() - cli0
				b.ReportMetric(float64(cli.Microseconds())/float64(n), "client-µs/push")
				if srv1, ok := serverCPU(pids); ok && srvOK {
					b.ReportMetric(float64((srv1-srv0).Microseconds())/float64(n), "server-µs/push")
				}
			})
		}
		b.Run("wire/"+bc.name, func(b *testing.B) {
			px := newWireCounter(b, pgtest.NewDatabase(b))
			db, err := postgres.Open(context.Background(), px.dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetNoteRenderer(changelog.RenderNote)
			if _, err := db.ClaimBoard(context.Background(), "b1", pgtest.Owner); err != nil {
				b.Fatal(err)
			}
			ed := storetest.NewNoteEditor()
			for range 20 {
				if err := ed.Push(db, "b1", bc.merge); err != nil {
					b.Fatal(err)
				}
			}
			before := px.snapshot()
			n := 0
			for b.Loop() {
				if err := ed.Push(db, "b1", bc.merge); err != nil {
					b.Fatal(err)
				}
				n++
			}
			d := px.snapshot().minus(before)
			per := func(v int64) float64 { return float64(v) / float64(n) }
			b.ReportMetric(per(d.sent), "sent-B/push")
			b.ReportMetric(per(d.received), "received-B/push")
			b.ReportMetric(per(d.executes+d.queries), "statements/push")
			b.ReportMetric(per(d.syncs+d.queries), "roundtrips/push")
		})
	}
}

// clientCPU is the CPU time this process has used, user and system.
func clientCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendPIDs lists the server processes of db's connections.
func backendPIDs(tb testing.TB, db *postgres.Store) []int {
	tb.Helper()
	var pids []int
	err := db.Pool().QueryRow(context.Background(), `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity
		WHERE datname = current_database()`).Scan(&pids)
	if err != nil {
		tb.Fatal(err)
	}
	return pids
}

// serverCPU sums the CPU time of the server processes pids (the first
// field of /proc/<pid>/schedstat, in nanoseconds); false when it cannot
// read one (a server on another machine).
func serverCPU(pids []int) (time.Duration, bool) {
	var sum time.Duration
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			return 0, false
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += time.Duration(ns)
	}
	return sum, len(pids) > 0
}

// wireCounter is a TCP proxy in front of the test server that counts what
// goes through it: bytes each way, and the client's Execute, Sync and
// Query messages (PostgreSQL's protocol, version 3).
type wireCounter struct {
	dsn string
	ln  net.Listener
	wg  sync.WaitGroup

	sent, received, executes, syncs, queries atomic.Int64
}

// wireCounts is a snapshot of a wireCounter's counts.
type wireCounts struct{ sent, received, executes, syncs, queries int64 }

func (c wireCounts) minus(o wireCounts) wireCounts {
	return wireCounts{c.sent - o.sent, c.received - o.received, c.executes - o.executes, c.syncs - o.syncs, c.queries - o.queries}
}

func (w *wireCounter) snapshot() wireCounts {
	return wireCounts{w.sent.Load(), w.received.Load(), w.executes.Load(), w.syncs.Load(), w.queries.Load()}
}

// newWireCounter starts a proxy to the server dsn names and returns it
// with dsn pointing at it; it stops when tb ends.
func newWireCounter(tb testing.TB, dsn string) *wireCounter {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		tb.Skipf("the wire counter needs a postgres:// URL with a host, not %q", dsn)
	}
	upstream := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	u.Host = ln.Addr().String()
	w := &wireCounter{dsn: u.String(), ln: ln}
	var mu sync.Mutex
	var conns []net.Conn
	w.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			w.wg.Go(func() { w.fromClient(c, s); s.Close() })
			w.wg.Go(func() { io.Copy(c, countingReader{s, &w.received}); c.Close() })
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		w.wg.Wait()
	})
	return w
}

// countingReader adds what it reads to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// fromClient forwards the client's messages one at a time, counting them:
// the startup message (length first, no type), then typed messages.
func (w *wireCounter) fromClient(c, s net.Conn) {
	r := bufio.NewReaderSize(c, 64<<10)
	var hdr [5]byte
	first := true
	for {
		var typ byte
		var n int
		if first {
			if _, err := io.ReadFull(r, hdr[:4]); err != nil {
				return
			}
			n = int(binary.BigEndian.Uint32(hdr[:4]))
			if _, err := s.Write(hdr[:4]); err != nil {
				return
			}
			first = false
		} else {
			if _, err := io.ReadFull(r, hdr[:5]); err != nil {
				return
			}
			typ, n = hdr[0], int(binary.BigEndian.Uint32(hdr[1:5]))
			if _, err := s.Write(hdr[:5]); err != nil {
				return
			}
			w.sent.Add(1)
		}
		switch typ {
		case 'E':
			w.executes.Add(1)
		case 'S':
			w.syncs.Add(1)
		case 'Q':
			w.queries.Add(1)
		}
		if _, err := io.CopyN(s, r, int64(n-4)); err != nil {
			return
		}
		w.sent.Add(int64(n))
	}
}
