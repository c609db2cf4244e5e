package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"corkboard/board"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/postgres"
)

// migrateCheckBatch is how many boards one conflict check asks the target
// about.
const migrateCheckBatch = 1000

// migrateCommand is `corkboard migrate --from <data>/corkboard.db --to
// postgres://…`: it copies a bbolt installation into PostgreSQL record for
// record, then counts both sides and fails on any difference. Running it
// again adds nothing (docs/postgres.md, "Moving from bbolt").
func migrateCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("corkboard migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the bbolt file to copy (<data>/corkboard.db), or its data folder")
	to := fs.String("to", getenv("CORKBOARD_STORE"), "the PostgreSQL database to copy into (postgres://…; env CORKBOARD_STORE)")
	store := fs.String("store", "", "the same as --to (so that `corkboard -store postgres://… migrate` works)")
	dataDir := fs.String("data", "", "the data folder whose corkboard.db to copy, when --from is not given")
	lockWait := fs.Duration("lock-timeout", 2*time.Second, "how long to wait for the bbolt file's lock before giving up")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: corkboard migrate --from <data>/corkboard.db --to postgres://…")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate: unexpected argument %q", fs.Arg(0))
	}
	src := *from
	if src == "" {
		src = *dataDir
	}
	if src == "" {
		return errors.New("migrate: --from is required (the bbolt file, <data>/corkboard.db)")
	}
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		src = filepath.Join(src, bolt.FileName)
	}
	toSet := false
	fs.Visit(func(f *flag.Flag) { toSet = toSet || f.Name == "to" })
	if *store != "" && !toSet {
		*to = *store
	}
	if !strings.HasPrefix(*to, "postgres://") && !strings.HasPrefix(*to, "postgresql://") {
		return errors.New("migrate: --to must be a postgres:// URL")
	}
	where := "postgres"
	if u, err := url.Parse(*to); err == nil {
		where = u.Redacted()
	}

	srcDB, err := bolt.OpenReadOnly(src, *lockWait)
	if err != nil {
		if errors.Is(err, bolt.ErrLocked) {
			return fmt.Errorf("migrate: %w: stop the corkboard server using it first (a copy of a live file would miss what it writes meanwhile)", err)
		}
		return fmt.Errorf("migrate: %w", err)
	}
	defer srcDB.Close()
	// A damaged file is refused before anything is written to the target:
	// reading a damaged page panics in bbolt, or kills the process.
	if err := srcDB.Check(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	dst, err := postgres.Open(ctx, *to)
	if err != nil {
		return fmt.Errorf("migrate: --to %s: %w", where, err)
	}
	defer dst.Close()

	fmt.Fprintf(stdout, "migrating %s -> %s\n", src, where)
	res, err := migrate(ctx, srcDB, dst)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	res.print(stdout)
	if diffs := res.differences(); len(diffs) > 0 {
		for _, d := range diffs {
			fmt.Fprintln(stderr, "mismatch:", d)
		}
		return fmt.Errorf("migrate: %d mismatches between %s and %s (see above)", len(diffs), src, where)
	}
	fmt.Fprintln(stdout, "counts match")
	return nil
}

// migration is what one run did: the source's counts, the target's after
// the copy, and what the copy added.
type migration struct {
	source, target persist.DumpCounts
	added          map[string]int64
	records        int64
	// took is the whole run; counting is the part spent counting and
	// digesting the target after the copy.
	took, counting time.Duration
}

// migrate checks that the target holds no other installation's version of
// a source board, copies every record, and counts both sides.
func migrate(ctx context.Context, src *bolt.DB, dst *postgres.Store) (*migration, error) {
	start := time.Now()
	var batch []persist.BoardRecord
	check := func() error {
		err := dst.CheckBoards(ctx, batch)
		batch = batch[:0]
		return err
	}
	err := src.ExportBoards(ctx, func(r persist.BoardRecord) error {
		batch = append(batch, r)
		if len(batch) == migrateCheckBatch {
			return check()
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	if err != nil {
		if board.ErrorCode(err) == board.ECONFLICT {
			return nil, fmt.Errorf("refusing to copy, nothing was written: %s", errText(err))
		}
		return nil, err
	}

	im := dst.NewImporter()
	sink := &countingSink{DumpSink: im, counts: persist.NewDumpCounts()}
	if err := src.Export(ctx, sink); err != nil {
		return nil, err
	}
	sink.finish()
	if err := im.Flush(ctx); err != nil {
		return nil, err
	}
	counting := time.Now()
	target, err := dst.DumpCounts(ctx)
	if err != nil {
		return nil, err
	}
	return &migration{source: sink.counts, target: target, added: im.Added(), records: sink.records,
		took: time.Since(start), counting: time.Since(counting)}, nil
}

// print writes the table of counts: one line per kind, source, target and
// added by this run.
func (m *migration) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tbbolt\tpostgres\tnew\t")
	for _, k := range persist.CountKinds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", k, m.source.Kinds[k], m.target.Kinds[k], m.added[k])
	}
	tw.Flush()
	secs := m.took.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	fmt.Fprintf(w, "%d records checked, copied and counted in %s (%.0f records/s; counting the target took %s); %d boards compared one by one\n",
		m.records, m.took.Round(time.Millisecond), float64(m.records)/secs, m.counting.Round(time.Millisecond), len(m.source.Boards))
}

// differences lists every count that differs between the two sides: per
// kind, then per board (version, horizon, live rows, tombstones,
// revisions, keys, changelog entries, snapshots), at most 20 boards named.
func (m *migration) differences() []string {
	var out []string
	for _, k := range persist.CountKinds {
		if m.source.Kinds[k] != m.target.Kinds[k] {
			out = append(out, fmt.Sprintf("%s: %d in bbolt, %d in PostgreSQL", k, m.source.Kinds[k], m.target.Kinds[k]))
		}
	}
	ids := make([]string, 0, len(m.source.Boards))
	for id := range m.source.Boards {
		ids = append(ids, id)
	}
	for id := range m.target.Boards {
		if _, ok := m.source.Boards[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	named := 0
	for _, id := range ids {
		s, sok := m.source.Boards[id]
		t, tok := m.target.Boards[id]
		if sok && tok && s == t {
			continue
		}
		if named++; named > 20 {
			out = append(out, "… and more boards")
			break
		}
		switch {
		case !tok:
			out = append(out, fmt.Sprintf("board %s: not in PostgreSQL", id))
		case !sok:
			out = append(out, fmt.Sprintf("board %s: in PostgreSQL only", id))
		default:
			// The digests are left out of the message: they only say
			// whether the rows are the same.
			sameRows := s.Rows == t.Rows
			s.Rows, t.Rows = [32]byte{}, [32]byte{}
			if s == t && !sameRows {
				out = append(out, fmt.Sprintf("board %s: the same counts, but rows with other contents", id))
			} else {
				out = append(out, fmt.Sprintf("board %s: bbolt %+v, PostgreSQL %+v", id, s, t))
			}
		}
	}
	return out
}

// countingSink counts what passes through it to DumpSink, per kind and per
// board: the source's side of the comparison.
type countingSink struct {
	persist.DumpSink
	counts  persist.DumpCounts
	records int64
	// digest is the rows digest of board cur, whose rows are coming.
	cur    string
	digest *persist.RowsDigest
}

// finish stores the digest of the board whose rows came last.
func (c *countingSink) finish() {
	if c.digest != nil {
		c.board(c.cur, func(b *persist.BoardCounts) { b.Rows = c.digest.Sum() })
		c.digest = nil
	}
}

// count counts a record of kind, and on board boardID's counts too when
// the kind is counted per board ("": a record of no board).
func (c *countingSink) count(kind, boardID string) {
	c.counts.Kinds[kind]++
	c.records++
	if boardID == "" {
		return
	}
	c.board(boardID, func(b *persist.BoardCounts) {
		if n := b.Of(kind); n != nil {
			*n++
		}
	})
}

func (c *countingSink) board(id string, fn func(*persist.BoardCounts)) {
	b := c.counts.Boards[id]
	fn(&b)
	c.counts.Boards[id] = b
}

func (c *countingSink) Secret(ctx context.Context, s []byte) error {
	c.count(persist.CountSecret, "")
	return c.DumpSink.Secret(ctx, s)
}

func (c *countingSink) User(ctx context.Context, u persist.User) error {
	c.count(persist.CountUsers, "")
	return c.DumpSink.User(ctx, u)
}

func (c *countingSink) Customer(ctx context.Context, r persist.CustomerRecord) error {
	c.count(persist.CountCustomers, "")
	return c.DumpSink.Customer(ctx, r)
}

func (c *countingSink) BillingEvent(ctx context.Context, r persist.BillingEventRecord) error {
	c.count(persist.CountBillingEvents, "")
	return c.DumpSink.BillingEvent(ctx, r)
}

func (c *countingSink) Usage(ctx context.Context, r persist.UsageRecord) error {
	c.count(persist.CountUsage, "")
	return c.DumpSink.Usage(ctx, r)
}

func (c *countingSink) Session(ctx context.Context, r persist.SessionRecord) error {
	c.count(persist.CountSessions, "")
	return c.DumpSink.Session(ctx, r)
}

func (c *countingSink) OTP(ctx context.Context, r persist.OTPRecord) error {
	c.count(persist.CountOTPs, "")
	return c.DumpSink.OTP(ctx, r)
}

func (c *countingSink) Board(ctx context.Context, r persist.BoardRecord) error {
	c.finish()
	c.cur, c.digest = r.Board.ID, persist.NewRowsDigest()
	c.count(persist.CountBoards, "")
	c.counts.Kinds[persist.CountMembers] += 1 + int64(len(r.Board.InvitedEmails))
	c.board(r.Board.ID, func(b *persist.BoardCounts) { b.Version, b.Horizon = r.Board.Version, r.Horizon })
	return c.DumpSink.Board(ctx, r)
}

func (c *countingSink) Row(ctx context.Context, r persist.RowRecord) error {
	if r.BoardID == c.cur && c.digest != nil {
		c.digest.Add(r)
	}
	switch {
	case r.Data == nil:
		c.count(persist.CountTombstones, r.BoardID)
	case r.Kind == persist.RowNote:
		c.count(persist.CountNotes, r.BoardID)
	case r.Kind == persist.RowFrame:
		c.count(persist.CountFrames, r.BoardID)
	case r.Kind == persist.RowConnector:
		c.count(persist.CountConnectors, r.BoardID)
	default:
		c.count(persist.CountItems, r.BoardID)
	}
	return c.DumpSink.Row(ctx, r)
}

func (c *countingSink) Revision(ctx context.Context, r persist.RevisionRecord) error {
	c.count(persist.CountRevisions, r.BoardID)
	return c.DumpSink.Revision(ctx, r)
}

func (c *countingSink) VoteDots(ctx context.Context, r persist.VoteDotsRecord) error {
	c.count(persist.CountVoteDots, r.BoardID)
	return c.DumpSink.VoteDots(ctx, r)
}

func (c *countingSink) IdempotencyKey(ctx context.Context, r persist.IdempotencyKeyRecord) error {
	c.count(persist.CountKeys, r.BoardID)
	return c.DumpSink.IdempotencyKey(ctx, r)
}

func (c *countingSink) ChangelogState(ctx context.Context, r persist.ChangelogStateRecord) error {
	c.count(persist.CountChangelogState, "")
	return c.DumpSink.ChangelogState(ctx, r)
}

func (c *countingSink) LogEntry(ctx context.Context, r persist.LogEntryRecord) error {
	c.count(persist.CountLogEntries, r.BoardID)
	return c.DumpSink.LogEntry(ctx, r)
}

func (c *countingSink) Snapshot(ctx context.Context, r persist.SnapshotRecord) error {
	c.count(persist.CountSnapshots, r.BoardID)
	return c.DumpSink.Snapshot(ctx, r)
}

func (c *countingSink) Link(ctx context.Context, l persist.Link) error {
	c.count(persist.CountLinks, l.BoardID)
	return c.DumpSink.Link(ctx, l)
}
