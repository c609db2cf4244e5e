package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"time"
)

// startCPUProfile asks the server's profiler at pprofBase (corkboard
// -pprof) for a CPU profile of d and writes it to file in the background.
// The file is created first, so a bad path fails at once; wait blocks until
// the profile is written (about d after the start) and returns its error.
func startCPUProfile(ctx context.Context, pprofBase, file string, d time.Duration) (wait func() error, err error) {
	if _, err := checkLoopbackURL(pprofBase); err != nil {
		return nil, err
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	seconds := int(math.Ceil(d.Seconds()))
	url := pprofBase + "/debug/pprof/profile?seconds=" + strconv.Itoa(seconds)
	done := make(chan error, 1)
	go func() {
		done <- fetchProfile(ctx, url, f, time.Duration(seconds)*time.Second+30*time.Second)
	}()
	return func() error { return <-done }, nil
}

// fetchProfile GETs url into f (and closes it) within timeout.
func fetchProfile(ctx context.Context, url string, f *os.File, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		f.Close()
		return err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		f.Close()
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		f.Close()
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, res.Status, msg)
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return f.Close()
}
