package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"corkboard/ai"
	"corkboard/hub"
	"corkboard/metrics"
	"corkboard/rooms"
)

// The metrics implement the rooms' observer.
var _ rooms.Observer = (*metrics.Metrics)(nil)

// newMetrics builds the collectors when -metrics-addr asks for them, and
// nil otherwise: a server that is not scraped counts nothing. The gauges
// read the hub through h, which run sets once the hub exists and before
// any scrape can come.
func newMetrics(cfg *Config, h **hub.Hub) *metrics.Metrics {
	if cfg.MetricsAddr == "" {
		return nil
	}
	read := func(f func(*hub.Hub) int) func() int {
		return func() int {
			if *h == nil {
				return 0
			}
			return f(*h)
		}
	}
	return metrics.New(metrics.Gauges{
		LiveConnections: read((*hub.Hub).Conns),
		Rooms:           read((*hub.Hub).Rooms),
		LongPolls:       read((*hub.Hub).Waits),
	})
}

// aiUsage is ai.Config.OnUsage for m: nil (nothing to tell) without metrics.
func aiUsage(m *metrics.Metrics) func(context.Context, ai.Usage) {
	if m == nil {
		return nil
	}
	return func(_ context.Context, u ai.Usage) {
		m.AIUsed(string(u.Feature), u.Calls, u.Errors, u.PromptTokens, u.OutputTokens)
	}
}

// observeRooms hands m to every room; without metrics the rooms keep their
// no-op observer (a nil *Metrics in the interface would not be nil).
func observeRooms(o rooms.Options, m *metrics.Metrics) rooms.Options {
	if m != nil {
		o.Observer = m
	}
	return o
}

// serveMetrics starts the metrics listener: GET /metrics, and /healthz and
// /readyz again (ops), which keep answering here, 503 once draining, after
// the public listener has closed for shutdown. It returns a function that
// closes it.
func serveMetrics(addr string, m *metrics.Metrics, ops http.Handler, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("/", ops)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("metrics listening", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	return func() { srv.Close() }, nil
}

// drainFor waits d after /readyz turned 503, so that load balancers see it
// and stop sending requests while this node still serves them; a second
// SIGINT or SIGTERM cuts the wait short. Called before the drain starts,
// so that a second signal is never the one that kills the process.
func drainFor(d time.Duration, log *slog.Logger, startDrain func()) {
	if d <= 0 {
		startDrain()
		return
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	startDrain()
	log.Info("draining: /readyz answers 503; the listener closes after the delay (signal again to skip it)", "delay", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-again:
		log.Info("second signal: stopping now")
	}
}
