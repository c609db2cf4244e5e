package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"corkboard/auth"
	"corkboard/billing"
	"corkboard/hub"
	"corkboard/persist"
	"corkboard/rooms"
	"corkboard/transport"
)

// service is a Corkboard server assembled from its packages the way
// cmd/corkboard assembles it (defaults, outbox mail), for the smoke test
// and for -mode serve, the profiling stand-in. It is not a second server:
// it only exists because the real binary has no profiling switch.
type service struct {
	Handler http.Handler
	Outbox  string
	db      *persist.DB
	auth    *auth.Service
	hub     *hub.Hub
}

// newService opens dataDir and builds the HTTP handler for publicURL.
func newService(dataDir, publicURL string, log *slog.Logger) (*service, error) {
	db, err := persist.Open(dataDir)
	if err != nil {
		return nil, err
	}
	outbox := filepath.Join(dataDir, "outbox")
	mailer, err := auth.NewMailer("", "Corkboard <noreply@localhost>", outbox, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	authSvc := auth.New(db, mailer, auth.Config{DefaultPlan: billing.Free}, log)
	authSvc.Start(context.Background())
	// As for a spawned corkboard (unlimitedLive): the abuse limits are
	// lifted, since the tool is one person doing everything.
	const lots = 1_000_000
	h := hub.New(db, hub.Options{
		MaxConnsPerUserBoard: lots, MaxConnsPerUser: lots, MaxConns: lots,
		UserPushRate: lots, UserPushBurst: lots,
		Room:   rooms.Options{PushRate: lots, PushBurst: lots},
		Logger: log,
	})
	handler := transport.New(transport.Config{PublicURL: publicURL, DefaultPlan: billing.Free},
		transport.Deps{DB: db, Auth: authSvc, Hub: h, Plans: billing.DefaultPlans()}, log)
	return &service{Handler: handler, Outbox: outbox, db: db, auth: authSvc, hub: h}, nil
}

// CloseRooms stops the rooms, closing their sockets; cmd/corkboard runs it
// alongside the HTTP server's shutdown, since sockets are hijacked
// connections that shutdown does not wait for.
func (s *service) CloseRooms(ctx context.Context) error { return s.hub.Close(ctx) }

// CloseStorage drains the mail queue and closes storage, after HTTP and
// the rooms.
func (s *service) CloseStorage(ctx context.Context) {
	_ = s.auth.Close(ctx)
	_ = s.db.Close()
}

// serve is -mode serve: the service on addr with its log on out, a CPU
// profile written to cpuProfile (when set) from start to shutdown, until
// ctx ends.
func serve(ctx context.Context, addr, dataDir, cpuProfile string, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(out, nil))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if !isLoopbackHost(ln.Addr().(*net.TCPAddr).IP.String()) {
		ln.Close()
		return fmt.Errorf("serve listens on loopback only, not %s", addr)
	}
	base := "http://" + ln.Addr().String()
	svc, err := newService(dataDir, base, log)
	if err != nil {
		ln.Close()
		return err
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			ln.Close()
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			ln.Close()
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// The same timeouts as cmd/corkboard.
	srv := &http.Server{
		Handler: svc.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
	}
	log.Info("corkboard (profiling stand-in) listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rooms := make(chan error, 1)
	go func() { rooms <- svc.CloseRooms(sctx) }()
	err = srv.Shutdown(sctx)
	<-rooms
	svc.CloseStorage(sctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
