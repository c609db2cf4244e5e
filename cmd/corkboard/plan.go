package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"corkboard/auth/mailaddr"
	"corkboard/billing"
	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/persist"
	"corkboard/persist/bolt"
)

// AdminSocketName is the plan admin socket's name inside the data folder.
const AdminSocketName = "admin.sock"

// buildPlans returns the plan table in force: the built-in plans, then the
// plans file (-plans-file), then the overrides flag (-plans). Empty
// arguments leave the defaults.
func buildPlans(overrides, file string) (billing.Plans, error) {
	plans := billing.DefaultPlans()
	if file != "" {
		o, err := billing.LoadPlansFile(file)
		if err != nil {
			return billing.Plans{}, fmt.Errorf("-plans-file: %s", errText(err))
		}
		if plans, err = plans.With(o); err != nil {
			return billing.Plans{}, fmt.Errorf("-plans-file: %s", errText(err))
		}
	}
	if overrides != "" {
		o, err := billing.ParsePlanOverrides(overrides)
		if err != nil {
			return billing.Plans{}, fmt.Errorf("-plans: %s", errText(err))
		}
		if plans, err = plans.With(o); err != nil {
			return billing.Plans{}, fmt.Errorf("-plans: %s", errText(err))
		}
	}
	return plans, nil
}

// buildBilling turns the -billing-* flags into the webhook's configuration.
// With no secret the verifier is nil (the webhook answers 503), but the
// other flags are still checked, so a typo fails at start-up rather than at
// the first payment. defaultPlan "" or "none" leaves a checkout that names
// no plan to the subscription events.
func buildBilling(provider, secret, planMap, defaultPlan string) (billing.Verifier, billing.PlanMap, error) {
	provider = strings.ToLower(strings.TrimSpace(provider))
	secrets := billing.ParseSecrets(secret)
	v, err := billing.NewVerifier(provider, secrets)
	if err != nil {
		return nil, billing.PlanMap{}, fmt.Errorf("-billing-provider/-billing-secret: %s", errText(err))
	}
	m, err := billing.ParsePlanMap(planMap)
	if err != nil {
		return nil, billing.PlanMap{}, fmt.Errorf("-billing-plan-map: %s", errText(err))
	}
	defaultPlan = strings.ToLower(strings.TrimSpace(defaultPlan))
	if defaultPlan == "none" {
		defaultPlan = ""
	}
	if m, err = m.WithDefault(defaultPlan); err != nil {
		return nil, billing.PlanMap{}, fmt.Errorf("-billing-default-plan: %s", errText(err))
	}
	if len(secrets) == 0 {
		return nil, m, nil
	}
	return v, m, nil
}

// errText is an error's message for a person: the domain message of a
// *board.Error (without the code), else the error itself.
func errText(err error) string {
	var e *board.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// planInfo is what `corkboard plan` reports about a user, and the admin
// socket's answer.
type planInfo struct {
	Email string `json:"email"`
	Plan  string `json:"plan"`
	// Previous is the plan before a set.
	Previous string `json:"previous,omitempty"`
	// Known tells whether the user has a record (logged in, paid, or had a
	// plan set).
	Known             bool      `json:"known"`
	CustomerID        string    `json:"customerId,omitempty"`
	Used              int       `json:"used"`
	Limit             int       `json:"limit"`
	Month             string    `json:"month"`
	ResetsAt          time.Time `json:"resetsAt"`
	RequestsPerMinute int       `json:"requestsPerMinute"`
	InviteeCanEdit    bool      `json:"inviteeCanEdit"`
}

// planStore is what the plan command reads and writes: users and their
// plans, and the credit usage the Meter reports.
type planStore interface {
	persist.UserStore
	billing.CreditStore
}

// showPlan reads email's plan and this month's usage.
func showPlan(ctx context.Context, db planStore, plans billing.Plans, email string, now time.Time) (*planInfo, error) {
	info := &planInfo{Email: email, Plan: billing.Free}
	u, err := db.FindUser(ctx, email)
	switch {
	case err == nil:
		info.Known, info.CustomerID = true, u.CustomerID
		if u.Plan != "" {
			info.Plan = u.Plan
		}
	case board.ErrorCode(err) != board.ENOTFOUND:
		return nil, fmt.Errorf("find user %s: %w", email, err)
	}
	// The limits are the Meter's answer, so an unknown stored plan shows the
	// limits the server applies to it (the default plan's).
	meter := billing.NewMeter(billing.MeterConfig{Store: db, Plans: plans, DefaultPlan: billing.Free, Now: func() time.Time { return now }})
	usage, err := meter.Usage(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("read usage of %s: %w", email, err)
	}
	p := usage.Plan
	info.Month, info.ResetsAt, info.Used = billing.MonthKey(now), usage.ResetsAt, usage.Used
	info.Limit, info.RequestsPerMinute, info.InviteeCanEdit = p.CreditsPerMonth, p.RequestsPerMinute, p.InviteeCanEdit
	return info, nil
}

// setPlan puts email on plan (creating the user's record when they have
// not logged in yet, so the plan is waiting for them) and returns the result.
func setPlan(ctx context.Context, db planStore, plans billing.Plans, email, plan string, now time.Time) (*planInfo, error) {
	var previous string
	if _, err := db.UpdateUser(ctx, email, billing.Free, func(u *persist.User) error {
		previous = u.Plan
		u.Plan = plan
		return nil
	}); err != nil {
		return nil, fmt.Errorf("set plan of %s: %w", email, err)
	}
	info, err := showPlan(ctx, db, plans, email, now)
	if err != nil {
		return nil, err
	}
	info.Previous = cmp.Or(previous, billing.Free)
	return info, nil
}

// parsePlanName checks a plan name given on the command line or the socket.
func parsePlanName(plans billing.Plans, name string) (string, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if !plans.Valid(name) {
		return "", fmt.Errorf("unknown plan %q: the plans are %s", name, strings.Join(billing.Names(), ", "))
	}
	return name, nil
}

const planUsage = `Usage:
  corkboard plan set <email> <plan>   put a user on a plan (free, pro, team)
  corkboard plan show <email>         show a user's plan and this month's AI usage

Works whether or not the server is running: with the server stopped it
opens the data file; while it runs, it asks the server through
<data>/` + AdminSocketName + `. With -store postgres://… (the servers'
-store) it changes the plan in PostgreSQL, which every node reads.

Flags (also CORKBOARD_<FLAG>, e.g. CORKBOARD_DATA; a flag wins):
`

// planCommand runs `corkboard plan …` (args are what follows "plan"). It
// opens the data file directly when no server holds it, and otherwise asks
// the running server through its admin socket (servePlanAdmin).
func planCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("corkboard plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", "./data", "data folder of the corkboard server")
	storeURL := fs.String("store", "", "the server's -store (postgres://…): change the plan in PostgreSQL directly")
	plansFlag := fs.String("plans", "", "plan overrides, as the server's -plans (used only when the server is stopped)")
	plansFile := fs.String("plans-file", "", "plans file, as the server's -plans-file (used only when the server is stopped)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), planUsage)
		fs.PrintDefaults()
	}
	// Flags may come before, between or after the words.
	var words []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"data", "store", "plans", "plans-file"} {
		if v := getenv(envName(name)); v != "" && !set[name] {
			if err := fs.Set(name, v); err != nil {
				return fmt.Errorf("environment variable %s: %w", envName(name), err)
			}
		}
	}

	var email, plan string
	switch {
	case len(words) == 3 && words[0] == "set":
		email, plan = words[1], words[2]
	case len(words) == 2 && words[0] == "show":
		email = words[1]
	default:
		fs.Usage()
		return errors.New("plan: expected `set <email> <plan>` or `show <email>`")
	}
	email, err := mailaddr.Canonical("email", email)
	if err != nil {
		return fmt.Errorf("plan: %s", errText(err))
	}
	plans, err := buildPlans(*plansFlag, *plansFile)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if plan != "" {
		if plan, err = parsePlanName(plans, plan); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
	}

	var info *planInfo
	if *storeURL != "" {
		// PostgreSQL is shared by every node: no server to ask.
		info, err = planStoreURL(ctx, *storeURL, plans, email, plan)
	} else {
		info, err = planLocal(ctx, *dataDir, plans, email, plan)
	}
	if errors.Is(err, bolt.ErrLocked) {
		info, err = planRemote(ctx, filepath.Join(*dataDir, AdminSocketName), email, plan)
		if err != nil {
			return fmt.Errorf("plan: the data file is in use by a running corkboard, and its admin socket did not answer: %w", err)
		}
	}
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	printPlanInfo(stdout, info)
	return nil
}

// planLocal does the work on the data file itself; bolt.ErrLocked when a
// server holds it.
func planLocal(ctx context.Context, dataDir string, plans billing.Plans, email, plan string) (*planInfo, error) {
	path := filepath.Join(dataDir, bolt.FileName)
	if _, err := os.Stat(path); err != nil {
		// Refusing beats creating a stray empty database for a mistyped
		// -data.
		return nil, fmt.Errorf("no Corkboard data file at %s (start corkboard once with this -data, or pass the right -data)", path)
	}
	db, err := bolt.Open(dataDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if plan == "" {
		return showPlan(ctx, db, plans, email, time.Now())
	}
	return setPlan(ctx, db, plans, email, plan, time.Now())
}

// planStoreURL does the work in the PostgreSQL store -store names.
func planStoreURL(ctx context.Context, store string, plans billing.Plans, email, plan string) (*planInfo, error) {
	db, _, err := openStore(ctx, &Config{Store: store})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if plan == "" {
		return showPlan(ctx, db, plans, email, time.Now())
	}
	return setPlan(ctx, db, plans, email, plan, time.Now())
}

// planRemote asks the running server through its admin socket.
func planRemote(ctx context.Context, socketPath, email, plan string) (*planInfo, error) {
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socketPath)
			},
		},
	}
	defer client.CloseIdleConnections()
	var req *http.Request
	var err error
	if plan == "" {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, "http://corkboard/plan?email="+url.QueryEscape(email), nil)
	} else {
		body, _ := json.Marshal(planSetRequest{Email: email, Plan: plan})
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, "http://corkboard/plan", bytes.NewReader(body))
	}
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("the server refused: %s", e.Error)
		}
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	var info planInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	return &info, nil
}

// printPlanInfo writes info for a person.
func printPlanInfo(w io.Writer, info *planInfo) {
	if info.Previous != "" {
		fmt.Fprintf(w, "%s: plan %s -> %s\n", info.Email, info.Previous, info.Plan)
	}
	account := "yes"
	if !info.Known {
		account = "none yet (the plan applies from the first login)"
	} else if info.CustomerID != "" {
		account = "yes, payment customer " + info.CustomerID
	}
	invitees := "view only on boards they are invited to"
	if info.InviteeCanEdit {
		invitees = "may edit boards they are invited to"
	}
	fmt.Fprintf(w, "email:       %s\n", info.Email)
	fmt.Fprintf(w, "plan:        %s\n", info.Plan)
	fmt.Fprintf(w, "account:     %s\n", account)
	fmt.Fprintf(w, "AI credits:  %d of %d used in %s (resets %s)\n", info.Used, info.Limit, info.Month, info.ResetsAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "AI rate:     %d requests per minute\n", info.RequestsPerMinute)
	fmt.Fprintf(w, "as invitee:  %s\n", invitees)
}

// planSetRequest is the body of POST /plan on the admin socket.
type planSetRequest struct {
	Email string `json:"email"`
	Plan  string `json:"plan"`
}

// servePlanAdmin serves the plan admin API on a Unix socket at socketPath,
// for `corkboard plan` while this process holds the data file:
//
//	GET  /plan?email=<email>            → 200 planInfo
//	POST /plan {"email": …, "plan": …}  → 200 planInfo (with previous)
//
// and {"error": …} with 400 for a bad e-mail or plan. The socket is mode
// 0600 in the data folder: file-system permissions are the authentication,
// so only the server's own user (and root) can use it. It is bound under a
// temporary name, restricted, then renamed into place, so it is never
// reachable with looser permissions. A stale socket left by a crash is
// replaced; any other file at socketPath is an error. stop (safe to call
// twice; also run when ctx ends) closes it and removes the file; call it
// before closing db. A plan set is reported to changed (the server's
// Meter; nil for none) as soon as it is stored, so it counts from the
// user's next request.
func servePlanAdmin(ctx context.Context, db planStore, plans billing.Plans, changed cache.Invalidator, socketPath string, log *slog.Logger) (stop func(), err error) {
	if log == nil {
		log = slog.Default()
	}
	if fi, err := os.Lstat(socketPath); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("admin socket %s: a file that is not a socket is in the way", socketPath)
		}
		// We hold the data file, so no other server owns this socket.
		if err := os.Remove(socketPath); err != nil {
			return nil, fmt.Errorf("remove stale admin socket: %w", err)
		}
	}
	tmp := socketPath + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove %s: %w", tmp, err)
	}
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("admin socket %s (%d bytes; Unix socket paths must be short): %w", socketPath, len(tmp), err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("restrict admin socket: %w", err)
	}
	if err := os.Rename(tmp, socketPath); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("place admin socket: %w", err)
	}

	srv := &http.Server{
		Handler:           planAdminHandler(db, plans, changed, log, time.Now),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("plan admin socket stopped", "err", err)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			<-done
			os.Remove(socketPath)
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	}()
	log.Info("plan admin socket listening", "path", socketPath)
	return stop, nil
}

// planAdminHandler is the admin socket's API (see servePlanAdmin).
func planAdminHandler(db planStore, plans billing.Plans, changed cache.Invalidator, log *slog.Logger, now func() time.Time) http.Handler {
	fail := func(w http.ResponseWriter, status int, msg string) {
		writeAdminJSON(w, status, map[string]string{"error": msg})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /plan", func(w http.ResponseWriter, r *http.Request) {
		email, err := mailaddr.Canonical("email", r.URL.Query().Get("email"))
		if err != nil {
			fail(w, http.StatusBadRequest, errText(err))
			return
		}
		info, err := showPlan(r.Context(), db, plans, email, now())
		if err != nil {
			log.Error("plan admin: show", "email", email, "err", err)
			fail(w, http.StatusInternalServerError, "Internal error.")
			return
		}
		writeAdminJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("POST /plan", func(w http.ResponseWriter, r *http.Request) {
		var req planSetRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			fail(w, http.StatusBadRequest, "Body must be {\"email\": …, \"plan\": …}.")
			return
		}
		email, err := mailaddr.Canonical("email", req.Email)
		if err != nil {
			fail(w, http.StatusBadRequest, errText(err))
			return
		}
		plan, err := parsePlanName(plans, req.Plan)
		if err != nil {
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		info, err := setPlan(r.Context(), db, plans, email, plan, now())
		if changed != nil {
			// Even a failed set may have been stored before the failure.
			changed.Invalidate(cache.Plan, email)
		}
		if err != nil {
			log.Error("plan admin: set", "email", email, "err", err)
			fail(w, http.StatusInternalServerError, "Internal error.")
			return
		}
		log.Info("plan set from the command line", "email", email, "from", info.Previous, "to", info.Plan)
		writeAdminJSON(w, http.StatusOK, info)
	})
	return mux
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
