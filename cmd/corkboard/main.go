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
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"corkboard/ai"
	"corkboard/auth"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/changelog"
	"corkboard/hub"
	"corkboard/ratelimit"
	"corkboard/rooms"
	"corkboard/transport"
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

// run starts the service and blocks until ctx is done, then shuts down in
// order: HTTP (in-flight requests finish), rooms and sockets, storage. When
// ready is non-nil it receives the listening address.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
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
	log := newLogger(cfg, stdout)
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}

	// Configuration errors fail before anything is opened.
	plans, err := buildPlans(cfg.Plans, cfg.PlansFile)
	if err != nil {
		return err
	}
	verifier, planMap, err := buildBilling(cfg.BillingProvider, cfg.BillingSecret, cfg.BillingPlanMap, cfg.BillingDefaultPlan)
	if err != nil {
		return err
	}
	emailRate, err := ratelimit.ParseRate(cfg.OTPEmailLimit)
	if err != nil {
		return fmt.Errorf("-otp-email-limit: %w", err)
	}
	ipRate, err := ratelimit.ParseRate(cfg.OTPIPLimit)
	if err != nil {
		return fmt.Errorf("-otp-ip-limit: %w", err)
	}
	verifyIPRate, err := ratelimit.ParseRate(cfg.VerifyIPLimit)
	if err != nil {
		return fmt.Errorf("-otp-verify-ip-limit: %w", err)
	}
	verifyRate, err := ratelimit.ParseRate(cfg.VerifyLimit)
	if err != nil {
		return fmt.Errorf("-otp-verify-email-limit: %w", err)
	}
	guessRate, err := ratelimit.ParseRate(cfg.GuessLimit)
	if err != nil {
		return fmt.Errorf("-otp-guess-limit: %w", err)
	}
	models, err := buildModels(cfg.Models)
	if err != nil {
		return err
	}
	var roomHub *hub.Hub
	m := newMetrics(cfg, &roomHub)
	// A nil HTTP client keeps ai's short dial timeout and no overall
	// timeout: long answers stream for as long as -ai-timeout allows.
	aiSvc, err := ai.New(ai.Config{OllamaURL: cfg.Ollama, Model: cfg.Model, Models: models, Timeout: cfg.AITimeout, NumCtx: cfg.AINumCtx, Logger: log, OnUsage: aiUsage(m)}, nil)
	if err != nil {
		return fmt.Errorf("AI configuration: %w", err)
	}

	db, where, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Error("close storage", "err", err)
		}
	}()

	// With PostgreSQL, this node is one of several: a bus joins it to the
	// others (nodes.go); with bbolt it is alone.
	links := &nodeLinks{}

	// The Meter caches plans: the admin socket tells it of the plans it
	// sets, and the other nodes through the bus.
	meter := billing.NewMeter(billing.MeterConfig{Store: db, Plans: plans, DefaultPlan: billing.Free, PlanCacheTTL: cfg.CacheTTL})
	if stopAdmin, err := servePlanAdmin(ctx, db, plans, announcing{local: meter, links: links}, filepath.Join(cfg.DataDir, AdminSocketName), log); err != nil {
		log.Warn("plan admin socket not available; stop the server to use 'corkboard plan'", "err", err)
	} else {
		defer stopAdmin()
	}

	mailer, err := auth.NewMailer(cfg.SMTP, cfg.MailFrom, filepath.Join(cfg.DataDir, "outbox"), log)
	if err != nil {
		return fmt.Errorf("-smtp: %w", err)
	}
	bus, closeBus := openBus(db, log)
	defer closeBus()

	authSvc := auth.New(db, mailer, auth.Config{
		SessionEnded:    links.sessionEnded,
		SessionMaxAge:   cfg.SessionMaxAge,
		EmailRate:       emailRate,
		IPRate:          ipRate,
		VerifyIPRate:    verifyIPRate,
		VerifyEmailRate: verifyRate,
		GuessRate:       guessRate,
		DefaultPlan:     billing.Free,
		SessionCacheTTL: cfg.CacheTTL,
	}, log)
	// Background work (mail sending, sweeps) outlives ctx so that shutdown
	// can drain it in order.
	authSvc.Start(context.WithoutCancel(ctx))

	roomHub = hub.New(db, hub.Options{
		IdleTimeout:          cfg.RoomIdle,
		TombstoneRetention:   cfg.TombstoneRetention,
		MaxConnsPerUserBoard: cfg.LiveMaxPerBoard,
		MaxConnsPerUser:      cfg.LiveMaxPerUser,
		MaxConns:             cfg.LiveMax,
		MaxWaitsPerUser:      cfg.PollMaxPerUser,
		MaxWaits:             cfg.PollMax,
		UserPushRate:         cfg.LiveUserPush,
		UserPushBurst:        pushBurst(cfg.LiveUserPush),
		ConnMessageRate:      cfg.LiveMsgRate,
		ConnMessageBurst:     pushBurst(cfg.LiveMsgRate),
		UserMessageRate:      cfg.LiveUserMsgRate,
		UserMessageBurst:     pushBurst(cfg.LiveUserMsgRate),
		Room:                 observeRooms(roomsOptions(cfg.LivePushRate), m),
		Logger:               log,
		Bus:                  bus,
		NodeID:               cfg.NodeID,
		PollEvery:            cfg.NodePoll,
		OnInvalidate:         links.invalidate,
	})
	links.set(roomHub, authSvc)
	if bus != nil {
		log.Info("joined the other nodes on the store's bus", "node", roomHub.NodeID(), "poll", cfg.NodePoll)
	}

	history := changelog.New(db, changelog.Options{Keep: cfg.SnapshotKeep, MaxSnapshotBytes: cfg.SnapshotMaxBytes, SnapshotSlots: cfg.SnapshotSlots, Logger: log})
	snapshots := changelog.NewScheduler(history, changelog.SchedulerOptions{Interval: cfg.SnapshotInterval, Logger: log})
	snapshots.Start(context.WithoutCancel(ctx))

	app, err := webHandler(cfg.WebDir)
	if err != nil {
		return fmt.Errorf("web client: %w", err)
	}
	// Large answers wait in <data>/spool while the store reads them;
	// what a crash left there goes now.
	spoolDir := filepath.Join(cfg.DataDir, "spool")
	if err := transport.ClearSpools(spoolDir); err != nil {
		return err
	}
	srv := transport.New(transport.Config{
		PublicURL:       cfg.PublicURL,
		TrustProxy:      cfg.TrustProxy,
		DefaultPlan:     billing.Free,
		LoginCodesInLog: cfg.SMTP == "",
		BoardCacheTTL:   cfg.CacheTTL,
		// docs/sync.md, "Large reads".
		LargeReadsPerUser: cfg.LargeReadsPerUser,
		LargeReads:        cfg.LargeReads,
		LargeReadWait:     cfg.LargeReadWait,
		SpoolDir:          spoolDir,
	}, transport.Deps{
		App:       app,
		DB:        db,
		Auth:      authSvc,
		Hub:       roomHub,
		Meter:     meter,
		Billing:   transport.Billing{Verifier: verifier, PlanMap: planMap},
		AI:        aiSvc,
		Changelog: history,
		Announce:  links.announce,
	}, log)
	links.setServer(srv)
	go checkModels(ctx, aiSvc, cfg.Ollama, log)

	// Requests run under baseCtx, cancelled when the shutdown grace is over
	// so long AI streams end instead of outliving the process's storage.
	baseCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	httpSrv := newHTTPServer(srv, baseCtx, log)
	// Shutdown waits for in-flight requests; held long polls are answered
	// at once instead of holding it up to their wait.
	httpSrv.RegisterOnShutdown(srv.EndWaits)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// The profiler, when asked for, has a listener and a server of its own:
	// nothing of it is reachable through the API's address.
	if cfg.Pprof != "" {
		pln, err := listenPprof(cfg.Pprof)
		if err != nil {
			ln.Close()
			return err
		}
		pprofSrv := newPprofServer(log)
		log.Info("pprof listening", "addr", pln.Addr().String())
		go func() {
			if err := pprofSrv.Serve(pln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Warn("pprof server stopped", "err", err)
			}
		}()
		defer pprofSrv.Close()
	}
	if m != nil {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, m, srv.OpsHandler(), log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopMetrics()
	}
	log.Info("corkboard listening", "addr", ln.Addr().String(), "publicURL", cfg.PublicURL, "store", where)
	if ready != nil {
		ready <- ln.Addr().String()
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()

	// A failed listener shuts down in the same order as a signal: rooms,
	// the scheduler and the mail senders must stop before storage closes.
	var failed error
	select {
	case err := <-serveErr:
		failed = fmt.Errorf("serve: %w", err)
		log.Error("HTTP server stopped; shutting down", "err", err)
	case <-ctx.Done():
		log.Info("shutting down")
		// Keep-alive connections close after their next answer, so that a
		// balancer reconnects (to another node) rather than reuses this one.
		drainFor(cfg.DrainDelay, log, func() { srv.Drain(); httpSrv.SetKeepAlivesEnabled(false) })
	}
	srv.Drain() // a failed listener drains too: the metrics listener's /readyz says so
	shutCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	// HTTP first, so that in-flight pushes and pulls still reach their rooms
	// and finish. Shutdown does not wait for the live sockets (hijacked
	// connections); closing the rooms next tells each of them "going away".
	if err := httpSrv.Shutdown(shutCtx); err != nil {
		log.Warn("HTTP shutdown did not finish in time; cancelling what is left", "err", err)
		cancelRequests()
		httpSrv.Close()
	}
	if err := roomHub.Close(shutCtx); err != nil {
		log.Warn("rooms did not stop in time", "err", err)
	}
	snapshots.Stop()
	if err := authSvc.Close(shutCtx); err != nil {
		log.Warn("mail queue did not drain in time", "err", err)
	}
	log.Info("stopped")
	return failed
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
	log.Info("AI model ready", "ollama", url, "model", svc.Model(ai.FeatureChat))
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
