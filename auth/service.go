// Package auth is passwordless login: one-time codes sent by e-mail, and
// server-side sessions referenced by an opaque cookie token.
//
// Codes and sessions live in persist as hashes only; rate limits live in
// memory. A Service runs two kinds of background goroutines between Start
// and Close: mail senders fed by a bounded queue (so a request never waits
// for SMTP) and a sweeper that deletes expired codes and sessions.
package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"corkboard/internal/cache"
	"corkboard/persist"
	"corkboard/ratelimit"
)

// Config tunes the service. A zero field takes its default (see Defaults).
type Config struct {
	// CodeTTL is how long a one-time code is accepted. Default 10 minutes.
	CodeTTL time.Duration
	// MaxCodeAttempts is how many wrong tries void a code. Default 5.
	MaxCodeAttempts int
	// SessionIdle ends a session not used for this long. Default 15 days.
	SessionIdle time.Duration
	// SessionMaxAge ends a session this long after login, used or not, and
	// is the cookie's Max-Age. Default 90 days.
	SessionMaxAge time.Duration
	// LastSeenEvery is how stale a session's stored last use may get before
	// a request writes the new one. Default 1 hour.
	LastSeenEvery time.Duration
	// EmailRate limits send-otp per address. Default 5/15m.
	EmailRate ratelimit.Rate
	// IPRate limits send-otp per client IP (IPv6: per /64). Default 30/15m.
	IPRate ratelimit.Rate
	// VerifyIPRate limits verify-otp per client IP. Default 30/15m.
	VerifyIPRate ratelimit.Rate
	// VerifyEmailRate limits verify-otp per address and client network
	// (IPv6: per /64): what one network may try at one address. Another
	// network's attempts never spend it, so nobody can use up the
	// owner's. Default 10/1h.
	VerifyEmailRate ratelimit.Rate
	// GuessRate bounds the wrong guesses at one address from all networks
	// together: Count failed verifies since the last login, in a window of
	// Window that opens at the first. Past it the address is guarded: a
	// code is checked only from the network that asked for it, which has
	// not guessed wrong at the address in the window, and a wrong guess
	// voids the code. So the owner, who asks for a fresh code and enters
	// it, still logs in. Default 100/24h (docs/auth.md works out the bound).
	GuessRate ratelimit.Rate
	// InviteRate limits the invitations one board owner sends (each sends
	// an e-mail), over all their boards: the server must not be a way to
	// mail strangers in bulk. Default 30/1h (docs/auth.md, "Invitation
	// e-mails").
	InviteRate ratelimit.Rate
	// DefaultPlan is the plan of a user created at first login. Default "free".
	DefaultPlan string
	// MailQueue is how many messages may wait for a sender; past it new
	// ones are dropped and logged. Default 256.
	MailQueue int
	// MailWorkers is how many messages are sent at once. Default 2.
	MailWorkers int
	// MailTimeout bounds one send. Default 1 minute.
	MailTimeout time.Duration
	// SweepInterval is how often expired codes and sessions are deleted.
	// Default 10 minutes.
	SweepInterval time.Duration
	// MaxLimiterKeys bounds how many addresses or networks each rate
	// limiter remembers. Default 100,000.
	MaxLimiterKeys int
	// SessionCacheSize bounds how many live sessions are kept in memory
	// (session.go). Default 100,000.
	SessionCacheSize int
	// SessionCacheTTL is how long a cached session is trusted before it
	// is read again: the longest a logout made on another node can go
	// unnoticed here (docs/auth.md). Default 5 seconds.
	SessionCacheTTL time.Duration
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// SessionEnded, if set, is told the storage key of every session this
	// node ends (logout, expiry), after its own watches ended: with several
	// nodes it tells the others, which call EndSessionWatches.
	SessionEnded func(id []byte)
}

// Defaults returns the configuration every zero field of a Config falls back to.
func Defaults() Config {
	return Config{
		CodeTTL:         10 * time.Minute,
		MaxCodeAttempts: 5,
		SessionIdle:     15 * 24 * time.Hour,
		SessionMaxAge:   90 * 24 * time.Hour,
		LastSeenEvery:   time.Hour,
		EmailRate:       ratelimit.Rate{Count: 5, Window: 15 * time.Minute},
		IPRate:          ratelimit.Rate{Count: 30, Window: 15 * time.Minute},
		VerifyIPRate:    ratelimit.Rate{Count: 30, Window: 15 * time.Minute},
		VerifyEmailRate: ratelimit.Rate{Count: 10, Window: time.Hour},
		GuessRate:       ratelimit.Rate{Count: 100, Window: 24 * time.Hour},
		InviteRate:      ratelimit.Rate{Count: 30, Window: time.Hour},
		DefaultPlan:     "free",
		MailQueue:       256,
		MailWorkers:     2,
		MailTimeout:     time.Minute,
		SweepInterval:   10 * time.Minute,
		MaxLimiterKeys:  ratelimit.DefaultMaxKeys,

		SessionCacheSize: 100_000,
		SessionCacheTTL:  5 * time.Second,
	}
}

// withDefaults fills c's zero fields from Defaults.
func (c Config) withDefaults() Config {
	d := Defaults()
	fill := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	fillInt := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fillRate := func(v *ratelimit.Rate, def ratelimit.Rate) {
		if v.Count <= 0 || v.Window <= 0 {
			*v = def
		}
	}
	fill(&c.CodeTTL, d.CodeTTL)
	fillInt(&c.MaxCodeAttempts, d.MaxCodeAttempts)
	fill(&c.SessionIdle, d.SessionIdle)
	fill(&c.SessionMaxAge, d.SessionMaxAge)
	fill(&c.LastSeenEvery, d.LastSeenEvery)
	fillRate(&c.EmailRate, d.EmailRate)
	fillRate(&c.IPRate, d.IPRate)
	fillRate(&c.VerifyIPRate, d.VerifyIPRate)
	fillRate(&c.VerifyEmailRate, d.VerifyEmailRate)
	fillRate(&c.GuessRate, d.GuessRate)
	fillRate(&c.InviteRate, d.InviteRate)
	if c.DefaultPlan == "" {
		c.DefaultPlan = d.DefaultPlan
	}
	fillInt(&c.MailQueue, d.MailQueue)
	fillInt(&c.MailWorkers, d.MailWorkers)
	fill(&c.MailTimeout, d.MailTimeout)
	fill(&c.SweepInterval, d.SweepInterval)
	fillInt(&c.MaxLimiterKeys, d.MaxLimiterKeys)
	fillInt(&c.SessionCacheSize, d.SessionCacheSize)
	fill(&c.SessionCacheTTL, d.SessionCacheTTL)
	return c
}

// Store is the storage the service needs: one-time codes and the secret
// they are hashed with, sessions, and the account a first login creates.
type Store interface {
	persist.CodeStore
	persist.SessionStore
	// EnsureUser returns the user, creating it on plan when new (see
	// persist.UserStore).
	EnsureUser(ctx context.Context, email, plan string) (*persist.User, error)
}

// Service issues one-time codes and sessions. Build it with New, call Start
// to run its background senders and sweeper, and Close to stop them.
type Service struct {
	db     Store
	mailer Mailer
	cfg    Config
	log    *slog.Logger

	emailLimit       *ratelimit.Window
	ipLimit          *ratelimit.Window
	verifyLimit      *ratelimit.Window // per IP
	verifyEmailLimit *ratelimit.Window // per address and network
	guesses          *ratelimit.Budget // per address
	// netGuesses marks the networks that guessed wrong at an address
	// (one guess per address and network and window): past the address's
	// budget only a network without a mark may try the code it asked for.
	netGuesses *ratelimit.Budget
	// invites counts the invitations each owner sends (invite.go).
	invites *ratelimit.Window

	// watched are the sessions long-lived connections hang on (watch.go).
	watchMu sync.Mutex
	watched map[sessionID]map[*SessionWatch]struct{}
	// sessions are the live sessions recently presented (session.go).
	sessions *cache.Cache[sessionID, *cachedSession]

	queue     chan outgoing
	quit      chan struct{} // closed by Close
	startOnce sync.Once
	closeOnce sync.Once
	abort     context.CancelFunc
	wg        sync.WaitGroup
}

// outgoing is a mail (a login code, an invitation) waiting for a sender.
type outgoing struct {
	to, subject, body string
	// kind names the mail in logs: "" is a login code.
	kind string
}

// what names m in logs.
func (m outgoing) what() string {
	if m.kind == "" {
		return "login code mail"
	}
	return m.kind + " mail"
}

// New builds the service on db, sending codes through mailer.
func New(db Store, mailer Mailer, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	return &Service{
		db:               db,
		mailer:           mailer,
		cfg:              cfg,
		log:              log,
		emailLimit:       ratelimit.NewWindow(cfg.EmailRate, cfg.MaxLimiterKeys),
		ipLimit:          ratelimit.NewWindow(cfg.IPRate, cfg.MaxLimiterKeys),
		verifyLimit:      ratelimit.NewWindow(cfg.VerifyIPRate, cfg.MaxLimiterKeys),
		verifyEmailLimit: ratelimit.NewWindow(cfg.VerifyEmailRate, cfg.MaxLimiterKeys),
		guesses:          ratelimit.NewBudget(cfg.GuessRate, cfg.MaxLimiterKeys),
		netGuesses:       ratelimit.NewBudget(ratelimit.Rate{Count: 1, Window: cfg.GuessRate.Window}, cfg.MaxLimiterKeys),
		invites:          ratelimit.NewWindow(cfg.InviteRate, cfg.MaxLimiterKeys),
		watched:          map[sessionID]map[*SessionWatch]struct{}{},
		sessions:         newSessionCache(cfg),
		queue:            make(chan outgoing, cfg.MailQueue),
		quit:             make(chan struct{}),
		abort:            func() {},
	}
}

// Config returns the service's effective configuration (defaults filled in).
func (s *Service) Config() Config { return s.cfg }

// now is the service's clock.
func (s *Service) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now().UTC()
	}
	return time.Now().UTC()
}

// Start runs the mail senders and the sweeper until Close is called or ctx
// is cancelled. Calling it again does nothing.
func (s *Service) Start(ctx context.Context) {
	s.startOnce.Do(func() {
		runCtx, cancel := context.WithCancel(ctx)
		s.abort = cancel
		for range s.cfg.MailWorkers {
			s.wg.Add(1)
			go s.sendLoop(runCtx)
		}
		s.wg.Add(1)
		go s.sweepLoop(runCtx)
	})
}

// Close stops accepting mail, lets the senders finish what is queued, and
// stops the sweeper. It waits for them or for ctx; when ctx ends first it
// aborts the sends in flight and returns ctx's error. Safe to call twice.
func (s *Service) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.quit) })
	// Start may never have run; then there is nothing to wait for, and a
	// later Start must not launch anything (startOnce is spent here).
	s.startOnce.Do(func() {})
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.abort()
		return nil
	case <-ctx.Done():
		s.abort()
		return ctx.Err()
	}
}

// enqueue hands a message to the senders without ever waiting: when the
// queue is full (or the service is closing) the message is dropped and
// logged, and the user can ask for a new code.
func (s *Service) enqueue(ctx context.Context, m outgoing) {
	select {
	case <-s.quit:
		s.log.WarnContext(ctx, m.what()+" dropped: service is shutting down", slog.String("to", m.to))
		return
	default:
	}
	select {
	case s.queue <- m:
	default:
		s.log.WarnContext(ctx, m.what()+" dropped: send queue full", slog.String("to", m.to), slog.Int("queue", cap(s.queue)))
	}
}

// sendLoop delivers queued mail until Close (then drains the queue) or
// until ctx ends.
func (s *Service) sendLoop(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case m := <-s.queue:
			s.deliver(ctx, m)
		case <-s.quit:
			for {
				select {
				case m := <-s.queue:
					s.deliver(ctx, m)
				default:
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

func (s *Service) deliver(ctx context.Context, m outgoing) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MailTimeout)
	defer cancel()
	if err := s.mailer.Send(ctx, m.to, m.subject, m.body); err != nil {
		s.log.WarnContext(ctx, m.what()+" failed", slog.String("to", m.to), slog.Any("err", err))
		return
	}
	s.log.DebugContext(ctx, m.what()+" sent", slog.String("to", m.to))
}

// sweepLoop runs Sweep every SweepInterval.
func (s *Service) sweepLoop(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.log.WarnContext(ctx, "auth sweep failed", slog.Any("err", err))
			}
		case <-s.quit:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Sweep deletes expired codes and sessions, ends the watches of sessions
// that have ended (closing their sockets) and forgets idle rate-limit
// entries. The background sweeper calls it; tests may call it directly.
func (s *Service) Sweep(ctx context.Context) error {
	now := s.now()
	codes, err := s.db.SweepOTPs(ctx, now)
	if err != nil {
		return err
	}
	sessions, err := s.db.SweepSessions(ctx, now.Add(-s.cfg.SessionIdle), now.Add(-s.cfg.SessionMaxAge))
	if err != nil {
		return err
	}
	ended := s.sweepWatched(ctx, now)
	for _, l := range []*ratelimit.Window{s.emailLimit, s.ipLimit, s.verifyLimit, s.verifyEmailLimit} {
		l.Purge(now)
	}
	s.guesses.Purge(now)
	s.netGuesses.Purge(now)
	if codes > 0 || sessions > 0 || ended > 0 {
		s.log.DebugContext(ctx, "auth sweep", slog.Int("codes", codes), slog.Int("sessions", sessions), slog.Int("watchedEnded", ended))
	}
	return nil
}
