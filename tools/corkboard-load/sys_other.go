//go:build !unix

package main

import (
	"errors"
	"time"
)

// raiseNoFile reports that this platform has no open-file limit to raise
// (Windows limits sockets otherwise); the tool runs on with what it has.
func raiseNoFile() (uint64, error) {
	return 0, errors.New("no open-file limit on this platform")
}

// selfCPU is 0 where getrusage(2) is missing: reports show no tool CPU.
func selfCPU() time.Duration { return 0 }
