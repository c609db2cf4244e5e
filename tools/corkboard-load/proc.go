package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat: 100 on every architecture Go supports on Linux.
const clockTicks = 100

// ProcSample is a server process's memory and CPU at one moment.
type ProcSample struct {
	// RSSBytes is VmRSS: resident memory now.
	RSSBytes int64 `json:"rssBytes"`
	// HWMBytes is VmHWM: the most resident memory the process ever had.
	HWMBytes int64 `json:"hwmBytes"`
	// CPU is user plus system time since the process started.
	CPU time.Duration `json:"-"`
	// CPUSeconds is CPU in seconds, for JSON.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// readProc samples /proc/<pid>/status and /proc/<pid>/stat.
func readProc(pid int) (ProcSample, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcSample{}, fmt.Errorf("server process %d: %w", pid, err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcSample{}, fmt.Errorf("server process %d: %w", pid, err)
	}
	rss, hwm, err := parseStatus(status)
	if err != nil {
		return ProcSample{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return ProcSample{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return ProcSample{RSSBytes: rss, HWMBytes: hwm, CPU: cpu, CPUSeconds: cpu.Seconds()}, nil
}

// parseStatus reads VmRSS and VmHWM (in kB) from a /proc/<pid>/status file.
func parseStatus(data []byte) (rss, hwm int64, err error) {
	found := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("%s: unexpected value %q", name, rest)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 {
			return 0, 0, fmt.Errorf("%s: unexpected value %q", name, rest)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("VmRSS or VmHWM missing (a zombie or a kernel thread?)")
	}
	return rss, hwm, nil
}

// parseStatCPU reads utime + stime from a /proc/<pid>/stat line. The command
// name (field 2) may hold spaces and parentheses, so fields are counted from
// the last ')'.
func parseStatCPU(data []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name")
	}
	// After ')': field 3 (state) is fields[0], so utime (14) and stime (15)
	// are fields[11] and fields[12].
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("CPU ticks %q", f)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// loadAverage reads the 1, 5 and 15 minute load averages.
func loadAverage() [3]float64 {
	var la [3]float64
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return la
	}
	f := strings.Fields(string(data))
	for i := 0; i < 3 && i < len(f); i++ {
		la[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return la
}
