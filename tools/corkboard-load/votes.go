package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"corkboard/board"
)

// The votes mode: issue 25's dot vote with a room full of people. The
// owner claims a board with -vote-notes notes and starts a vote of -dots
// dots a person; -voters participants, each logged in as a person of
// their own and invited, hold a live socket on the board; then every
// participant casts their dots at once over REST (POST /votes), and the
// owner reveals. It checks the counts are exact (the revealed results
// against what was cast, the header's totals, every participant's own
// dots) and measures the fan-out: for each dot, from its commit to the
// moment each socket got a changes message at its version or later.
//
// The commit's moment is taken as the earliest moment anyone saw it: the
// POST's answer or the first socket's message. That is after the real
// commit, so the figures are a little low; the same figures from the
// moment the POST was sent (an upper bound: it adds the request's queueing
// and the transaction) come beside them.

// voteFlags are the votes mode's own flags.
type voteFlags struct {
	Voters int
	Dots   int
	Notes  int
}

func (f *voteFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.Voters, "voters", 200, "votes: participants, each a person with a live socket")
	fs.IntVar(&f.Dots, "dots", 3, "votes: dots each participant casts, all at once (the vote's perPerson)")
	fs.IntVar(&f.Notes, "vote-notes", 20, "votes: notes on the board")
}

func (f *voteFlags) check() error {
	switch {
	case f.Voters < 1 || f.Voters > 5000:
		return fmt.Errorf("-voters must be 1 to 5000")
	case f.Dots < 1 || f.Dots > board.MaxDotsPerPerson:
		return fmt.Errorf("-dots must be 1 to %d", board.MaxDotsPerPerson)
	case f.Notes < f.Dots || f.Notes > 1000:
		return fmt.Errorf("-vote-notes must be -dots to 1000 (each participant puts one dot on a note)")
	}
	return nil
}

// spawnVoteArgs lift the login limits per client address (every
// participant logs in from 127.0.0.1) and the owner's invitations an hour
// (30 by default): they are not what is measured.
var spawnVoteArgs = []string{"-otp-ip-limit", "10000/15m", "-otp-verify-ip-limit", "10000/15m", "-invite-limit", "10000/1h"}

// VoteReport is what the votes mode measured.
type VoteReport struct {
	Voters int `json:"voters"`
	Dots   int `json:"dotsEach"`
	Notes  int `json:"notes"`
	// Cast is each POST /votes from sent to answered.
	Cast Summary `json:"cast"`
	// Delivery is each (dot, socket): the commit (first seen) to that
	// socket's message; AllSockets each dot's commit to the last socket's.
	Delivery   Summary `json:"delivery"`
	AllSockets Summary `json:"allSockets"`
	// FromSent are the same from the moment the POST was sent.
	DeliveryFromSent   Summary `json:"deliveryFromSent"`
	AllSocketsFromSent Summary `json:"allSocketsFromSent"`
	// Missing are (dot, socket) pairs never delivered within -drain.
	Missing int `json:"missing"`
	// CastSeconds is from the first dot sent to the last answered.
	CastSeconds float64 `json:"castSeconds"`
	// Reveal is the reveal's commit (first seen, as a dot's) to each
	// socket's message.
	Reveal Summary `json:"reveal"`
	// Exact: the results, the header's totals and everyone's own dots
	// are what was cast.
	// ChangesPerSocket is how many changes messages a socket got for the
	// casts, on average (header-only changes committed together come as
	// one).
	ChangesPerSocket float64 `json:"changesPerSocket"`
	// ToolCPUSecs is this tool's own CPU over the casts: it shares the
	// machine with the server.
	ToolCPUSecs   float64  `json:"toolCpuSeconds"`
	Exact         bool     `json:"exact"`
	Mismatches    []string `json:"mismatches,omitempty"`
	ServerCPUSecs float64  `json:"serverCpuSeconds,omitempty"`
}

// participant is one person on the board.
type participant struct {
	email string
	api   *api
	conn  *websocket.Conn
	// seen are the versions of the changes messages the socket got, in
	// order, with when (since the run's t0); written by the reader only.
	mu   sync.Mutex // guards seen
	seen []seenAt
	done chan struct{}
	err  error
}

type seenAt struct {
	version int64
	at      time.Duration
}

// dotCast is one dot as cast.
type dotCast struct {
	voter    int
	noteID   string
	sent, at time.Duration // sent and answered, since t0
	version  int64
	err      error
}

// serverVersionKey precedes a changes message's version.
var serverVersionKey = []byte(`"serverVersion":`)

// messageVersion is a changes message's serverVersion (0 when it has none).
func messageVersion(data []byte) int64 {
	i := bytes.LastIndex(data, serverVersionKey)
	if i < 0 {
		return 0
	}
	rest := data[i+len(serverVersionKey):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	v, _ := strconv.ParseInt(string(rest[:end]), 10, 64)
	return v
}

// noteOf is the note participant v's k-th dot goes on: spread so that
// counts differ from note to note (and ties happen), never twice the
// same note for one person.
func noteOf(v, k, notes, dots int) string {
	return fmt.Sprintf("vn%d", (v*7+k*(notes/dots))%notes)
}

// runVotes is the votes mode. owner is logged in.
func runVotes(ctx context.Context, cfg *Config, rep *Report, owner *api, base, outbox string, pid int, prefix string, log *slog.Logger) error {
	f := cfg.Votes
	id := prefix + "-vote"
	if err := owner.claim(ctx, id); err != nil {
		return err
	}
	notes := make([]board.Note, f.Notes)
	for i := range notes {
		notes[i] = board.Note{ID: fmt.Sprintf("vn%d", i), Title: fmt.Sprintf("Idea %d", i), X: float64(i%10) * 240, Y: float64(i/10) * 180,
			Color: "yellow", UpdatedAt: "2026-11-27T09:00:00Z"}
	}
	if _, err := owner.do(ctx, "POST", "/api/boards/"+id+"/sync", board.Push{Notes: board.NoteChanges{Upserted: notes, Deleted: []string{}},
		TrackerItems: board.ItemChanges{Upserted: []board.TrackerItem{}, Deleted: []string{}}}, nil); err != nil {
		return err
	}

	// Log everyone in and invite them (16 at a time), then open the sockets.
	log.Info("logging participants in", "voters", f.Voters)
	ps := make([]*participant, f.Voters)
	idx := make([]string, f.Voters)
	for i := range ps {
		idx[i] = strconv.Itoa(i)
	}
	t0 := time.Now()
	err := forEach(ctx, idx, 16, func(ctx context.Context, s string) error {
		i, _ := strconv.Atoi(s)
		a, err := newAPI(base, 8)
		if err != nil {
			return err
		}
		p := &participant{email: fmt.Sprintf("%s-p%03d@example.com", prefix, i), api: a, done: make(chan struct{})}
		if err := a.login(ctx, p.email, outbox); err != nil {
			return fmt.Errorf("log %s in: %w", p.email, err)
		}
		if _, err := owner.do(ctx, "POST", "/api/boards/"+id+"/invite", map[string]string{"email": p.email}, nil); err != nil {
			return err
		}
		ps[i] = p
		return nil
	})
	if err != nil {
		return err
	}
	log.Info("opening sockets", "voters", f.Voters, "logins took", time.Since(t0).Round(time.Millisecond))
	var msgs sync.WaitGroup
	var total int64
	var totalMu sync.Mutex
	err = forEach(ctx, idx, cfg.DialConcurrency, func(ctx context.Context, s string) error {
		i, _ := strconv.Atoi(s)
		p := ps[i]
		conn, err := p.api.dialLive(ctx, id)
		if err != nil {
			return err
		}
		p.conn = conn
		msgs.Add(1)
		go func() {
			defer msgs.Done()
			defer close(p.done)
			for {
				_, data, err := conn.Read(context.Background())
				if err != nil {
					p.err = err
					return
				}
				totalMu.Lock()
				total++
				totalMu.Unlock()
				if bytes.HasPrefix(data, changesPrefix) {
					at := time.Since(t0)
					p.mu.Lock()
					p.seen = append(p.seen, seenAt{messageVersion(data), at})
					p.mu.Unlock()
				}
			}
		}()
		return nil
	})
	defer func() {
		for _, p := range ps {
			if p != nil && p.conn != nil {
				p.conn.Close(websocket.StatusNormalClosure, "")
			}
		}
		msgs.Wait()
	}()
	if err != nil {
		return err
	}
	// The joins' presence messages die down before the vote.
	settle := time.Now().Add(cfg.SettleMax)
	for last := int64(-1); time.Now().Before(settle); {
		time.Sleep(500 * time.Millisecond)
		totalMu.Lock()
		n := total
		totalMu.Unlock()
		if n == last {
			break
		}
		last = n
	}

	var v board.Vote
	if _, err := owner.do(ctx, "POST", "/api/boards/"+id+"/vote", map[string]any{"action": "start", "perPerson": f.Dots, "perNote": 1}, &v); err != nil {
		return err
	}
	time.Sleep(200 * time.Millisecond) // the start's own fan-out, out of the way
	probe := newProber(pid)
	cpu0, self0 := probe.cpu(), selfCPU()
	var before int
	for _, p := range ps {
		p.mu.Lock()
		before += len(p.seen)
		p.mu.Unlock()
	}

	// Everyone casts every dot at once.
	log.Info("casting", "dots", f.Voters*f.Dots)
	casts := make([]*dotCast, 0, f.Voters*f.Dots)
	for v := range f.Voters {
		for k := range f.Dots {
			casts = append(casts, &dotCast{voter: v, noteID: noteOf(v, k, f.Notes, f.Dots)})
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range casts {
		wg.Go(func() {
			<-start
			var ans struct {
				ServerVersion int64 `json:"serverVersion"`
			}
			c.sent = time.Since(t0)
			_, c.err = ps[c.voter].api.do(ctx, "POST", "/api/boards/"+id+"/votes", map[string]any{"noteId": c.noteID, "delta": 1}, &ans)
			c.at, c.version = time.Since(t0), ans.ServerVersion
		})
	}
	close(start)
	wg.Wait()
	var last int64
	for _, c := range casts {
		if c.err != nil {
			return fmt.Errorf("dot of participant %d on %s: %w", c.voter, c.noteID, c.err)
		}
		last = max(last, c.version)
	}
	// Every socket reaches the last dot's version, or -drain runs out.
	drain := time.Now().Add(cfg.Drain)
	for _, p := range ps {
		for !reached(p, last) && time.Now().Before(drain) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if cpu1 := probe.cpu(); cpu0 >= 0 && cpu1 >= 0 {
		rep.Votes = &VoteReport{ServerCPUSecs: (cpu1 - cpu0).Seconds()}
	} else {
		rep.Votes = &VoteReport{}
	}
	r := rep.Votes
	r.Voters, r.Dots, r.Notes = f.Voters, f.Dots, f.Notes
	r.ToolCPUSecs = (selfCPU() - self0).Seconds()
	after := 0
	for _, p := range ps {
		p.mu.Lock()
		after += len(p.seen)
		p.mu.Unlock()
	}
	r.ChangesPerSocket = float64(after-before) / float64(len(ps))
	measureVotes(r, casts, ps)

	// The reveal, and the checks.
	if _, err := owner.do(ctx, "POST", "/api/boards/"+id+"/vote", map[string]any{"action": "reveal"}, &v); err != nil {
		return err
	}
	revealAt := time.Since(t0)
	rv, err := owner.versionOf(ctx, id)
	if err != nil {
		return err
	}
	drain = time.Now().Add(cfg.Drain)
	var ats []time.Duration
	commit := revealAt
	for _, p := range ps {
		for !reached(p, rv) && time.Now().Before(drain) {
			time.Sleep(20 * time.Millisecond)
		}
		if at, ok := firstAt(p, rv); ok {
			ats = append(ats, at)
			commit = min(commit, at)
		} else {
			r.Missing++
		}
	}
	var reveal []time.Duration
	for _, at := range ats {
		reveal = append(reveal, at-commit)
	}
	r.Reveal = summarize(reveal)
	r.Mismatches = checkVote(ctx, &v, casts, ps, id, f)
	r.Exact = len(r.Mismatches) == 0
	log.Info("votes done", "exact", r.Exact, "all sockets p99 ms", r.AllSockets.P99Ms)
	return nil
}

// reached reports whether p's socket got a changes message at version v
// or later.
func reached(p *participant, v int64) bool {
	_, ok := firstAt(p, v)
	return ok
}

// firstAt is when p's socket first got a changes message at version v or
// later.
func firstAt(p *participant, v int64) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.seen, v, func(s seenAt, v int64) int {
		return int(min(max(s.version-v, -1), 1))
	})
	if i == len(p.seen) {
		return 0, false
	}
	return p.seen[i].at, true
}

// measureVotes computes the fan-out figures of the casts.
func measureVotes(r *VoteReport, casts []*dotCast, ps []*participant) {
	var cast, del, all, delSent, allSent []time.Duration
	first, last := casts[0].sent, casts[0].at
	for _, c := range casts {
		cast = append(cast, c.at-c.sent)
		first, last = min(first, c.sent), max(last, c.at)
		commit := c.at
		ats := make([]time.Duration, 0, len(ps))
		missing := false
		for _, p := range ps {
			at, ok := firstAt(p, c.version)
			if !ok {
				r.Missing++
				missing = true
				continue
			}
			ats = append(ats, at)
			commit = min(commit, at)
		}
		var worst, worstSent time.Duration
		for _, at := range ats {
			del = append(del, at-commit)
			delSent = append(delSent, at-c.sent)
			worst, worstSent = max(worst, at-commit), max(worstSent, at-c.sent)
		}
		if !missing {
			all = append(all, worst)
			allSent = append(allSent, worstSent)
		}
	}
	r.Cast = summarize(cast)
	r.Delivery, r.AllSockets = summarize(del), summarize(all)
	r.DeliveryFromSent, r.AllSocketsFromSent = summarize(delSent), summarize(allSent)
	r.CastSeconds = (last - first).Seconds()
}

// checkVote compares the revealed vote, the header and everyone's own
// dots with what was cast; it returns what differs.
func checkVote(ctx context.Context, v *board.Vote, casts []*dotCast, ps []*participant, id string, f voteFlags) []string {
	var out []string
	want := map[string]int{}
	for _, c := range casts {
		want[c.noteID]++
	}
	got := map[string]int{}
	for _, res := range v.Results {
		got[res.NoteID] = res.Count
	}
	for n, c := range want {
		if got[n] != c {
			out = append(out, fmt.Sprintf("note %s: revealed %d dots, %d cast", n, got[n], c))
		}
	}
	if len(got) != len(want) {
		out = append(out, fmt.Sprintf("%d notes in the results, %d got dots", len(got), len(want)))
	}
	if v.State != board.VoteRevealed || v.Voters != f.Voters || v.Dots != f.Voters*f.Dots {
		out = append(out, fmt.Sprintf("vote %s with %d voters and %d dots, want revealed with %d and %d", v.State, v.Voters, v.Dots, f.Voters, f.Voters*f.Dots))
	}
	for i, p := range ps {
		var mine struct {
			Mine map[string]int `json:"mine"`
		}
		if _, err := p.api.do(ctx, "GET", "/api/boards/"+id+"/votes/mine", nil, &mine); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", p.email, err))
			continue
		}
		for k := range f.Dots {
			if mine.Mine[noteOf(i, k, f.Notes, f.Dots)] != 1 {
				out = append(out, fmt.Sprintf("%s: own dots %v, want one on %s", p.email, mine.Mine, noteOf(i, k, f.Notes, f.Dots)))
				break
			}
		}
	}
	return out
}

func printVotes(w io.Writer, r *VoteReport) {
	verdict := "exact"
	if !r.Exact {
		verdict = "NOT exact"
	}
	fmt.Fprintf(w, "\nvotes: %d participants with a live socket each, %d dots each cast at once over REST (%d dots in %.2f s), on %d notes: counts %s\n",
		r.Voters, r.Dots, r.Voters*r.Dots, r.CastSeconds, r.Notes, verdict)
	line := func(name string, s Summary) {
		fmt.Fprintf(w, "  %-44s n=%-7d p50 %8.2f ms  p90 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n", name, s.Count, s.P50Ms, s.P90Ms, s.P99Ms, s.MaxMs)
	}
	line("cast (POST sent → answered)", r.Cast)
	line("fan-out, each socket (commit → message)", r.Delivery)
	line("fan-out, every socket (commit → last one)", r.AllSockets)
	line("each socket, from the POST sent", r.DeliveryFromSent)
	line("every socket, from the POST sent", r.AllSocketsFromSent)
	line("reveal, each socket (commit → message)", r.Reveal)
	fmt.Fprintf(w, "  changes messages per socket %.1f, missing deliveries %d, server CPU %.2f s, this tool's CPU %.2f s\n", r.ChangesPerSocket, r.Missing, r.ServerCPUSecs, r.ToolCPUSecs)
	for _, m := range r.Mismatches {
		fmt.Fprintln(w, "  mismatch:", m)
	}
}

var errVotesNoOutbox = errors.New("-mode votes logs every participant in through the outbox: use -spawn-corkboard or -outbox")
