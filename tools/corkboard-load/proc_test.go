package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\tcorkboard\nVmPeak:\t 2229344 kB\nVmHWM:\t  120000 kB\nVmRSS:\t   99592 kB\nThreads:\t7\n"
	rss, hwm, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if rss != 99592*1024 || hwm != 120000*1024 {
		t.Fatalf("rss=%d hwm=%d, want %d %d", rss, hwm, 99592*1024, 120000*1024)
	}
	for name, bad := range map[string]string{
		"kernel thread": "Name:\tkworker\nThreads:\t1\n",
		"not kB":        "VmHWM:\t 1 MB\nVmRSS:\t 1 MB\n",
		"not a number":  "VmHWM:\t x kB\nVmRSS:\t 1 kB\n",
	} {
		if _, _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields:
	// utime=250 and stime=50 ticks are 3 s.
	stat := "4242 (evil) name (x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 7 0 123 2229344 24898 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Fatalf("CPU=%v, want %v", got, want)
	}
	for _, bad := range []string{"", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -5 0"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The tool reads a live process the same way it reads the server.
func TestReadProcSelf(t *testing.T) {
	s, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSBytes <= 0 || s.HWMBytes < s.RSSBytes {
		t.Fatalf("rss=%d hwm=%d: want 0 < rss <= hwm", s.RSSBytes, s.HWMBytes)
	}
	if _, err := readProc(0); err == nil {
		t.Fatal("readProc(0) succeeded")
	}
}
