//go:build unix

package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg := Config{Out: os.Stdout}
	var admin, workload, backend string
	var keep bool
	var conv ConvergeConfig
	flag.StringVar(&workload, "workload", "pushes", "pushes: new notes from many pushers, checked against PostgreSQL; converge: clients editing a few notes together, checked for convergence and lost lines (docs/chaos.md)")
	flag.StringVar(&backend, "backend", "pg", "converge: pg (-nodes nodes on one fresh database) or bolt (one node on a bbolt file)")
	flag.IntVar(&conv.Live, "live", 4, "converge: live clients (WebSocket)")
	flag.IntVar(&conv.REST, "rest", 3, "converge: REST clients (push and pull)")
	flag.IntVar(&conv.Notes, "notes", 4, "converge: the notes the owner writes first, which stay (the clients create and delete a few more)")
	flag.StringVar(&conv.OverlapRule, "overlap", OverlapKeepBase, "converge: what a client does when the rebase of an unsent edit overlapped: none (the new row becomes the base; loses lines), log (writes the server row it overwrote to the changelog) or keep-base (pushes on the base it had before, so that the server finds the overlap: docs/web-client.md's rule)")
	flag.IntVar(&conv.Ops, "ops", 0, "converge: operations per client (0: until -duration is over)")
	flag.StringVar(&cfg.Corkboard, "corkboard", "", "the corkboard binary (default: built from the product module, when run inside the tools module)")
	flag.StringVar(&admin, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "an administrative PostgreSQL connection: the run creates a fresh database of its own there and drops it at the end")
	flag.BoolVar(&keep, "keep", false, "keep the database and the nodes' folders after the run")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "the seed of the fault schedule and the clients' choices (default: random, printed)")
	flag.IntVar(&cfg.Nodes, "nodes", 3, "corkboard nodes")
	flag.IntVar(&cfg.Boards, "boards", 3, "boards")
	flag.IntVar(&cfg.Pushers, "pushers", 30, "pushing clients (REST)")
	flag.IntVar(&cfg.Watchers, "watchers", 10, "live watchers (WebSocket)")
	flag.DurationVar(&cfg.Duration, "duration", 5*time.Minute, "how long clients push and faults go on")
	flag.DurationVar(&cfg.FaultEvery, "fault-every", 5*time.Second, "mean pause between faults (converge: between kill -9s; 0 for none)")
	flag.DurationVar(&cfg.StopMin, "stop-min", 10*time.Second, "shortest SIGSTOP")
	flag.DurationVar(&cfg.StopMax, "stop-max", 15*time.Second, "longest SIGSTOP")
	flag.BoolVar(&cfg.PGRestart, "pg-restart", false, "restart PostgreSQL too (pg_ctlcluster, needs root; affects everything else using that server)")
	flag.StringVar(&cfg.PGCluster, "pg-cluster", "15 main", "pg_ctlcluster's version and cluster name")
	flag.DurationVar(&cfg.NodePoll, "node-poll", 500*time.Millisecond, "the nodes' -node-poll")
	flag.DurationVar(&cfg.Converge, "converge", 60*time.Second, "bound on each wait after the faults (pushes in flight, clients catching up, a node starting)")
	flag.Parse()
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	if workload != "pushes" && workload != "converge" {
		fmt.Fprintf(os.Stderr, "corkboard-chaos: -workload %q: pushes or converge\n", workload)
		return 2
	}
	if workload == "converge" && backend != "pg" && backend != "bolt" {
		fmt.Fprintf(os.Stderr, "corkboard-chaos: -backend %q: pg or bolt\n", backend)
		return 2
	}
	if cfg.PGRestart && os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "corkboard-chaos: -pg-restart needs root (pg_ctlcluster)")
		return 2
	}
	if cfg.StopMax < cfg.StopMin {
		fmt.Fprintln(os.Stderr, "corkboard-chaos: -stop-max is below -stop-min")
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	work, err := os.MkdirTemp("", "corkboard-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-chaos:", err)
		return 2
	}
	cfg.Work = work
	if !keep {
		defer os.RemoveAll(work)
	}
	if cfg.Corkboard == "" {
		if cfg.Corkboard, err = buildCorkboard(ctx, work); err != nil {
			fmt.Fprintln(os.Stderr, "corkboard-chaos:", err)
			return 2
		}
	}
	if workload == "converge" {
		conv.Corkboard, conv.Work, conv.Seed, conv.Out = cfg.Corkboard, work, cfg.Seed, os.Stdout
		conv.Nodes, conv.Duration, conv.KillEvery = cfg.Nodes, cfg.Duration, cfg.FaultEvery
		conv.NodePoll, conv.Converge = cfg.NodePoll, cfg.Converge
		if backend == "pg" {
			dsn, drop, err := createDatabase(ctx, admin, fmt.Sprintf("corkboard_converge_%d", cfg.Seed%1_000_000_000))
			if err != nil {
				fmt.Fprintln(os.Stderr, "corkboard-chaos:", err)
				return 2
			}
			if keep {
				fmt.Printf("converge: database %s is kept\n", dsn)
			} else {
				defer drop()
			}
			conv.DSN = dsn
		}
		if keep {
			fmt.Printf("converge: folder %s is kept\n", work)
		}
		res, err := RunConverge(ctx, conv)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corkboard-chaos:", err)
			return 2
		}
		fmt.Println(res.Summary)
		fmt.Print(res.Details)
		if len(res.Violations) > 0 {
			fmt.Printf("converge: %d violations; replay the same choices with -seed %d\n", len(res.Violations), cfg.Seed)
			return 1
		}
		return 0
	}
	dsn, drop, err := createDatabase(ctx, admin, fmt.Sprintf("corkboard_chaos_%d", cfg.Seed%1_000_000_000))
	if err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-chaos:", err)
		return 2
	}
	if keep {
		fmt.Printf("chaos: database %s and folder %s are kept\n", dsn, work)
	} else {
		defer drop()
	}
	cfg.DSN = dsn
	res, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corkboard-chaos:", err)
		return 2
	}
	fmt.Print(res.Summary)
	if len(res.Violations) > 0 {
		return 1
	}
	return 0
}

// createDatabase creates the database name on the server of admin and
// returns its DSN and how to drop it.
func createDatabase(ctx context.Context, admin, name string) (string, func(), error) {
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connect %s: %w", admin, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", nil, fmt.Errorf("drop old %s: %w", name, err)
	}
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("parse %s: %w", admin, err)
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for try := 0; try < 20; try++ {
			c, err := pgx.Connect(ctx, admin)
			if err == nil {
				_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
				c.Close(ctx)
			}
			if err == nil || !strings.Contains(err.Error(), "connect") {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return u.String(), drop, nil
}
