// Command corkboard-sockbench compares socket engines for idle live
// connections in one run: Corkboard's two (internal/livesock: fast and
// plain) and nbio's WebSocket server (github.com/lesismal/nbio, built for
// goroutine-free idle connections), each in a server process of its own
// (this binary with -serve), alternating in rounds.
//
// For each engine it measures, from /proc/<pid> of the server:
//
//   - memory per idle connection: (RSS with -conns idle connections open
//     and settled − RSS before) / -conns;
//   - CPU per delivered message: the server's user+system time while it
//     sends -messages messages of -size bytes to every connection (one
//     goroutine looping over the connections, as a room's fan-out does)
//     and every client has read every message, divided by conns × messages.
//
// The clients are in this process: a hand-written WebSocket client per
// connection over plain TCP (docs/benchmarks.md, "Socket engines").
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strings"
	"time"
)

// serveEnv names the engine a server process serves: the parent starts
// itself with it (a flag would not do for a test binary).
const serveEnv = "CORKBOARD_SOCKBENCH_SERVE"

// Result is one engine's figures in one round.
type Result struct {
	Engine        string  `json:"engine"`
	Round         int     `json:"round"`
	Conns         int     `json:"conns"`
	RSSIdle       int64   `json:"rssIdleBytes"`
	RSSHeld       int64   `json:"rssHeldBytes"`
	BytesPerConn  float64 `json:"bytesPerConn"`
	Goroutines    int     `json:"goroutinesHeld"`
	Delivered     int64   `json:"delivered"`
	CPUSeconds    float64 `json:"cpuSeconds"`
	NanosPerMsg   float64 `json:"cpuNanosPerDelivered"`
	DeliverSecond float64 `json:"deliverSeconds"`
}

func main() {
	serve := flag.String("serve", "", "run a server of this engine (fast, plain, nbio, nbio-std) and take commands on stdin (internal)")
	engines := flag.String("engines", "fast,nbio,nbio-std,plain", "the engines to compare, in the order of each round (nbio-std: net/http upgrades, nbio takes the connection over)")
	conns := flag.Int("conns", 5000, "idle connections per engine")
	messages := flag.Int("messages", 40, "messages sent to every connection")
	size := flag.Int("size", 200, "bytes per message")
	rounds := flag.Int("rounds", 3, "rounds (each engine once per round, alternating)")
	settle := flag.Duration("settle", 2*time.Second, "wait before reading the RSS")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	heap := flag.String("heapprofile", "", "write each server's heap profile, with the connections held, to this prefix + engine + .pprof")
	flag.Parse()
	if e := os.Getenv(serveEnv); e != "" {
		*serve = e // a test binary started as a server
	}
	if *serve != "" {
		if err := runServer(*serve, os.Stdin, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	var all []Result
	for r := 1; r <= *rounds; r++ {
		for _, eng := range strings.Split(*engines, ",") {
			res, err := measure(eng, r, *conns, *messages, *size, *settle, *heap)
			if err != nil {
				log.Fatalf("%s, round %d: %v", eng, r, err)
			}
			all = append(all, res)
			if !*asJSON {
				fmt.Fprintf(os.Stderr, "round %d %-6s %6.0f B/conn  %5d goroutines  %6.0f ns CPU/message  (%d delivered in %.2fs)\n",
					r, eng, res.BytesPerConn, res.Goroutines, res.NanosPerMsg, res.Delivered, res.DeliverSecond)
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(all)
		return
	}
	printRatios(os.Stdout, all, strings.Split(*engines, ","))
}

// measure runs one engine's server and measures it.
func measure(engine string, round, conns, messages, size int, settle time.Duration, heap string) (Result, error) {
	res := Result{Engine: engine, Round: round, Conns: conns}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+engine)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	srv := &serverProc{pid: cmd.Process.Pid, in: stdin, out: bufio.NewReader(stdout)}
	addr, err := srv.line()
	if err != nil {
		return res, fmt.Errorf("server address: %w", err)
	}
	time.Sleep(settle)
	idle, err := readProc(srv.pid)
	if err != nil {
		return res, err
	}
	res.RSSIdle = idle.rss
	clients, err := dialAll(addr, conns, 50)
	if err != nil {
		return res, err
	}
	defer clients.close()
	time.Sleep(settle)
	held, err := readProc(srv.pid)
	if err != nil {
		return res, err
	}
	res.RSSHeld = held.rss
	res.BytesPerConn = float64(held.rss-idle.rss) / float64(conns)
	var n int
	if _, err := srv.ask("goroutines", &n); err != nil {
		return res, err
	}
	res.Goroutines = n
	if heap != "" {
		var ok string
		if _, err := srv.ask("heap "+heap+engine+".pprof", &ok); err != nil || ok != "ok" {
			return res, fmt.Errorf("heap profile: %s %v", ok, err)
		}
	}

	before, err := readProc(srv.pid)
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := srv.command(fmt.Sprintf("broadcast %d %d", messages, size)); err != nil {
		return res, err
	}
	want := int64(conns) * int64(messages)
	if err := clients.waitDelivered(want, 2*time.Minute); err != nil {
		return res, err
	}
	res.DeliverSecond = time.Since(start).Seconds()
	if _, err := srv.line(); err != nil { // the server's "sent"
		return res, err
	}
	after, err := readProc(srv.pid)
	if err != nil {
		return res, err
	}
	res.Delivered = clients.delivered.Load()
	res.CPUSeconds = (after.cpu - before.cpu).Seconds()
	res.NanosPerMsg = float64(after.cpu-before.cpu) / float64(want)
	return res, nil
}

// serverProc is the server process's end of the command pipe.
type serverProc struct {
	pid int
	in  io.Writer
	out *bufio.Reader
}

func (s *serverProc) command(c string) error {
	_, err := fmt.Fprintln(s.in, c)
	return err
}

func (s *serverProc) line() (string, error) {
	l, err := s.out.ReadString('\n')
	return strings.TrimSpace(l), err
}

// ask sends a command and scans its one-line answer into v.
func (s *serverProc) ask(c string, v any) (string, error) {
	if err := s.command(c); err != nil {
		return "", err
	}
	l, err := s.line()
	if err != nil {
		return "", err
	}
	_, err = fmt.Sscan(l, v)
	return l, err
}

// printRatios prints each engine's mean over the rounds and its ratio to
// the first engine's.
func printRatios(w io.Writer, all []Result, engines []string) {
	type sum struct {
		bytes, nanos float64
		gor, n       int
	}
	sums := map[string]*sum{}
	for _, r := range all {
		s := sums[r.Engine]
		if s == nil {
			s = &sum{}
			sums[r.Engine] = s
		}
		s.bytes += r.BytesPerConn
		s.nanos += r.NanosPerMsg
		s.gor += r.Goroutines
		s.n++
	}
	base := sums[engines[0]]
	fmt.Fprintf(w, "%-6s %12s %8s %14s %8s %12s\n", "engine", "B/idle conn", "ratio", "CPU ns/message", "ratio", "goroutines")
	for _, e := range engines {
		s := sums[e]
		if s == nil || s.n == 0 {
			continue
		}
		b, c := s.bytes/float64(s.n), s.nanos/float64(s.n)
		fmt.Fprintf(w, "%-6s %12.0f %8.2f %14.0f %8.2f %12d\n", e, b, b/(base.bytes/float64(base.n)), c, c/(base.nanos/float64(base.n)), s.gor/s.n)
	}
}
