// Package transport is Corkboard's HTTP surface: the chi router, middleware,
// JSON handlers, the WebSocket live channel and the AI streams.
package transport

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"corkboard/access"
	"corkboard/ai"
	"corkboard/auth"
	"corkboard/billing"
	"corkboard/changelog"
	"corkboard/hub"
	"corkboard/internal/cache"
	"corkboard/internal/livesock"
	"corkboard/persist"
	"corkboard/transport/aihttp"
	"corkboard/transport/compress"
	"corkboard/transport/live"
	"corkboard/transport/pullstream"
	"corkboard/transport/respond"
)

// Config holds what the HTTP layer needs to know about its deployment.
type Config struct {
	// PublicURL is the origin browsers use, e.g. http://localhost:8080; it is
	// the trusted origin of cross-origin checks.
	PublicURL string
	// TrustProxy makes the client IP come from X-Forwarded-For / X-Real-IP.
	TrustProxy bool
	// DefaultPlan is the plan of a user record that names none.
	DefaultPlan string
	// LiveQueueSize is how many messages a live connection may have waiting
	// for its socket before it is dropped; 0 is 256.
	LiveQueueSize int
	// LoginCodesInLog tells browsers that login codes are written to the
	// server log and the outbox folder (no SMTP server configured); it is
	// published by GET /api/config.
	LoginCodesInLog bool
	// BoardCacheSize bounds how many boards' access facts the board guard
	// keeps in memory (access.Options.CacheSize); 0 is 10,000.
	BoardCacheSize int
	// BoardCacheTTL is how long a cached board is trusted before it is
	// read again: the longest an invite removal or a phase change made on
	// another node can go unnoticed here. 0 is 5 seconds.
	BoardCacheTTL time.Duration
	// LargeReadsPerUser and LargeReads bound the pulls and live catch-ups
	// larger than 64 KiB sent at once, per person and in all; a read that
	// finds the server's slots taken waits up to LargeReadWait (pullstream.Gate).
	// 0 is 4, 16 and 5 seconds.
	LargeReadsPerUser int
	LargeReads        int
	LargeReadWait     time.Duration
	// SpoolDir is the folder large answers are spooled to while the store
	// reads them (pullstream.HeldAnswer); "" is the system's temporary folder. Call
	// ClearSpools on it before serving.
	SpoolDir string
	// LiveSockets picks the live channel's socket engine (livesock):
	// "" is fast on Linux for connections without TLS and plain elsewhere;
	// tests name one. Fast where there is none is plain, with a warning.
	LiveSockets livesock.Kind
}

// Server serves the API. Build it with New; it is an http.Handler.
type Server struct {
	cfg    Config
	log    *slog.Logger
	db     Store
	auth   *auth.Service
	hub    *hub.Hub
	router chi.Router
	app    http.Handler

	// changelog keeps the boards' changelogs and snapshots (changelog.go).
	changelog *changelog.Log

	largeBodies chan struct{}    // slots for bodies over 1 MiB (limitLargeBodies)
	largeReads  *pullstream.Gate // slots for answers over 64 KiB (pullstream.Gate)

	// meter decides plans, AI credits and canEdit (billing.Meter).
	meter *billing.Meter
	// guard and members are what a person may do to a board
	// (access.Service, over the board cache).
	guard   guard
	members memberships
	// links makes, lists and revokes read-only links and guards the
	// requests made with one (links.go).
	links links
	// announce tells the other nodes that a cached record changed here.
	announce func(cache.Kind, string)
	// The billing webhook and the AI rate limit (billing.go).
	billing billingState
	// polls ends held long polls at shutdown (longpoll.go).
	polls longPolls
	// draining makes /readyz answer 503 (ops.go).
	draining atomic.Bool
	// aiRoutes are the AI routes under /api/canvas.
	aiRoutes *aihttp.Routes
	// live is the live channel (GET /api/boards/{boardId}/live).
	live *live.Channel
	// sockets is the live channel's socket engine; Close stops it.
	sockets *livesock.Engine
}

// Store is the storage the HTTP layer reads and writes itself: boards and
// their collaborators, accounts, and billing events; plus what the Meter and
// the changelog built on it by default need. cmd/corkboard chooses the
// implementation.
type Store interface {
	persist.BoardStore
	persist.UserStore
	persist.BillingStore
	persist.Pinger
	billing.CreditStore
	changelog.Store
	persist.LinkStore
	persist.VoteStore
}

// Deps are the services the HTTP layer calls.
type Deps struct {
	DB   Store
	Auth *auth.Service
	// Hub runs the boards' rooms (sync and the live channel).
	Hub *hub.Hub
	// AI runs the model-backed features of /api/canvas; nil makes every AI
	// route answer 503.
	AI *ai.Service
	// Meter looks plans up, charges and refunds AI credits and answers
	// canEdit; nil builds one on DB from Plans, Config.DefaultPlan and Now.
	Meter *billing.Meter
	// Plans is the table of plans of the Meter New builds when Meter is
	// nil; the zero value means billing.DefaultPlans().
	Plans billing.Plans
	// Billing configures the payment webhook; without a Verifier it answers 503.
	Billing Billing
	// Now is the clock of the Meter New builds when Meter is nil, which is
	// the clock of the webhook's tolerance, the quota month and the AI rate
	// limit; nil is time.Now.
	Now func() time.Time
	// Changelog serves the changelog and snapshot endpoints; nil builds one
	// on DB with the default options.
	Changelog *changelog.Log
	// App serves the browser client for every GET outside /api/ that no
	// route matches; nil answers those with the JSON 404 too.
	App http.Handler
	// Announce tells the other nodes that a record this server changed
	// (a board's invitees or phases, a plan set by the webhook) is stale in
	// their caches; nil on a single node.
	Announce func(kind cache.Kind, key string)
}

// New builds the server and its routes.
func New(cfg Config, deps Deps, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, log: log, db: deps.DB, auth: deps.Auth, hub: deps.Hub, meter: deps.Meter, app: deps.App}
	s.sockets = newLiveEngine(cfg.LiveSockets, log)
	s.largeBodies = make(chan struct{}, maxLargeBodies)
	s.largeReads = pullstream.NewGate(cfg.LargeReadsPerUser, cfg.LargeReads, cfg.LargeReadWait)
	s.polls.draining = make(chan struct{})
	if s.meter == nil {
		s.meter = billing.NewMeter(billing.MeterConfig{Store: deps.DB, Plans: deps.Plans, DefaultPlan: cfg.DefaultPlan, Now: deps.Now})
	}
	if deps.DB != nil {
		svc := access.New(deps.DB, s.meter, access.Options{CacheSize: cfg.BoardCacheSize, CacheTTL: cfg.BoardCacheTTL, Now: deps.Now, Announce: deps.Announce, Links: deps.DB})
		s.guard, s.members, s.links = svc, svc, svc
	}
	s.live = live.New(live.Options{QueueSize: cfg.LiveQueueSize, PublicURL: cfg.PublicURL, SpoolDir: cfg.SpoolDir, Now: deps.Now},
		live.Deps{Log: log, Sessions: deps.Auth, Hub: deps.Hub, Guard: s.guard, Sockets: s.sockets, LargeReads: s.largeReads})
	s.aiRoutes = aihttp.New(aihttp.Deps{Log: log, AI: deps.AI, Credits: s.meter, Guard: s.guard})
	s.billing = billingState{webhook: deps.Billing}
	s.announce = deps.Announce
	if s.announce == nil {
		s.announce = func(cache.Kind, string) {}
	}
	s.changelog = deps.Changelog
	if s.changelog == nil && deps.DB != nil {
		s.changelog = changelog.New(deps.DB, changelog.Options{Logger: log})
	}
	s.router = s.routes()
	return s
}

// newLiveEngine is the socket engine of kind, or the default one where
// kind cannot be had.
func newLiveEngine(kind livesock.Kind, log *slog.Logger) *livesock.Engine {
	e, err := livesock.New(kind, log)
	if err != nil {
		log.Warn("live sockets: the engine asked for cannot be had; using the default", slog.String("engine", string(kind)), slog.Any("err", err))
		e, _ = livesock.New(livesock.Auto, log) // never fails
	}
	return e
}

// Close stops what the server runs besides its handlers: the live socket
// engine (its poller; connections it still holds are closed at once). Call
// it after the hub's Close, which says goodbye to every live connection.
// Safe to call twice.
func (s *Server) Close() error {
	return s.sockets.Close()
}

// ServeHTTP implements http.Handler. Every answer says nosniff: a browser
// must never read a JSON or Markdown body as HTML or script, whatever it
// holds (a note's text is the user's).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if s.serveOps(w, r) {
		return
	}
	s.router.ServeHTTP(w, r)
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	// logRequests is outermost so a recovered panic is logged with its 500.
	r.Use(s.logRequests, s.recoverPanics, s.crossOriginProtection())
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		// Outside /api/ is the browser client's (its files, and its own
		// routes for any other path); unknown API paths stay JSON.
		if s.app != nil && r.URL.Path != "/api" && !strings.HasPrefix(r.URL.Path, "/api/") {
			s.app.ServeHTTP(w, r)
			return
		}
		respond.JSON(w, http.StatusNotFound, respond.ErrorBody{Error: "No such endpoint."})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		respond.JSON(w, http.StatusMethodNotAllowed, respond.ErrorBody{Error: "Method not allowed on this endpoint."})
	})

	r.Route("/api", func(r chi.Router) {
		r.Use(compress.Answers)
		// Routes that need no session.
		s.registerClientConfigRoutes(r)
		s.registerAuthRoutes(r)
		s.registerWebhookRoutes(r)
		s.registerTimerRoutes(r) // GET /time needs no session; the board's timer does
		s.registerVoteRoutes(r)

		// Everything else needs a session.
		r.Group(func(r chi.Router) {
			r.Use(s.requireSession)
			s.registerBoardRoutes(r)
			// ROUTES: each feature adds one line here.
			s.aiRoutes.Register(r)
			s.registerChangelogRoutes(r)
			s.registerUsageRoutes(r)
			s.registerSyncRoutes(r)
			s.registerCanvasRoutes(r)
			s.registerLinkRoutes(r)
		})
	})
	return r
}

// Invalidate drops what the server holds about a record that changed
// elsewhere (another node, the plan admin socket): cache.Board in the
// access service, cache.Plan in the Meter, cache.Session in auth. A
// cross-node feed calls it with every change other nodes report.
func (s *Server) Invalidate(kind cache.Kind, key string) {
	switch kind {
	case cache.Board:
		if s.members != nil {
			s.members.Invalidate(kind, key)
		}
	case cache.Plan:
		s.meter.Invalidate(kind, key)
		// Another node changed the plan; this node tells its own sockets.
		s.PlanChanged(context.Background(), key)
	case cache.Session:
		if s.auth != nil {
			s.auth.Invalidate(kind, key)
		}
	}
}

// writeError answers err as JSON with its status (respond.Error, logged
// to the server's log).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	respond.Error(s.log, w, r, err)
}

// Defaults of the large-read gate (Config; pullstream.Gate).
const (
	DefaultLargeReadsPerUser = pullstream.DefaultLargeReadsPerUser
	DefaultLargeReads        = pullstream.DefaultLargeReads
	DefaultLargeReadWait     = pullstream.DefaultLargeReadWait
)

// ClearSpools removes the spool files a crash left in dir, and creates
// dir when it is missing (pullstream.ClearSpools). Call it at start-up,
// before serving, on the folder given as Config.SpoolDir.
func ClearSpools(dir string) error { return pullstream.ClearSpools(dir) }
