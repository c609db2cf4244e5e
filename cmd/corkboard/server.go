package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"corkboard/ai"
	"corkboard/auth"
	"corkboard/billing"
	"corkboard/changelog"
	"corkboard/hub"
	"corkboard/internal/stagelog"
	"corkboard/metrics"
	"corkboard/ratelimit"
	"corkboard/transport"
)

// Main is the running service: Open opens everything in order, Run serves
// until the context ends or the listener fails, Close shuts down in the
// reverse order. It holds what is open so that Close, safe after a failed
// Open, closes exactly that.
type Main struct {
	// Config is the parsed configuration; Open reads it, nothing changes it.
	Config *Config
	// Log is the service's logger.
	Log *slog.Logger
	// Ready, when set, receives the API's listening address once Open has
	// it.
	Ready chan<- string
	// OnRequest, when set, is called with each request as it reaches the
	// API's handler, its line and headers read and before it is routed:
	// a test waits on it to know that a request is in flight.
	OnRequest func(*http.Request)

	metrics        *metrics.Metrics
	ai             *ai.Service
	db             closableStore
	where          string
	stopAdmin      func()
	closeBus       func()
	auth           *auth.Service
	hub            *hub.Hub
	snapshots      *changelog.Scheduler
	srv            *transport.Server
	httpSrv        *http.Server
	cancelRequests context.CancelFunc
	ln             net.Listener
	pprofSrv       *http.Server
	// stages, with -pprof, is the fan-out's stage log served beside the
	// profiles; stopStages ends its sampler.
	stages      *stagelog.Log
	stopStages  context.CancelFunc
	stopMetrics func()
	// served is set once Run has handed the listener to the HTTP server.
	served bool
}

// NewMain returns a Main for cfg, nothing opened yet.
func NewMain(cfg *Config, log *slog.Logger) *Main {
	return &Main{Config: cfg, Log: log}
}

// settings are what Open derives from the configuration before it opens
// anything, so that a bad value fails with nothing to close.
type settings struct {
	plans     billing.Plans
	verifier  billing.Verifier
	planMap   billing.PlanMap
	authRates auth.Config
	models    map[ai.Feature]string
}

// Open checks the configuration, then opens in order: the metrics
// collectors, storage, the plan admin socket, the node bus, auth, the hub,
// the snapshot scheduler, the HTTP server's listener, the profiler and the
// metrics listener. On an error, Close closes what was opened.
func (m *Main) Open(ctx context.Context) error {
	cfg := m.Config
	for _, w := range cfg.Warnings {
		m.Log.Warn(w)
	}
	// Configuration errors fail before anything is opened.
	set, err := checkSettings(cfg)
	if err != nil {
		return err
	}
	m.metrics = newMetrics(cfg, &m.hub)
	// A nil HTTP client keeps ai's short dial timeout and no overall
	// timeout: long answers stream for as long as -ai-timeout allows.
	m.ai, err = ai.New(ai.Config{OllamaURL: cfg.Ollama, Model: cfg.Model, Models: set.models, Timeout: cfg.AITimeout, NumCtx: cfg.AINumCtx, Logger: m.Log, OnUsage: aiUsage(m.metrics)}, nil)
	if err != nil {
		return fmt.Errorf("AI configuration: %w", err)
	}
	if m.db, m.where, err = openStore(ctx, cfg); err != nil {
		return err
	}
	if err := m.openServices(ctx, set); err != nil {
		return err
	}
	return m.openHTTP(ctx, set)
}

// checkSettings derives from cfg what takes parsing: plans, billing, the
// login limits and the AI models.
func checkSettings(cfg *Config) (*settings, error) {
	set := &settings{}
	var err error
	if set.plans, err = buildPlans(cfg.Plans, cfg.PlansFile); err != nil {
		return nil, err
	}
	if set.verifier, set.planMap, err = buildBilling(cfg.BillingProvider, cfg.BillingSecret, cfg.BillingPlanMap, cfg.BillingDefaultPlan); err != nil {
		return nil, err
	}
	for _, r := range []struct {
		flag, value string
		to          *ratelimit.Rate
	}{
		{"otp-email-limit", cfg.OTPEmailLimit, &set.authRates.EmailRate},
		{"otp-ip-limit", cfg.OTPIPLimit, &set.authRates.IPRate},
		{"otp-verify-ip-limit", cfg.VerifyIPLimit, &set.authRates.VerifyIPRate},
		{"otp-verify-email-limit", cfg.VerifyLimit, &set.authRates.VerifyEmailRate},
		{"otp-guess-limit", cfg.GuessLimit, &set.authRates.GuessRate},
		{"invite-limit", cfg.InviteLimit, &set.authRates.InviteRate},
	} {
		if *r.to, err = ratelimit.ParseRate(r.value); err != nil {
			return nil, fmt.Errorf("-%s: %w", r.flag, err)
		}
	}
	if set.models, err = buildModels(cfg.Models); err != nil {
		return nil, err
	}
	return set, nil
}

// openServices opens what runs beside the HTTP server, over the store: the
// plan admin socket, the node bus, auth, the hub and the snapshot
// scheduler.
func (m *Main) openServices(ctx context.Context, set *settings) error {
	cfg := m.Config
	// With PostgreSQL, this node is one of several: a bus joins it to the
	// others (nodes.go); with bbolt it is alone.
	links := &nodeLinks{}
	// The Meter caches plans: the admin socket tells it of the plans it
	// sets, and the other nodes through the bus.
	meter := billing.NewMeter(billing.MeterConfig{Store: m.db, Plans: set.plans, DefaultPlan: billing.Free, PlanCacheTTL: cfg.CacheTTL})
	if stop, err := servePlanAdmin(ctx, m.db, set.plans, announcing{local: meter, links: links}, filepath.Join(cfg.DataDir, AdminSocketName), m.Log); err != nil {
		m.Log.Warn("plan admin socket not available; stop the server to use 'corkboard plan'", "err", err)
	} else {
		m.stopAdmin = stop
	}

	mailer, err := auth.NewMailer(cfg.SMTP, cfg.MailFrom, filepath.Join(cfg.DataDir, "outbox"), m.Log)
	if err != nil {
		return fmt.Errorf("-smtp: %w", err)
	}
	var bus hub.Bus
	bus, m.closeBus = openBus(m.db, m.Log)

	authCfg := set.authRates
	authCfg.SessionEnded = links.sessionEnded
	authCfg.SessionMaxAge = cfg.SessionMaxAge
	authCfg.DefaultPlan = billing.Free
	authCfg.SessionCacheTTL = cfg.CacheTTL
	m.auth = auth.New(m.db, mailer, authCfg, m.Log)
	// Background work (mail sending, sweeps) outlives ctx so that shutdown
	// can drain it in order.
	m.auth.Start(context.WithoutCancel(ctx))

	hubOpts := hubOptions(cfg, m.metrics, bus, links, m.Log)
	if cfg.Pprof != "" {
		// Stage timing is for the one who profiles: the load tool reads it
		// from the profiler's listener (docs/benchmarks.md).
		m.stages = stagelog.New()
		var sctx context.Context
		sctx, m.stopStages = context.WithCancel(context.WithoutCancel(ctx))
		go m.stages.Run(sctx)
		hubOpts.Room.Stages = m.stages
	}
	m.hub = hub.New(m.db, hubOpts)
	links.set(m.hub, m.auth)
	if bus != nil {
		m.Log.Info("joined the other nodes on the store's bus", "node", m.hub.NodeID(), "poll", cfg.NodePoll)
	}

	history := changelog.New(m.db, changelog.Options{Keep: cfg.SnapshotKeep, MaxSnapshotBytes: cfg.SnapshotMaxBytes, SnapshotSlots: cfg.SnapshotSlots, Logger: m.Log})
	m.snapshots = changelog.NewScheduler(history, changelog.SchedulerOptions{Interval: cfg.SnapshotInterval, Logger: m.Log})
	m.snapshots.Start(context.WithoutCancel(ctx))

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
	m.srv = transport.New(transport.Config{
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
		DB:        m.db,
		Auth:      m.auth,
		Hub:       m.hub,
		Meter:     meter,
		Billing:   transport.Billing{Verifier: set.verifier, PlanMap: set.planMap},
		AI:        m.ai,
		Changelog: history,
		Announce:  links.announce,
	}, m.Log)
	links.setServer(m.srv)
	go checkModels(ctx, m.ai, cfg.Ollama, m.Log)
	return nil
}

// hubOptions are the hub's caps, budgets and node settings from cfg.
func hubOptions(cfg *Config, mt *metrics.Metrics, bus hub.Bus, links *nodeLinks, log *slog.Logger) hub.Options {
	return hub.Options{
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
		Room:                 observeRooms(roomsOptions(cfg.LivePushRate), mt),
		Logger:               log,
		Bus:                  bus,
		NodeID:               cfg.NodeID,
		PollEvery:            cfg.NodePoll,
		Lease:                hubLease(cfg.NodeLease),
		OnInvalidate:         links.invalidate,
	}
}

// openHTTP makes the HTTP server and opens its listener, the profiler's and
// the metrics', then reports the address on Ready.
func (m *Main) openHTTP(ctx context.Context, set *settings) error {
	cfg := m.Config
	// Requests run under baseCtx, cancelled when the shutdown grace is over
	// so long AI streams end instead of outliving the process's storage.
	baseCtx, cancel := context.WithCancel(context.Background())
	m.cancelRequests = cancel
	var h http.Handler = m.srv
	if m.OnRequest != nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.OnRequest(r)
			m.srv.ServeHTTP(w, r)
		})
	}
	m.httpSrv = newHTTPServer(h, baseCtx, m.Log)
	// Shutdown waits for in-flight requests; held long polls are answered
	// at once instead of holding it up to their wait.
	m.httpSrv.RegisterOnShutdown(m.srv.EndWaits)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	m.ln = ln
	// The profiler, when asked for, has a listener and a server of its own:
	// nothing of it is reachable through the API's address.
	if cfg.Pprof != "" {
		pln, err := listenPprof(cfg.Pprof)
		if err != nil {
			return err
		}
		m.pprofSrv = newPprofServer(m.Log, m.stages)
		m.Log.Info("pprof listening", "addr", pln.Addr().String())
		go func() {
			if err := m.pprofSrv.Serve(pln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.Log.Warn("pprof server stopped", "err", err)
			}
		}()
	}
	if m.metrics != nil {
		if m.stopMetrics, err = serveMetrics(cfg.MetricsAddr, m.metrics, m.srv.OpsHandler(), m.Log); err != nil {
			return err
		}
	}
	m.Log.Info("corkboard listening", "addr", ln.Addr().String(), "publicURL", cfg.PublicURL, "store", m.where)
	if m.Ready != nil {
		m.Ready <- ln.Addr().String()
	}
	return nil
}

// Run serves HTTP until ctx is done (then drains for -drain-delay) or the
// listener fails, whose error it returns. Close shuts down either way.
func (m *Main) Run(ctx context.Context) error {
	serveErr := make(chan error, 1)
	ln := m.ln
	m.ln, m.served = nil, true // Serve owns it now; Shutdown closes it
	go func() { serveErr <- m.httpSrv.Serve(ln) }()

	// A failed listener shuts down in the same order as a signal: rooms,
	// the scheduler and the mail senders must stop before storage closes.
	var failed error
	select {
	case err := <-serveErr:
		failed = fmt.Errorf("serve: %w", err)
		m.Log.Error("HTTP server stopped; shutting down", "err", err)
	case <-ctx.Done():
		m.Log.Info("shutting down")
		// Keep-alive connections close after their next answer, so that a
		// balancer reconnects (to another node) rather than reuses this one.
		drainFor(m.Config.DrainDelay, m.Log, func() { m.srv.Drain(); m.httpSrv.SetKeepAlivesEnabled(false) })
	}
	m.srv.Drain() // a failed listener drains too: the metrics listener's /readyz says so
	return failed
}

// Close shuts down what Open opened, in order: HTTP (in-flight requests
// finish while their rooms still run), the rooms and their sockets, the
// live socket engine, the snapshot scheduler, auth (drains queued mail), then the metrics
// listener, the profiler, the node bus, the admin socket and storage.
// Problems are logged: by then there is no one else to tell.
func (m *Main) Close() {
	shutCtx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownGrace)
	defer cancel()
	if m.ln != nil { // opened but never served
		m.ln.Close()
	}
	// HTTP first, so that in-flight pushes and pulls still reach their rooms
	// and finish. Shutdown does not wait for the live sockets (hijacked
	// connections); closing the rooms next tells each of them "going away".
	if m.httpSrv != nil {
		if err := m.httpSrv.Shutdown(shutCtx); err != nil {
			m.Log.Warn("HTTP shutdown did not finish in time; cancelling what is left", "err", err)
			m.cancelRequests()
			m.httpSrv.Close()
		}
	}
	if m.hub != nil {
		if err := m.hub.Close(shutCtx); err != nil {
			m.Log.Warn("rooms did not stop in time", "err", err)
		}
	}
	if m.srv != nil {
		// The live socket engine (its poller) stops after the hub said
		// goodbye on every live connection.
		if err := m.srv.Close(); err != nil {
			m.Log.Warn("live sockets did not stop", "err", err)
		}
	}
	if m.snapshots != nil {
		m.snapshots.Stop()
	}
	if m.auth != nil {
		if err := m.auth.Close(shutCtx); err != nil {
			m.Log.Warn("mail queue did not drain in time", "err", err)
		}
	}
	if m.served {
		m.Log.Info("stopped")
	}
	m.closeAfterStopped()
}

// closeAfterStopped closes what outlives the services: the metrics
// listener (its /readyz says "draining" until now), the profiler, the
// requests' base context, the node bus (after the hub said goodbye on it),
// the admin socket and storage.
func (m *Main) closeAfterStopped() {
	if m.stopMetrics != nil {
		m.stopMetrics()
	}
	if m.pprofSrv != nil {
		m.pprofSrv.Close()
	}
	if m.stopStages != nil {
		m.stopStages()
	}
	if m.cancelRequests != nil {
		m.cancelRequests()
	}
	if m.closeBus != nil {
		m.closeBus()
	}
	if m.stopAdmin != nil {
		m.stopAdmin()
	}
	if m.db != nil {
		if err := m.db.Close(); err != nil {
			m.Log.Error("close storage", "err", err)
		}
	}
}

// hubLease is -node-lease as hub.Options.Lease, where 0 means the default:
// the flag's 0 turns the lease off.
func hubLease(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
