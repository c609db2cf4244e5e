package transport_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"corkboard/ai"
	"corkboard/ai/aitest"
	"corkboard/auth"
	"corkboard/auth/authtest"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/changelog"
	"corkboard/hub"
	"corkboard/internal/livesock"
	"corkboard/persist/bolt"
	"corkboard/persist/persisttest"
	"corkboard/ratelimit"
	"corkboard/transport"
)

// publicURL is the configured public origin unless a test picks another;
// the test server itself listens elsewhere (127.0.0.1:port).
const publicURL = "https://board.example.com"

// envConfig is what a test may vary about the server newEnv starts. The
// with… options set it; the zero value is the common case.
type envConfig struct {
	// clock, when set, stops time at this instant: storage, codes,
	// sessions, auth's rate limits, the quota month, the AI rate limit and
	// the webhook's tolerance all read it. Zero is the real clock.
	clock time.Time
	// auth replaces the auth configuration; nil is auth's defaults with
	// rate limits no test reaches (most tests log many users in).
	auth       *auth.Config
	trustProxy bool
	publicURL  string
	// plans are plan overrides in the -plans flag's form; "" the defaults.
	plans string
	// Webhook settings in the flags' form: -billing-provider ("" is
	// stripe), -billing-secrets ("" leaves the webhook unconfigured),
	// -billing-plan-map and -billing-default-plan.
	billingProvider, billingSecrets, planMap, defaultPaidPlan string
	// ai builds the real AI service talking to a fake Ollama (e.fake);
	// ollamaURL points it at another Ollama; aiClient is the HTTP client it
	// reaches Ollama with.
	ai        bool
	ollamaURL string
	aiClient  *http.Client
	// aiIDs makes the AI service's ids (message ids, missing tool call
	// ids) a counter, e.aiIDs, instead of random UUIDs.
	aiIDs     bool
	changelog changelog.Options
	// logger replaces the captured logger (e.logs is nil then).
	logger *slog.Logger
	// outbox mails through the no-SMTP mailer (log and <data>/outbox)
	// instead of the SMTP sink; wrapMailer wraps whichever mailer is used.
	outbox     bool
	wrapMailer func(auth.Mailer) auth.Mailer
	// routes mounts extra handlers beside the API (which serves "/").
	routes func(api *transport.Server, mux *http.ServeMux)
	// app is transport.Deps.App: the browser client outside /api/.
	app http.Handler
	// liveQueue is transport.Config.LiveQueueSize.
	liveQueue int
	// hub tunes the hub (live caps, push budgets); the janitor's sweep is
	// always off and the logger the env's.
	hub hub.Options
	// serverTimeout, when set, is the HTTP server's ReadTimeout and
	// WriteTimeout (cmd/corkboard sets both).
	serverTimeout time.Duration
	// cacheTTL, when set, is the TTL of the session, plan and board
	// caches (defaults otherwise).
	cacheTTL time.Duration
	// limits are the store's board.Limits (zero: the defaults).
	limits board.Limits
	// largeReads sets the large-read gate (zero fields: its defaults).
	largeReads transport.Config
}

// option changes what newEnv starts; of two that set the same thing, the
// later wins, so a file's preset can be overridden by a test.
type option func(*envConfig)

// withClock stops the server's clocks at start; e.clock moves them.
func withClock(start time.Time) option { return func(c *envConfig) { c.clock = start } }

// withAuth configures login as given (zero fields are auth's defaults,
// including its real rate limits).
func withAuth(cfg auth.Config) option { return func(c *envConfig) { c.auth = &cfg } }

// withTrustProxy takes the client IP from X-Forwarded-For / X-Real-IP.
func withTrustProxy() option { return func(c *envConfig) { c.trustProxy = true } }

// withPublicURL sets the origin browsers use.
func withPublicURL(u string) option { return func(c *envConfig) { c.publicURL = u } }

// withPlans overrides the plan table, in the -plans flag's form.
func withPlans(overrides string) option { return func(c *envConfig) { c.plans = overrides } }

// withBilling configures the payment webhook as the -billing-* flags do.
func withBilling(provider, secrets, planMap, defaultPlan string) option {
	return func(c *envConfig) {
		c.billingProvider, c.billingSecrets, c.planMap, c.defaultPaidPlan = provider, secrets, planMap, defaultPlan
	}
}

// withLiveQueue sets how many messages a live connection may have waiting.
func withLiveQueue(n int) option { return func(c *envConfig) { c.liveQueue = n } }

// withServerTimeout sets the HTTP server's Read and WriteTimeout.
func withServerTimeout(d time.Duration) option { return func(c *envConfig) { c.serverTimeout = d } }

// withCacheTTL sets how long sessions, plans and board members stay
// cached: a TTL no test outlives shows that only invalidation refreshes
// them.
func withCacheTTL(d time.Duration) option { return func(c *envConfig) { c.cacheTTL = d } }

// withLimits sets the store's board.Limits.
func withLimits(l board.Limits) option { return func(c *envConfig) { c.limits = l } }

// withHub tunes the hub: live connection caps, push budgets, its clock.
func withHub(o hub.Options) option { return func(c *envConfig) { c.hub = o } }

// withLargeReads sets the large-read gate: slots per person and in all,
// and how long a read waits for one of the server's.
func withLargeReads(perUser, total int, wait time.Duration) option {
	return func(c *envConfig) {
		c.largeReads = transport.Config{LargeReadsPerUser: perUser, LargeReads: total, LargeReadWait: wait}
	}
}

// withAI builds the AI service on a fake Ollama that answers as e.setScript
// says.
func withAI() option { return func(c *envConfig) { c.ai = true } }

// withOllamaURL builds the AI service on the Ollama at u instead of the fake.
func withOllamaURL(u string) option { return func(c *envConfig) { c.ai, c.ollamaURL = true, u } }

// withAIClient is the HTTP client the AI service reaches Ollama with.
func withAIClient(client *http.Client) option { return func(c *envConfig) { c.aiClient = client } }

// withCountedAIIDs numbers the ids the AI service makes up ("id-1", …,
// counted by e.aiIDs), so that whole answers can be compared byte for byte.
func withCountedAIIDs() option { return func(c *envConfig) { c.aiIDs = true } }

// withChangelog sets the changelog's options (its logger is the env's).
func withChangelog(o changelog.Options) option { return func(c *envConfig) { c.changelog = o } }

// withLogger logs to l instead of a buffer printed when the test fails.
func withLogger(l *slog.Logger) option { return func(c *envConfig) { c.logger = l } }

// withOutbox mails codes to the log and <data>/outbox, as a server without
// SMTP does.
func withOutbox() option { return func(c *envConfig) { c.outbox = true } }

// withMailer wraps the mailer, to hold or observe sends.
func withMailer(wrap func(auth.Mailer) auth.Mailer) option {
	return func(c *envConfig) { c.wrapMailer = wrap }
}

// withRoutes mounts extra handlers beside the API.
func withRoutes(mount func(api *transport.Server, mux *http.ServeMux)) option {
	return func(c *envConfig) { c.routes = mount }
}

// withApp serves app as the browser client (transport.Deps.App).
func withApp(app http.Handler) option { return func(c *envConfig) { c.app = app } }

// env is the whole server on real parts: bbolt in a temp folder, auth
// mailing codes through a real SMTP conversation to an in-process sink,
// the hub, the changelog, plans and billing, optionally the AI service on
// a fake Ollama, and the HTTP API on a real listener. restart keeps the
// data folder, the clock, the sink and the fake.
type env struct {
	tb    testing.TB
	cfg   envConfig
	dir   string
	sink  *authtest.Sink
	clock *persisttest.Clock // nil on the real clock
	log   *slog.Logger
	logs  *authtest.LogBuffer // nil with withLogger

	plans   billing.Plans
	billing transport.Billing
	ai      *ai.Service
	fake    *aitest.Server // nil without the AI service
	script  atomic.Pointer[aitest.Script]
	aiIDs   atomic.Int64 // the last id made with withCountedAIIDs

	mu     sync.Mutex
	served map[string][]chan struct{}

	// Built again by each start.
	db      *bolt.DB
	auth    *auth.Service
	hub     *hub.Hub
	cl      *changelog.Log
	api     *transport.Server
	handler http.Handler
	srv     *httptest.Server
}

// newEnv starts the server that opts describe and stops it when the test
// ends (before the SMTP sink and the fake Ollama go away).
func newEnv(tb testing.TB, opts ...option) *env {
	tb.Helper()
	cfg := envConfig{publicURL: publicURL}
	for _, o := range opts {
		o(&cfg)
	}
	e := &env{tb: tb, cfg: cfg, dir: tb.TempDir(), sink: authtest.NewSink(tb), served: map[string][]chan struct{}{}}
	e.log = cfg.logger
	if e.log == nil {
		e.log, e.logs = authtest.NewLogger(tb)
	}
	if !cfg.clock.IsZero() {
		e.clock = persisttest.NewClock(cfg.clock)
	}
	var err error
	if cfg.plans != "" {
		var o billing.PlanOverrides
		if o, err = billing.ParsePlanOverrides(cfg.plans); err != nil {
			tb.Fatal(err)
		}
		if e.plans, err = billing.DefaultPlans().With(o); err != nil {
			tb.Fatal(err)
		}
	}
	if cfg.billingSecrets != "" {
		if e.billing.Verifier, err = billing.NewVerifier(cfg.billingProvider, billing.ParseSecrets(cfg.billingSecrets)); err != nil {
			tb.Fatal(err)
		}
	}
	if e.billing.PlanMap, err = billing.ParsePlanMap(cfg.planMap); err != nil {
		tb.Fatal(err)
	}
	if e.billing.PlanMap, err = e.billing.PlanMap.WithDefault(cfg.defaultPaidPlan); err != nil {
		tb.Fatal(err)
	}
	e.setScript(aitest.Seq()) // a test that expects model calls scripts them
	if cfg.ai {
		e.fake = aitest.New(tb, func(c aitest.Call) aitest.Reply { return (*e.script.Load())(c) })
		url := cmp.Or(cfg.ollamaURL, e.fake.URL)
		aiCfg := ai.Config{OllamaURL: url, Model: "qwen3:4b", Logger: e.log}
		if cfg.aiIDs {
			aiCfg.NewID = func() string { return fmt.Sprintf("id-%d", e.aiIDs.Add(1)) }
		}
		if e.ai, err = ai.New(aiCfg, cfg.aiClient); err != nil {
			tb.Fatal(err)
		}
	}
	e.start()
	tb.Cleanup(e.stop)
	return e
}

// spoolDir is the folder the server spools large answers to.
func (e *env) spoolDir() string { return filepath.Join(e.dir, "spool") }

func (e *env) start() {
	e.tb.Helper()
	if err := transport.ClearSpools(e.spoolDir()); err != nil {
		e.tb.Fatal(err)
	}
	db, err := bolt.Open(e.dir)
	if err != nil {
		e.tb.Fatal(err)
	}
	db.SetNoteRenderer(changelog.RenderNote) // as cmd/corkboard wires it
	db.SetLimits(e.cfg.limits)
	var now func() time.Time
	if e.clock != nil {
		db.Now = e.clock.Now
		now = e.clock.Now
	}
	smtpURL := e.sink.URL()
	if e.cfg.outbox {
		smtpURL = ""
	}
	mailer, err := auth.NewMailer(smtpURL, "", filepath.Join(e.dir, "outbox"), e.log)
	if err != nil {
		e.tb.Fatal(err)
	}
	if e.cfg.wrapMailer != nil {
		mailer = e.cfg.wrapMailer(mailer)
	}
	lots := ratelimit.Rate{Count: 10000, Window: time.Minute}
	authCfg := auth.Config{EmailRate: lots, IPRate: lots, VerifyIPRate: lots}
	if e.cfg.auth != nil {
		authCfg = *e.cfg.auth
	}
	if authCfg.Now == nil {
		authCfg.Now = now
	}
	if e.cfg.cacheTTL > 0 {
		authCfg.SessionCacheTTL = e.cfg.cacheTTL
	}
	clOpts := e.cfg.changelog
	clOpts.Logger = e.log

	e.db = db
	e.auth = auth.New(db, mailer, authCfg, e.log)
	e.auth.Start(context.Background())
	hubOpts := e.cfg.hub
	hubOpts.SweepEvery, hubOpts.Logger = -1, e.log
	e.hub = hub.New(db, hubOpts)
	e.cl = changelog.New(db, clOpts)
	var meter *billing.Meter
	if e.cfg.cacheTTL > 0 {
		meter = billing.NewMeter(billing.MeterConfig{Store: db, Plans: e.plans, DefaultPlan: billing.Free, Now: now, PlanCacheTTL: e.cfg.cacheTTL})
	}
	e.api = transport.New(
		transport.Config{PublicURL: e.cfg.publicURL, TrustProxy: e.cfg.trustProxy, DefaultPlan: billing.Free, LiveQueueSize: e.cfg.liveQueue, BoardCacheTTL: e.cfg.cacheTTL,
			LargeReadsPerUser: e.cfg.largeReads.LargeReadsPerUser, LargeReads: e.cfg.largeReads.LargeReads, LargeReadWait: e.cfg.largeReads.LargeReadWait,
			SpoolDir: e.spoolDir(), LiveSockets: livesock.Kind(os.Getenv("CORKBOARD_TEST_LIVE_SOCKETS"))},
		transport.Deps{DB: db, Auth: e.auth, Hub: e.hub, AI: e.ai, Meter: meter, Plans: e.plans, Billing: e.billing, Now: now, Changelog: e.cl, App: e.cfg.app},
		e.log,
	)
	var inner http.Handler = e.api
	if e.cfg.routes != nil {
		// Only then: a ServeMux redirects paths holding "..", which some
		// tests send to the API as they are.
		mux := http.NewServeMux()
		e.cfg.routes(e.api, mux)
		mux.Handle("/", e.api)
		inner = mux
	}
	// The handler reports when it has returned (whenServed), so that a test
	// can look at what a request left behind, such as refunded credits.
	e.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Deferred: a handler that aborts its answer (http.ErrAbortHandler)
		// has returned too.
		defer e.finished(r.URL.Path)
		inner.ServeHTTP(w, r)
	})
	e.srv = httptest.NewUnstartedServer(e.handler)
	// net/http's own reports (panics outside the API's recovery) go to the
	// test's log, not to the output.
	e.srv.Config.ErrorLog = slog.NewLogLogger(e.log.Handler(), slog.LevelError)
	e.srv.Config.ReadTimeout, e.srv.Config.WriteTimeout = e.cfg.serverTimeout, e.cfg.serverTimeout
	e.srv.Start()
}

// stop shuts down in cmd's order: HTTP, hub (sockets), auth (flushing
// mail), storage.
func (e *env) stop() {
	if e.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.srv.Close()
	if err := e.hub.Close(ctx); err != nil {
		e.tb.Errorf("hub Close: %v", err)
	}
	if err := e.api.Close(); err != nil {
		e.tb.Errorf("server Close: %v", err)
	}
	if err := e.auth.Close(ctx); err != nil {
		e.tb.Errorf("auth Close: %v", err)
	}
	if err := e.db.Close(); err != nil {
		e.tb.Errorf("db Close: %v", err)
	}
	e.srv = nil
}

// restart stops everything and opens the same data folder again.
func (e *env) restart() {
	e.tb.Helper()
	e.stop()
	e.start()
}

// setScript makes script answer the fake Ollama's next chat requests.
func (e *env) setScript(script aitest.Script) { e.script.Store(&script) }

// calls is the number of chat requests the fake Ollama received.
func (e *env) calls() int { return len(e.fake.Calls()) }

// whenServed returns a channel closed once the next request to path has
// been answered and its handler has returned.
func (e *env) whenServed(path string) <-chan struct{} {
	ch := make(chan struct{})
	e.mu.Lock()
	defer e.mu.Unlock()
	e.served[path] = append(e.served[path], ch)
	return ch
}

func (e *env) finished(path string) {
	e.mu.Lock()
	chs := e.served[path]
	delete(e.served, path)
	e.mu.Unlock()
	for _, ch := range chs {
		close(ch)
	}
}

// beacon is the header of a request sent as navigator.sendBeacon sends a
// Blob: without a Content-Type (the harness otherwise labels bodies JSON).
var beacon = http.Header{"Content-Type": nil}

// newRequest builds a request to url with the session cookie (when not
// ""). body is sent as is when []byte or string, else JSON-encoded, and is
// labelled application/json unless a header names its own Content-Type
// (none at all for a nil value, as beacon does). header values replace the
// request's.
func (e *env) newRequest(ctx context.Context, method, url, session string, body any, header ...http.Header) *http.Request {
	e.tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			e.tb.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		e.tb.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range header {
		for k, vs := range h {
			req.Header.Del(k)
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: transport.SessionCookie, Value: session})
	}
	return req
}

// answer is a response read whole, with the request it answers.
type answer struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

// send sends req and reads the whole answer.
func (e *env) send(req *http.Request) answer {
	e.tb.Helper()
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.tb.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.tb.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return answer{method: req.Method, path: req.URL.RequestURI(), status: res.StatusCode, header: res.Header, body: data}
}

// do sends a request to the server (see newRequest for body and header).
func (e *env) do(method, path, session string, body any, header ...http.Header) answer {
	e.tb.Helper()
	return e.send(e.newRequest(context.Background(), method, e.srv.URL+path, session, body, header...))
}

// post is do for a POST.
func (e *env) post(path, session string, body any, header ...http.Header) answer {
	e.tb.Helper()
	return e.do("POST", path, session, body, header...)
}

// String names the request and shows the answer, for failure messages.
func (a answer) String() string {
	return fmt.Sprintf("%s %s = %d %s", a.method, a.path, a.status, bytes.TrimSpace(a.body))
}

// wantStatus fails unless the answer has status.
func (a answer) wantStatus(tb testing.TB, status int) {
	tb.Helper()
	if a.status != status {
		tb.Fatalf("%v, want status %d", a, status)
	}
}

// want checks the status, and decodes a JSON answer into out when out is
// not nil.
func (a answer) want(tb testing.TB, status int, out any) {
	tb.Helper()
	a.wantStatus(tb, status)
	if out != nil {
		if err := json.Unmarshal(a.body, out); err != nil {
			tb.Fatalf("%v: %v", a, err)
		}
	}
}

// object decodes the body as a JSON object.
func (a answer) object(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		tb.Fatalf("%v: the body is not a JSON object: %v", a, err)
	}
	return m
}

// wantObject checks the status and returns the JSON object answered.
func (a answer) wantObject(tb testing.TB, status int) map[string]any {
	tb.Helper()
	a.wantStatus(tb, status)
	return a.object(tb)
}

// wantExactObject fails unless the answer is status with exactly want.
func (a answer) wantExactObject(tb testing.TB, status int, want map[string]any) {
	tb.Helper()
	if got := a.wantObject(tb, status); !reflect.DeepEqual(got, want) {
		tb.Fatalf("%v, want body %v", a, want)
	}
}

// wantBody checks the status and, when want is not "", the exact body
// (less surrounding white space).
func (a answer) wantBody(tb testing.TB, status int, want string) {
	tb.Helper()
	a.wantStatus(tb, status)
	if got := strings.TrimSpace(string(a.body)); want != "" && got != want {
		tb.Fatalf("%v, want body %s", a, want)
	}
}

// wantError checks the status and that the body is {"error": …} with a
// message, naming field ("" for none); it returns the message.
func (a answer) wantError(tb testing.TB, status int, field string) string {
	tb.Helper()
	a.wantStatus(tb, status)
	var body struct {
		Error string `json:"error"`
		Field string `json:"field"`
	}
	if err := json.Unmarshal(a.body, &body); err != nil || body.Error == "" {
		tb.Fatalf("%v: want {\"error\": …} (%v)", a, err)
	}
	if body.Field != field {
		tb.Fatalf("%v: error field %q, want %q", a, body.Field, field)
	}
	return body.Error
}

// wantQuota checks the spec's quota answer: 429 with exactly error, used,
// limit and plan, and a Retry-After.
func (a answer) wantQuota(tb testing.TB, used, limit int, plan string) {
	tb.Helper()
	got := a.wantObject(tb, http.StatusTooManyRequests)
	if k := keys(got); !slices.Equal(k, []string{"error", "limit", "plan", "used"}) {
		tb.Fatalf("%v: quota body keys=%v, want exactly error, used, limit, plan", a, k)
	}
	if msg, ok := got["error"].(string); !ok || msg == "" {
		tb.Errorf("error=%v, want a message", got["error"])
	}
	if got["used"] != float64(used) || got["limit"] != float64(limit) || got["plan"] != plan {
		tb.Fatalf("quota body=%v, want used=%d limit=%d plan=%s", got, used, limit, plan)
	}
	if ra, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || ra < 1 {
		tb.Errorf("Retry-After=%q, want seconds to the month's end", a.header.Get("Retry-After"))
	}
}

// sessionCookie is the session cookie the answer sets.
func (a answer) sessionCookie(tb testing.TB) *http.Cookie {
	tb.Helper()
	res := http.Response{Header: a.header}
	for _, c := range res.Cookies() {
		if c.Name == transport.SessionCookie {
			return c
		}
	}
	tb.Fatalf("%v: no %s cookie in %q", a, transport.SessionCookie, a.header.Values("Set-Cookie"))
	return nil
}

// sendOTP asks for a login code for email.
func (e *env) sendOTP(email string, header ...http.Header) answer {
	e.tb.Helper()
	return e.post("/api/auth/send-otp", "", map[string]string{"email": email}, header...)
}

// verify sends email's code.
func (e *env) verify(email, code string, header ...http.Header) answer {
	e.tb.Helper()
	return e.post("/api/auth/verify-otp", "", map[string]string{"email": email, "code": code}, header...)
}

// code asks for a code for email and reads it from the SMTP sink.
func (e *env) code(email string) string {
	e.tb.Helper()
	e.sendOTP(email).wantBody(e.tb, http.StatusOK, `{"ok":true}`)
	return e.sink.WaitCode(e.tb, email)
}

// login logs email in through the real endpoints (the code comes by SMTP)
// and returns the session token.
func (e *env) login(email string) string {
	e.tb.Helper()
	r := e.verify(email, e.code(email))
	r.wantBody(e.tb, http.StatusOK, `{"ok":true}`)
	c := r.sessionCookie(e.tb)
	if c.Value == "" {
		e.tb.Fatal("verify-otp set an empty session cookie")
	}
	return c.Value
}

// claim logs owner in, claims board id and returns the owner's session.
func (e *env) claim(owner, id string) string {
	e.tb.Helper()
	s := e.login(owner)
	e.claimAs(s, id)
	return s
}

// claimAs makes session's user the owner of board id.
func (e *env) claimAs(session, id string) {
	e.tb.Helper()
	e.post("/api/boards/"+id+"/access", session, nil).wantStatus(e.tb, http.StatusOK)
}

// invite puts email on plan (which decides canEdit), invites it to board
// id and logs it in.
func (e *env) invite(ownerSession, id, email, plan string) string {
	e.tb.Helper()
	if _, err := e.db.EnsureUser(context.Background(), email, plan); err != nil {
		e.tb.Fatal(err)
	}
	e.addInvite(ownerSession, id, email)
	return e.login(email)
}

// addInvite adds email to board id's invitations.
func (e *env) addInvite(ownerSession, id, email string) {
	e.tb.Helper()
	e.post("/api/boards/"+id+"/invite", ownerSession, map[string]string{"email": email}).wantStatus(e.tb, http.StatusOK)
}

// push sends p to board id's sync endpoint and returns the status and the
// JSON answer.
func (e *env) push(session, id string, p any, header ...http.Header) (int, map[string]any) {
	e.tb.Helper()
	r := e.post("/api/boards/"+id+"/sync", session, p, header...)
	return r.status, r.object(e.tb)
}

// pushOK pushes p and fails unless it is accepted.
func (e *env) pushOK(session, id string, p any) {
	e.tb.Helper()
	e.post("/api/boards/"+id+"/sync", session, p).wantStatus(e.tb, http.StatusOK)
}

// pull reads board id's changes above since.
func (e *env) pull(session, id string, since int64) *board.Changes {
	e.tb.Helper()
	var ch board.Changes
	e.do("GET", fmt.Sprintf("/api/boards/%s/sync?since=%d", id, since), session, nil).want(e.tb, http.StatusOK, &ch)
	return &ch
}

// usage is GET /api/me/usage for the session.
func (e *env) usage(session string) map[string]any {
	e.tb.Helper()
	return e.do("GET", "/api/me/usage", session, nil).wantObject(e.tb, http.StatusOK)
}

// used is the credits session's user used this month.
func (e *env) used(session string) int {
	e.tb.Helper()
	u, _ := e.usage(session)["used"].(float64)
	return int(u)
}

// version is the serverVersion of a push answer, which must hold nothing
// else.
func version(tb testing.TB, body map[string]any) int64 {
	tb.Helper()
	v, ok := body["serverVersion"].(float64)
	if !ok || len(body) != 1 {
		tb.Fatalf("answer %v, want exactly {serverVersion}", body)
	}
	return int64(v)
}

// notePush is a push upserting notes.
func notePush(notes ...board.Note) board.Push {
	return board.Push{Notes: board.NoteChanges{Upserted: notes}}
}

// keys are a JSON object's keys, sorted.
func keys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// jsonEqual reports whether a and b encode to the same JSON.
func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// featureCost is the credits one call of feature is charged.
func featureCost(tb testing.TB, feature billing.Feature) int {
	tb.Helper()
	c, err := billing.Cost(feature)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
