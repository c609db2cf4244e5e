package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"corkboard/internal/stagelog"
)

// checkPprofAddr refuses a -pprof address that is not on the loopback
// interface: profiles and goroutine dumps show what the process holds
// (sessions, codes, notes), so they are never served to the network.
func checkPprofAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-pprof %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-pprof must be a loopback address such as 127.0.0.1:6060 or [::1]:6060, not %q: profiles show the process's memory", addr)
	}
	return nil
}

// listenPprof listens on addr (checked by checkPprofAddr) and makes sure
// the name it was given resolved to a loopback address.
func listenPprof(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-pprof: listen on %s: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("-pprof %s listens on %s, which is not loopback", addr, ln.Addr())
	}
	return ln, nil
}

// newPprofServer serves net/http/pprof's handlers under /debug/pprof/ on a
// mux of its own, never on the API's router. Its write timeout leaves room
// for a CPU profile or trace of up to 30 minutes (pprof refuses longer).
//
// stages, when not nil, is served at /debug/corkboard/stages: the fan-out's
// stage timelines and the runtime's seconds (internal/stagelog).
func newPprofServer(log *slog.Logger, stages *stagelog.Log) *http.Server {
	mux := http.NewServeMux()
	if stages != nil {
		mux.Handle("/debug/corkboard/stages", stages)
	}
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &http.Server{
		Handler:           loopbackHostOnly(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      31 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// loopbackHostOnly refuses requests whose Host header is not localhost or a
// loopback address (any port). Listening on loopback is not enough: a web
// page whose own name was rebound to 127.0.0.1 (DNS rebinding) reaches the
// listener with that name as Host, and could then read
// /debug/pprof/cmdline, which shows every flag given on the command line.
func loopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			http.Error(w, "pprof answers only requests to localhost or a loopback address", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether a Host header (with or without a port)
// names localhost or a loopback IP address.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
