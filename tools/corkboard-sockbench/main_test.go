package main

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain makes the test binary a server process when measure starts it.
func TestMain(m *testing.M) {
	if e := os.Getenv(serveEnv); e != "" {
		if err := runServer(e, os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestMeasure: every engine serves 20 connections, every message reaches
// every client, and the figures are what was asked for.
func TestMeasure(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the measurement reads /proc, and fast is Linux's")
	}
	for _, engine := range []string{"fast", "plain", "nbio", "nbio-std"} {
		t.Run(engine, func(t *testing.T) {
			res, err := measure(engine, 1, 20, 5, 300, 10*time.Millisecond, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Delivered != 100 || res.Conns != 20 || res.RSSHeld == 0 {
				t.Fatalf("%+v: want 100 messages delivered to 20 connections", res)
			}
			if engine == "plain" && res.Goroutines < 20 {
				t.Fatalf("plain holds %d goroutines for 20 connections, want a reader each", res.Goroutines)
			}
			if engine == "fast" && res.Goroutines >= 20 {
				t.Fatalf("fast holds %d goroutines for 20 idle connections", res.Goroutines)
			}
		})
	}
}
