//go:build unix

package main

import (
	"syscall"
	"time"
)

// wantNoFile is the open-file limit the tool asks for: 50,000 idle
// connections take a descriptor each in the tool and in the server.
const wantNoFile = 200_000

// raiseNoFile raises the open-file limit: both limits to wantNoFile where
// the process may (root), else the soft limit to the hard one (10,000
// sockets need more than the usual 1,024). A server the tool starts
// inherits it. It returns the limit now.
func raiseNoFile() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Max < wantNoFile {
		more := syscall.Rlimit{Cur: wantNoFile, Max: wantNoFile}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &more) == nil {
			return wantNoFile, nil
		}
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, err
		}
	}
	// Rlimit's fields are uint64 on Linux and macOS, int64 on the BSDs.
	return uint64(lim.Cur), nil
}

// selfCPU is the load tool's own CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
