// Command corkboard runs the Corkboard service: the HTTP API, live sockets
// and its store (the embedded bbolt file, or PostgreSQL with -store), in
// one process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"corkboard/ai"
	"corkboard/aifeature"
	"corkboard/board"
	"corkboard/rooms"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "corkboard:", err)
		os.Exit(1)
	}
}

// subcommand reports whether args name the subcommand name, either first
// (corkboard plan -data X …) or after flags (corkboard -data X plan …),
// and returns the arguments for it: the flags before the word, then every
// argument after it. The flags before it are told apart from their values
// with the server's flag set, so "-data plan" is a folder named plan.
func subcommand(args []string, name string) ([]string, bool) {
	fs := newFlagSet(&Config{}, io.Discard)
	if fs.Parse(args) != nil || fs.NArg() == 0 || fs.Arg(0) != name {
		return nil, false
	}
	before := args[:len(args)-fs.NArg()]
	return append(slices.Clone(before), fs.Args()[1:]...), true
}

// run runs a subcommand (plan, migrate) or the service: it parses the
// configuration and runs a Main until ctx is done. When ready is non-nil it
// receives the listening address.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	return runMain(ctx, args, getenv, stdout, stderr, func(m *Main) { m.Ready = ready })
}

// runMain is run with a say over the Main before it opens (tests set its
// hooks through setup).
func runMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, setup func(*Main)) error {
	if planArgs, ok := subcommand(args, "plan"); ok {
		return planCommand(ctx, planArgs, getenv, stdout, stderr)
	}
	if migrateArgs, ok := subcommand(args, "migrate"); ok {
		return migrateCommand(ctx, migrateArgs, getenv, stdout, stderr)
	}
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	m := NewMain(cfg, newLogger(cfg, stdout))
	setup(m)
	defer m.Close()
	if err := m.Open(ctx); err != nil {
		return err
	}
	return m.Run(ctx)
}

// newHTTPServer is the HTTP server with every timeout set: a client cannot
// hold a connection open by sending slowly, reading slowly or idling.
func newHTTPServer(h http.Handler, baseCtx context.Context, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ReadHeaderTimeout: 10 * time.Second,
		// ReadTimeout bounds a whole request body: the largest push is 64 MiB.
		ReadTimeout: 2 * time.Minute,
		// WriteTimeout is per response; streams and sockets extend their own
		// deadlines with http.ResponseController.
		WriteTimeout:   2 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// checkModels logs in one line whether the AI model is there; it never
// blocks start-up, and the rest of the service works either way.
func checkModels(ctx context.Context, svc *ai.Service, url string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := svc.CheckModels(ctx); err != nil {
		log.Warn("AI features unavailable until Ollama has the model", "ollama", url, "err", board.ErrorMessage(err))
		return
	}
	log.Info("AI model ready", "ollama", url, "model", svc.Model(aifeature.Chat))
}

func newLogger(cfg *Config, w io.Writer) *slog.Logger {
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// pushBurst is how many pushes may come at once for a budget of rate a
// second: twice the rate, at least one.
func pushBurst(rate float64) int { return max(1, int(2*rate)) }

// roomsOptions tunes every room: the push budget of one connection.
func roomsOptions(pushRate float64) rooms.Options {
	return rooms.Options{PushRate: pushRate, PushBurst: pushBurst(pushRate)}
}
