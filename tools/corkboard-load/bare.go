package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
)

// bareServer is a plain net/http server on loopback answering every request
// with one fixed JSON body: what the platform allows, to set Corkboard's
// no-change pulls against in the same run.
type bareServer struct {
	base string
	srv  *http.Server
	done chan struct{}
}

// startBare serves body (with Corkboard's Content-Type and Cache-Control)
// on a free loopback port until stop.
func startBare(body []byte) (*bareServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Type", "application/json; charset=utf-8")
		hd.Set("Cache-Control", "no-store")
		hd.Set("Content-Length", length)
		_, _ = w.Write(body)
	})
	b := &bareServer{base: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h}, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		if err := b.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the run's requests fail and say so
		}
	}()
	return b, nil
}

func (b *bareServer) stop() {
	_ = b.srv.Shutdown(context.Background())
	<-b.done
}

// PullComparison is the no-change pull of Corkboard against the bare
// handler, measured one after the other in the same run with the same
// clients: Ratio is Corkboard's requests/s over the bare handler's (the
// issue's goal is at least 0.6).
type PullComparison struct {
	CorkboardRPS float64 `json:"corkboardRequestsPerSecond"`
	BareRPS      float64 `json:"bareRequestsPerSecond"`
	Ratio        float64 `json:"ratio"`
	// Wrk is the same ratio measured with wrk, when -wrk was given.
	WrkRatio float64 `json:"wrkRatio,omitempty"`
}
