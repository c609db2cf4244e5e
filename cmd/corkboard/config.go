package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"corkboard/ai"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/changelog"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/rooms"
	"corkboard/transport"
)

// Config is everything the corkboard binary can be told, from flags or from
// CORKBOARD_<FLAG> environment variables (a flag on the command line wins).
type Config struct {
	Addr          string
	DataDir       string
	Store         string
	PublicURL     string
	TrustProxy    bool
	SMTP          string
	MailFrom      string
	OTPEmailLimit string
	OTPIPLimit    string
	VerifyIPLimit string
	VerifyLimit   string
	GuessLimit    string
	InviteLimit   string
	SessionMaxAge time.Duration
	CacheTTL      time.Duration
	ShutdownGrace time.Duration
	LogFormat     string

	TombstoneRetention time.Duration
	RoomIdle           time.Duration

	NodeID   string
	NodePoll time.Duration
	// NodeLease is hub.Options.Lease (0 here turns it off).
	NodeLease time.Duration

	LiveMaxPerBoard int
	LiveMaxPerUser  int
	LiveMax         int
	LivePushRate    float64
	LiveUserPush    float64
	LiveMsgRate     float64
	LiveUserMsgRate float64

	PollMaxPerUser int
	PollMax        int

	LargeReadsPerUser int
	LargeReads        int
	LargeReadWait     time.Duration

	BillingProvider    string
	BillingSecret      string
	BillingPlanMap     string
	BillingDefaultPlan string
	Plans              string
	PlansFile          string

	Ollama    string
	Model     string
	Models    string
	AITimeout time.Duration
	AINumCtx  int

	SnapshotInterval time.Duration
	SnapshotKeep     int
	SnapshotMaxBytes int
	SnapshotSlots    int

	// Limits of what one board and one person keep (board.Limits).
	MaxNotesPerBoard      int
	MaxItemsPerBoard      int
	MaxFramesPerBoard     int
	MaxConnectorsPerBoard int
	MaxBoardsPerUser      int
	MaxChangelogSize      int64

	Pprof string

	WebDir      string
	MetricsAddr string
	DrainDelay  time.Duration

	secretFiles secretFiles

	// Warnings are said in the log once the logger exists: secrets given
	// on the command line (see secrets.go).
	Warnings []string
}

// newFlagSet declares every flag on fs, bound to cfg.
func newFlagSet(cfg *Config, out io.Writer) *flag.FlagSet {
	secretFiles := &cfg.secretFiles
	fs := flag.NewFlagSet("corkboard", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&cfg.DataDir, "data", "./data", "data folder; the bbolt file lives in it (with -store: the outbox and the admin socket only)")
	fs.StringVar(&cfg.Store, "store", "", "postgres://user@host/db to keep everything in PostgreSQL (docs/postgres.md); empty: the bbolt file under -data")
	fs.StringVar(&cfg.PublicURL, "public-url", "http://localhost:8080", "the origin browsers use; Origin checks and links use it")
	fs.BoolVar(&cfg.TrustProxy, "trust-proxy", false, "take the client IP from X-Forwarded-For (only behind a reverse proxy you run)")
	fs.StringVar(&cfg.SMTP, "smtp", "", "smtp://user:pass@host:port (STARTTLS when offered) or smtps://…; empty: codes go to the log and <data>/outbox/")
	fs.StringVar(&secretFiles.smtp, "smtp-file", "", "read -smtp from this file (keeps the password off the command line)")
	fs.StringVar(&cfg.MailFrom, "mail-from", "Corkboard <noreply@localhost>", "sender of login e-mails")
	fs.StringVar(&cfg.OTPEmailLimit, "otp-email-limit", "5/15m", "send-otp limit per e-mail address (count/window)")
	fs.StringVar(&cfg.OTPIPLimit, "otp-ip-limit", "30/15m", "send-otp limit per client IP (count/window)")
	fs.StringVar(&cfg.VerifyIPLimit, "otp-verify-ip-limit", "30/15m", "verify-otp attempts per client IP (count/window)")
	fs.StringVar(&cfg.VerifyLimit, "otp-verify-email-limit", "10/1h", "verify-otp attempts per e-mail address and client network, across all its codes (count/window)")
	fs.StringVar(&cfg.InviteLimit, "invite-limit", "30/1h", "new invitations one board owner may send, over all their boards (count/window)")
	fs.StringVar(&cfg.GuessLimit, "otp-guess-limit", "100/24h", "wrong verify-otp guesses per e-mail address from all networks before only the network that asked for the code may try it (count/window)")
	fs.DurationVar(&cfg.SessionMaxAge, "session-max-age", 90*24*time.Hour, "absolute lifetime of a session, however active")
	fs.DurationVar(&cfg.CacheTTL, "cache-ttl", 5*time.Second, "how long sessions, plans and board members stay cached: the longest a change made by another node goes unnoticed (1s to 1m)")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", 15*time.Second, "how long in-flight requests may take to finish on shutdown")
	fs.StringVar(&cfg.LogFormat, "log-format", "text", "log format: text or json")
	fs.DurationVar(&cfg.TombstoneRetention, "tombstone-retention", 30*24*time.Hour, "how long deletions are remembered for pulls; an older since gets the full state with reset")
	fs.DurationVar(&cfg.RoomIdle, "room-idle", 5*time.Minute, "stop a board's room after this long without sockets or requests")
	fs.StringVar(&cfg.NodeID, "node-id", "", "this node's name to the other nodes sharing a PostgreSQL store (default: random at each start)")
	fs.DurationVar(&cfg.NodePoll, "node-poll", hub.DefaultPollEvery, "with several nodes: how often rooms with live subscribers or held long polls recheck their board's version in the store")
	fs.DurationVar(&cfg.NodeLease, "node-lease", hub.DefaultLease, "with several nodes: how long a push's acknowledgement waits after its note went out, so that no-change pulls on other nodes are answered from memory (1ms to 1s, the same on every node; 0: no wait, every such pull asks the store)")
	fs.IntVar(&cfg.LiveMaxPerBoard, "live-max-per-board", hub.DefaultMaxConnsPerUserBoard, "live WebSockets one person may have open on one board")
	fs.IntVar(&cfg.LiveMaxPerUser, "live-max-per-user", hub.DefaultMaxConnsPerUser, "live WebSockets one person may have open in all")
	fs.IntVar(&cfg.LiveMax, "live-max", hub.DefaultMaxConns, "live WebSockets the server keeps open in all")
	fs.Float64Var(&cfg.LivePushRate, "live-push-rate", rooms.DefaultPushRate, "pushes a second over one live WebSocket (twice as many at once)")
	fs.IntVar(&cfg.PollMaxPerUser, "poll-max-per-user", hub.DefaultMaxWaitsPerUser, "long polls (GET /sync with wait) one person may have held at once")
	fs.IntVar(&cfg.PollMax, "poll-max", hub.DefaultMaxWaits, "long polls the server holds at once in all")
	fs.IntVar(&cfg.LargeReadsPerUser, "large-reads-per-user", transport.DefaultLargeReadsPerUser, "pulls and live catch-ups over 64 KiB one person may have sent at once (past it 429)")
	fs.IntVar(&cfg.LargeReads, "large-reads", transport.DefaultLargeReads, "pulls and live catch-ups over 64 KiB the server sends at once (past it, after -large-read-wait, 503)")
	fs.DurationVar(&cfg.LargeReadWait, "large-read-wait", transport.DefaultLargeReadWait, "how long a large read waits for one of the server's -large-reads slots before 503")
	fs.Float64Var(&cfg.LiveUserPush, "live-user-push-rate", hub.DefaultUserPushRate, "pushes a second of one person over all their live WebSockets (twice as many at once)")
	fs.Float64Var(&cfg.LiveMsgRate, "live-message-rate", hub.DefaultConnMessageRate, "messages of any kind a second over one live WebSocket (twice as many at once); past it the socket is closed with 4029")
	fs.Float64Var(&cfg.LiveUserMsgRate, "live-user-message-rate", hub.DefaultUserMessageRate, "messages of any kind a second of one person over all their live WebSockets on this node (twice as many at once); past it, 4029")
	fs.StringVar(&cfg.BillingProvider, "billing-provider", "stripe", "webhook signature scheme: stripe or standard")
	fs.StringVar(&cfg.BillingSecret, "billing-secret", "", "webhook signing secret(s), comma-separated for rotation; empty: the webhook answers 503")
	fs.StringVar(&secretFiles.billing, "billing-secret-file", "", "read -billing-secret from this file (keeps it off the command line, where ps and /debug/pprof/cmdline show it)")
	fs.StringVar(&cfg.BillingPlanMap, "billing-plan-map", "", "provider price/product ids to plans: price_abc=pro,prod_xyz=team")
	fs.StringVar(&cfg.BillingDefaultPlan, "billing-default-plan", "pro", "plan of a paid checkout naming none; none to wait for subscription events")
	fs.StringVar(&cfg.Plans, "plans", "", "plan overrides: free.credits=200,pro.rpm=30,free.invitee-edit=true")
	fs.StringVar(&cfg.PlansFile, "plans-file", "", "JSON file of plan overrides")
	fs.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", 24*time.Hour, "snapshot every board that changed since its last snapshot this often (0: off)")
	fs.IntVar(&cfg.SnapshotKeep, "snapshot-keep", changelog.DefaultKeep, fmt.Sprintf("snapshots kept per board, oldest pruned first (1 to %d)", changelog.MaxKeep))
	fs.IntVar(&cfg.SnapshotMaxBytes, "snapshot-max-bytes", changelog.DefaultMaxSnapshotBytes, "largest board snapshot (its Markdown, in bytes); a larger board cannot be snapshotted")
	fs.IntVar(&cfg.SnapshotSlots, "snapshot-slots", changelog.DefaultSnapshotSlots, "snapshots taken at once on this server; more get 503 with Retry-After")
	fs.IntVar(&cfg.MaxNotesPerBoard, "max-notes-per-board", board.DefaultNotesPerBoard, "live notes one board may hold (deleted ones do not count)")
	fs.IntVar(&cfg.MaxItemsPerBoard, "max-items-per-board", board.DefaultItemsPerBoard, "live tracker items one board may hold")
	fs.IntVar(&cfg.MaxFramesPerBoard, "max-frames-per-board", board.DefaultFramesPerBoard, "live frames one board may hold")
	fs.IntVar(&cfg.MaxConnectorsPerBoard, "max-connectors-per-board", board.DefaultConnectorsPerBoard, "live connectors one board may hold")
	fs.Int64Var(&cfg.MaxChangelogSize, "max-changelog-bytes-per-board", board.DefaultChangelogBytesPerBoard, "content bytes of a board's changelog; past it the oldest entries are pruned, each note's newest kept")
	fs.IntVar(&cfg.MaxBoardsPerUser, "max-boards-per-user", board.DefaultBoardsPerUser, "boards one person may own (boards they are invited to do not count)")
	fs.StringVar(&cfg.Ollama, "ollama", ai.DefaultOllamaURL(), "Ollama's base URL (default from OLLAMA_HOST)")
	fs.StringVar(&cfg.Model, "model", ai.DefaultModel, "the Ollama model every AI feature uses unless -models overrides it")
	fs.StringVar(&cfg.Models, "models", "", "per-feature model overrides: programmer=qwen2.5-coder:7b,document-to-notes=qwen3:8b")
	fs.DurationVar(&cfg.AITimeout, "ai-timeout", ai.DefaultTimeout, "longest one AI request may take")
	fs.IntVar(&cfg.AINumCtx, "ai-num-ctx", 0, "model context window in tokens (0: the model's default)")
	fs.StringVar(&cfg.WebDir, "web-dir", "", "serve the web client from this folder (a web/dist-like build) instead of the embedded one; for developing and testing the client (empty: embedded)")
	fs.StringVar(&cfg.Pprof, "pprof", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (empty: off)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics (GET /metrics), /healthz and /readyz on this address of their own, e.g. 127.0.0.1:9090 (empty: off); never on -addr")
	fs.DurationVar(&cfg.DrainDelay, "drain-delay", 0, "on shutdown, answer /readyz with 503 for this long before closing the listener, so that load balancers stop sending requests first")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: corkboard [flags]\n       corkboard plan set <email> <plan> | plan show <email>\n\nEvery flag can also be set by the environment variable CORKBOARD_<FLAG>\n(upper case, - becomes _), e.g. CORKBOARD_PUBLIC_URL; a flag wins.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// envName is the environment variable for a flag: -public-url → CORKBOARD_PUBLIC_URL.
func envName(flagName string) string {
	return "CORKBOARD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseConfig parses args, then fills every flag not given on the command
// line from its environment variable.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*Config, error) {
	cfg := &Config{}
	fs := newFlagSet(cfg, out)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see corkboard -h)", fs.Arg(0))
	}
	set, err := fillFromEnv(fs, getenv)
	if err != nil {
		return nil, err
	}
	if err := readSecretFiles(cfg, set); err != nil {
		return nil, err
	}
	if err := cfg.checkSizes(); err != nil {
		return nil, err
	}
	if err := cfg.checkRates(); err != nil {
		return nil, err
	}
	if err := cfg.checkOperations(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// fillFromEnv sets every flag of fs not given on the command line from its
// environment variable, and returns the names of those that were given.
func fillFromEnv(fs *flag.FlagSet, getenv func(string) string) (map[string]bool, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("environment variable %s: %w", envName(f.Name), serr)
			}
		}
	})
	return set, err
}

// checkSizes checks the limits that are counts: of bytes, snapshots,
// notes, connections and reads.
func (cfg *Config) checkSizes() error {
	if cfg.MaxChangelogSize < 1 {
		return fmt.Errorf("-max-changelog-bytes-per-board must be at least 1, not %d", cfg.MaxChangelogSize)
	}
	if cfg.SnapshotKeep < 1 || cfg.SnapshotKeep > changelog.MaxKeep {
		return fmt.Errorf("-snapshot-keep must be from 1 to %d, not %d", changelog.MaxKeep, cfg.SnapshotKeep)
	}
	for name, v := range map[string]int{"snapshot-max-bytes": cfg.SnapshotMaxBytes, "snapshot-slots": cfg.SnapshotSlots,
		"max-notes-per-board": cfg.MaxNotesPerBoard, "max-items-per-board": cfg.MaxItemsPerBoard, "max-boards-per-user": cfg.MaxBoardsPerUser,
		"max-frames-per-board": cfg.MaxFramesPerBoard, "max-connectors-per-board": cfg.MaxConnectorsPerBoard} {
		if v < 1 {
			return fmt.Errorf("-%s must be at least 1, not %d", name, v)
		}
	}
	for name, v := range map[string]int{"live-max-per-board": cfg.LiveMaxPerBoard, "live-max-per-user": cfg.LiveMaxPerUser, "live-max": cfg.LiveMax, "poll-max-per-user": cfg.PollMaxPerUser, "poll-max": cfg.PollMax,
		"large-reads-per-user": cfg.LargeReadsPerUser, "large-reads": cfg.LargeReads} {
		if v < 1 {
			return fmt.Errorf("-%s must be at least 1, not %d", name, v)
		}
	}
	return nil
}

// checkRates checks the limits that are rates and waits.
func (cfg *Config) checkRates() error {
	for name, v := range map[string]float64{"live-push-rate": cfg.LivePushRate, "live-user-push-rate": cfg.LiveUserPush} {
		if !(v >= 0.1 && v <= 1e6) {
			return fmt.Errorf("-%s must be from 0.1 to 1000000 pushes a second, not %g", name, v)
		}
	}
	if cfg.LargeReadWait < time.Millisecond || cfg.LargeReadWait > time.Minute {
		return fmt.Errorf("-large-read-wait must be from 1ms to 1m, not %s", cfg.LargeReadWait)
	}
	for name, v := range map[string]float64{"live-message-rate": cfg.LiveMsgRate, "live-user-message-rate": cfg.LiveUserMsgRate} {
		if !(v >= 1 && v <= 1e6) {
			return fmt.Errorf("-%s must be from 1 to 1000000 messages a second, not %g", name, v)
		}
	}
	if cfg.CacheTTL < time.Second || cfg.CacheTTL > time.Minute {
		return fmt.Errorf("-cache-ttl must be from 1s to 1m, not %s", cfg.CacheTTL)
	}
	if cfg.NodeLease != 0 && (cfg.NodeLease < time.Millisecond || cfg.NodeLease > time.Second) {
		return fmt.Errorf("-node-lease must be 0 or from 1ms to 1s, not %s", cfg.NodeLease)
	}
	return nil
}

// checkOperations checks what the operator runs the node with: the extra
// listeners' addresses, the drain delay and the log format.
func (cfg *Config) checkOperations() error {
	if cfg.Pprof != "" {
		if err := checkPprofAddr(cfg.Pprof); err != nil {
			return err
		}
	}
	if cfg.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.MetricsAddr); err != nil {
			return fmt.Errorf("-metrics-addr %q: %w", cfg.MetricsAddr, err)
		}
	}
	if cfg.DrainDelay < 0 {
		return fmt.Errorf("-drain-delay must not be negative, not %s", cfg.DrainDelay)
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		return fmt.Errorf("-log-format must be text or json, not %q", cfg.LogFormat)
	}
	return nil
}

// limits are the store's board.Limits.
func (cfg *Config) limits() board.Limits {
	return board.Limits{NotesPerBoard: cfg.MaxNotesPerBoard, ItemsPerBoard: cfg.MaxItemsPerBoard, BoardsPerUser: cfg.MaxBoardsPerUser,
		FramesPerBoard: cfg.MaxFramesPerBoard, ConnectorsPerBoard: cfg.MaxConnectorsPerBoard, ChangelogBytesPerBoard: cfg.MaxChangelogSize}
}

// buildModels parses -models against billing's table of AI features: an
// unknown feature is a start-up error, never a silently unused override.
func buildModels(s string) (map[ai.Feature]string, error) {
	parsed, err := billing.ParseModels(s)
	if err != nil {
		return nil, fmt.Errorf("-models: %s", errText(err))
	}
	return parsed, nil
}

// The server's store is the bbolt file; the Meter charges it and the
// changelog keeps its logs in it.
var (
	_ persist.Store       = (*bolt.DB)(nil)
	_ billing.CreditStore = (*bolt.DB)(nil)
	_ changelog.Store     = (*bolt.DB)(nil)
)
