package main

import (
	"os"
	"os/signal"
	"syscall"
)

// signalNotify delivers SIGINT and SIGTERM to ch: the tool then stops
// the server it started.
func signalNotify(ch chan os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }
