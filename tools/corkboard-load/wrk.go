package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// WrkResult is what wrk reported for one run.
type WrkResult struct {
	Command       string             `json:"command"`
	Requests      int64              `json:"requests"`
	RequestsPerS  float64            `json:"requestsPerSecond"`
	Non2xx        int64              `json:"non2xx"`
	SocketErrors  int64              `json:"socketErrors"`
	LatencyMs     map[string]float64 `json:"latencyMs"` // "50", "75", "90", "99"
	Output        string             `json:"-"`
	ServerCPUSecs float64            `json:"serverCpuSeconds,omitempty"`
}

// parseWrk reads wrk's report (run with --latency).
func parseWrk(out string) (WrkResult, error) {
	r := WrkResult{LatencyMs: map[string]float64{}, Output: out}
	inDist := false
	haveRate := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "Latency Distribution"):
			inDist = true
		case inDist && len(f) == 2 && strings.HasSuffix(f[0], "%"):
			d, err := parseWrkDuration(f[1])
			if err != nil {
				return r, fmt.Errorf("wrk latency %q: %w", line, err)
			}
			r.LatencyMs[strings.TrimSuffix(strings.TrimSuffix(f[0], "%"), ".000")] = ms(d)
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			inDist = false
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return r, fmt.Errorf("wrk request count %q", line)
			}
			r.Requests = n
		case strings.HasPrefix(line, "Requests/sec:") && len(f) == 2:
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return r, fmt.Errorf("wrk rate %q", line)
			}
			r.RequestsPerS, haveRate = v, true
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:") && len(f) > 0:
			r.Non2xx, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
		case strings.HasPrefix(line, "Socket errors:"):
			// "Socket errors: connect 0, read 0, write 0, timeout 0"
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				r.SocketErrors += n
			}
		}
	}
	if !haveRate {
		return r, fmt.Errorf("no Requests/sec line in wrk's output")
	}
	return r, nil
}

// parseWrkDuration reads wrk's durations: 812.00us, 1.23ms, 2.00s, 1.00m.
func parseWrkDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, err
			}
			return time.Duration(v * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("unknown unit")
}

// runWrk runs wrk against url for d with conns connections on threads
// threads and the given headers, and parses its report.
func runWrk(ctx context.Context, wrk, url string, threads, conns int, d time.Duration, headers map[string]string) (WrkResult, error) {
	args := []string{"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", fmt.Sprintf("%ds", max(1, int(d.Seconds()))), "--latency"}
	shown := append([]string{wrk}, args...)
	for k, v := range headers {
		args = append(args, "-H", k+": "+v)
		if k == "Cookie" {
			v = "session=<session>"
		}
		shown = append(shown, "-H", strconv.Quote(k+": "+v))
	}
	args = append(args, url)
	shown = append(shown, url)
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, wrk, args...).CombinedOutput()
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk: %w: %s", err, out)
	}
	r, err := parseWrk(string(out))
	r.Command = strings.Join(shown, " ")
	return r, err
}
