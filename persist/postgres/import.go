package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"corkboard/board"
	"corkboard/persist"
)

// Import batch bounds: an Importer writes what it holds in one transaction
// once it holds this many records or bytes, so that memory and transaction
// size stay bounded however big the dump.
const (
	ImportBatchRecords = 2000
	ImportBatchBytes   = 8 << 20
)

var _ persist.DumpSink = (*Importer)(nil)

// Importer is a persist.DumpSink that writes a dump into the database
// exactly as it was stored: versions, times, hashes and keys are kept, and
// every board is written at its dumped version and horizon. Each record is
// inserted with ON CONFLICT DO NOTHING, so that importing the same dump
// again adds nothing and changes nothing; Added counts what each run
// really wrote. Before a board is written, a board already in the database
// under its ID must be the same board (see CheckBoards), or the import
// stops.
//
// Records are buffered and written in transactions of at most
// ImportBatchRecords records or ImportBatchBytes bytes; Flush writes the
// rest. An Importer is not safe for concurrent use.
type Importer struct {
	s     *Store
	buf   importBuf
	added map[string]int64
}

// importBuf holds the records of one batch, as columns for unnest.
type importBuf struct {
	records, bytes int

	secret []byte

	userEmail, userPlan, userCustomer []string
	userCreated                       []int64

	custID, custEmail []string

	eventID []string
	eventAt []time.Time

	usageEmail, usageMonth []string
	usageUsed              []int64

	sessID                [][]byte
	sessEmail             []string
	sessCreated, sessSeen []int64

	otpEmail, otpNetwork []string
	otpHash              [][]byte
	otpExpires           []int64
	otpAttempts          []int32

	boards []persist.BoardRecord

	rowBoard, rowKind, rowID []string
	rowVersion               []int64
	rowData                  [][]byte
	rowDeleted               []*int64

	revBoard, revKind, revID []string
	revVersion, revAt        []int64
	revData                  [][]byte

	dotBoard, dotVote, dotEmail, dotNote []string
	dotCount                             []int32

	keyBoard, keyKey        []string
	keyVersion, keyRecorded []int64

	states []persist.ChangelogStateRecord

	entBoard, entKey, entNote, entAction, entStamp []string
	entContent                                     [][]byte

	snapBoard, snapKey []string
	snapMD             [][]byte

	linkHash                  [][]byte
	linkID, linkBoard, linkBy []string
	linkCreated, linkExpires  []int64
}

// NewImporter returns an Importer writing into s.
func (s *Store) NewImporter() *Importer {
	return &Importer{s: s, added: map[string]int64{}}
}

// Added returns how many records of each kind (persist.Count* names) the
// import wrote so far; records already in the database do not count.
func (im *Importer) Added() map[string]int64 {
	out := make(map[string]int64, len(im.added))
	for k, v := range im.added {
		out[k] = v
	}
	return out
}

// held notes one more buffered record of n bytes and writes the batch when
// it reached its bounds.
func (im *Importer) held(ctx context.Context, n int) error {
	im.buf.records++
	im.buf.bytes += n
	if im.buf.records >= ImportBatchRecords || im.buf.bytes >= ImportBatchBytes {
		return im.Flush(ctx)
	}
	return nil
}

// Secret replaces the database's server secret with the dumped one, so that
// codes sent before the move still verify.
func (im *Importer) Secret(ctx context.Context, secret []byte) error {
	im.buf.secret = secret
	return im.held(ctx, len(secret))
}

// User buffers a user.
func (im *Importer) User(ctx context.Context, u persist.User) error {
	b := &im.buf
	b.userEmail = append(b.userEmail, u.Email)
	b.userPlan = append(b.userPlan, u.Plan)
	b.userCustomer = append(b.userCustomer, u.CustomerID)
	b.userCreated = append(b.userCreated, nanos(u.CreatedAt))
	return im.held(ctx, len(u.Email)+len(u.Plan)+len(u.CustomerID)+8)
}

// Customer buffers a customer id.
func (im *Importer) Customer(ctx context.Context, c persist.CustomerRecord) error {
	im.buf.custID = append(im.buf.custID, c.CustomerID)
	im.buf.custEmail = append(im.buf.custEmail, c.Email)
	return im.held(ctx, len(c.CustomerID)+len(c.Email))
}

// BillingEvent buffers a processed provider event id.
func (im *Importer) BillingEvent(ctx context.Context, e persist.BillingEventRecord) error {
	im.buf.eventID = append(im.buf.eventID, e.EventID)
	im.buf.eventAt = append(im.buf.eventAt, e.ProcessedAt)
	return im.held(ctx, len(e.EventID)+8)
}

// Usage buffers a month of credit usage.
func (im *Importer) Usage(ctx context.Context, u persist.UsageRecord) error {
	im.buf.usageEmail = append(im.buf.usageEmail, u.Email)
	im.buf.usageMonth = append(im.buf.usageMonth, u.Month)
	im.buf.usageUsed = append(im.buf.usageUsed, int64(u.Used))
	return im.held(ctx, len(u.Email)+len(u.Month)+8)
}

// Session buffers a session under its stored id (the token's hash).
func (im *Importer) Session(ctx context.Context, s persist.SessionRecord) error {
	b := &im.buf
	b.sessID = append(b.sessID, s.ID)
	b.sessEmail = append(b.sessEmail, s.Session.Email)
	b.sessCreated = append(b.sessCreated, nanos(s.Session.CreatedAt))
	b.sessSeen = append(b.sessSeen, nanos(s.Session.LastSeen))
	return im.held(ctx, len(s.ID)+len(s.Session.Email)+16)
}

// OTP buffers a pending one-time code.
func (im *Importer) OTP(ctx context.Context, o persist.OTPRecord) error {
	b := &im.buf
	hash := o.OTP.Hash
	if hash == nil {
		hash = []byte{}
	}
	b.otpEmail = append(b.otpEmail, o.Email)
	b.otpHash = append(b.otpHash, hash)
	b.otpExpires = append(b.otpExpires, nanos(o.OTP.ExpiresAt))
	b.otpAttempts = append(b.otpAttempts, int32(o.OTP.Attempts))
	b.otpNetwork = append(b.otpNetwork, o.OTP.Network)
	return im.held(ctx, len(o.Email)+len(hash)+len(o.OTP.Network)+12)
}

// Board buffers a board with its members.
func (im *Importer) Board(ctx context.Context, r persist.BoardRecord) error {
	im.buf.boards = append(im.buf.boards, r)
	n := len(r.Board.ID) + len(r.Board.Name) + len(r.Board.OwnerEmail) + 64
	for _, e := range r.Board.InvitedEmails {
		n += len(e)
	}
	return im.held(ctx, n)
}

// Row buffers a note or item row, live or a tombstone, at its version.
func (im *Importer) Row(ctx context.Context, r persist.RowRecord) error {
	b := &im.buf
	b.rowBoard = append(b.rowBoard, r.BoardID)
	b.rowKind = append(b.rowKind, r.Kind)
	b.rowID = append(b.rowID, r.ID)
	b.rowVersion = append(b.rowVersion, r.Version)
	if r.Data == nil {
		ns := nanos(r.DeletedAt)
		b.rowData = append(b.rowData, nil)
		b.rowDeleted = append(b.rowDeleted, &ns)
	} else {
		b.rowData = append(b.rowData, r.Data)
		b.rowDeleted = append(b.rowDeleted, nil)
	}
	return im.held(ctx, len(r.BoardID)+len(r.ID)+len(r.Data)+24)
}

// Revision buffers a revision of a row, as stored (unparked: the next
// sweep looks at it).
func (im *Importer) Revision(ctx context.Context, r persist.RevisionRecord) error {
	b := &im.buf
	b.revBoard = append(b.revBoard, r.BoardID)
	b.revKind = append(b.revKind, r.Kind)
	b.revID = append(b.revID, r.ID)
	b.revVersion = append(b.revVersion, r.Version)
	b.revData = append(b.revData, r.Data)
	b.revAt = append(b.revAt, nanos(r.SupersededAt))
	return im.held(ctx, len(r.BoardID)+len(r.ID)+len(r.Data)+24)
}

// VoteDots buffers a row of a board's vote.
func (im *Importer) VoteDots(ctx context.Context, r persist.VoteDotsRecord) error {
	b := &im.buf
	b.dotBoard = append(b.dotBoard, r.BoardID)
	b.dotVote = append(b.dotVote, r.VoteID)
	b.dotEmail = append(b.dotEmail, r.Email)
	b.dotNote = append(b.dotNote, r.NoteID)
	b.dotCount = append(b.dotCount, int32(r.Count))
	return im.held(ctx, len(r.BoardID)+len(r.VoteID)+len(r.Email)+len(r.NoteID)+4)
}

// IdempotencyKey buffers a recorded key.
func (im *Importer) IdempotencyKey(ctx context.Context, k persist.IdempotencyKeyRecord) error {
	b := &im.buf
	b.keyBoard = append(b.keyBoard, k.BoardID)
	b.keyKey = append(b.keyKey, k.Key)
	b.keyVersion = append(b.keyVersion, k.Version)
	b.keyRecorded = append(b.keyRecorded, nanos(k.RecordedAt))
	return im.held(ctx, len(k.BoardID)+len(k.Key)+16)
}

// ChangelogState buffers a board's changelog bookkeeping and current.md.
func (im *Importer) ChangelogState(ctx context.Context, c persist.ChangelogStateRecord) error {
	im.buf.states = append(im.buf.states, c)
	return im.held(ctx, len(c.BoardID)+len(c.Stamp)+len(c.Current)+len(c.CurrentPhases)+16)
}

// LogEntry buffers a changelog entry with its content.
func (im *Importer) LogEntry(ctx context.Context, e persist.LogEntryRecord) error {
	b := &im.buf
	content := e.Entry.Content
	if content == nil {
		content = []byte{}
	}
	b.entBoard = append(b.entBoard, e.BoardID)
	b.entKey = append(b.entKey, e.Entry.Key)
	b.entNote = append(b.entNote, e.Entry.NoteID)
	b.entAction = append(b.entAction, e.Entry.Action)
	b.entStamp = append(b.entStamp, e.Entry.Timestamp)
	b.entContent = append(b.entContent, content)
	return im.held(ctx, len(e.BoardID)+len(e.Entry.Key)+len(e.Entry.NoteID)+len(e.Entry.Action)+len(e.Entry.Timestamp)+len(content))
}

// Snapshot buffers a point-in-time snapshot.
func (im *Importer) Snapshot(ctx context.Context, s persist.SnapshotRecord) error {
	md := s.Markdown
	if md == nil {
		md = []byte{}
	}
	im.buf.snapBoard = append(im.buf.snapBoard, s.BoardID)
	im.buf.snapKey = append(im.buf.snapKey, s.Key)
	im.buf.snapMD = append(im.buf.snapMD, md)
	return im.held(ctx, len(s.BoardID)+len(s.Key)+len(md))
}

// Link buffers a read-only link.
func (im *Importer) Link(ctx context.Context, l persist.Link) error {
	b := &im.buf
	b.linkHash = append(b.linkHash, l.Hash)
	b.linkID = append(b.linkID, l.ID)
	b.linkBoard = append(b.linkBoard, l.BoardID)
	b.linkBy = append(b.linkBy, l.CreatedBy)
	b.linkCreated = append(b.linkCreated, nanos(l.CreatedAt))
	b.linkExpires = append(b.linkExpires, nanos(l.ExpiresAt))
	return im.held(ctx, len(l.Hash)+len(l.ID)+len(l.BoardID)+len(l.CreatedBy)+16)
}

// importStatements are the batch's inserts, in the order the foreign keys
// need (boards before their rows); each is one statement over unnest'ed
// columns that skips records already there.
const (
	insertUsers = `INSERT INTO users (email, plan, created_ns, customer_id)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) ON CONFLICT DO NOTHING`
	insertCustomers = `INSERT INTO customers (customer_id, email)
		SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING`
	insertEvents = `INSERT INTO billing_events (event_id, processed_at)
		SELECT * FROM unnest($1::text[], $2::timestamptz[]) ON CONFLICT DO NOTHING`
	insertUsage = `INSERT INTO usage (email, month, used)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT DO NOTHING`
	insertSessions = `INSERT INTO sessions (id, email, created_ns, last_seen_ns)
		SELECT * FROM unnest($1::bytea[], $2::text[], $3::bigint[], $4::bigint[]) ON CONFLICT DO NOTHING`
	insertOTPs = `INSERT INTO otps (email, hash, expires_ns, attempts, network)
		SELECT * FROM unnest($1::text[], $2::bytea[], $3::bigint[], $4::int[], $5::text[]) ON CONFLICT DO NOTHING`
	insertBoards = `INSERT INTO boards (id, name, owner_email, created_ns, updated_at, version, horizon, phases, timer, vote)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[], $8::bytea[], $9::bytea[], $10::bytea[])
		ON CONFLICT DO NOTHING`
	// WITH ORDINALITY and ORDER BY keep the invitation order in pos.
	insertMembers = `INSERT INTO board_members (email, board_id, role)
		SELECT e, b, r FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(e, b, r, o)
		ORDER BY o ON CONFLICT DO NOTHING`
	insertRows = `INSERT INTO board_rows (board_id, kind, id, version, data, deleted_ns)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bytea[], $6::bigint[]) ON CONFLICT DO NOTHING`
	// After the rows: a revision refers to its row.
	insertRevisions = `INSERT INTO board_revisions (board_id, kind, id, version, data, superseded_ns)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bytea[], $6::bigint[]) ON CONFLICT DO NOTHING`
	// After the boards: a vote's rows (the notes they name need not be live).
	insertVoteDots = `INSERT INTO vote_dots (board_id, vote_id, email, note_id, count)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[]) ON CONFLICT DO NOTHING`
	insertKeys = `INSERT INTO idempotency_keys (board_id, key, version, recorded_ns)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) ON CONFLICT DO NOTHING`
	insertStates = `INSERT INTO changelog_state (board_id, stamp, current_md, current_version, current_phases, snapshot_version)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bigint[], $5::bytea[], $6::bigint[]) ON CONFLICT DO NOTHING`
	insertEntries = `INSERT INTO changelog_entries (board_id, key, note_id, action, stamp, content)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[]) ON CONFLICT DO NOTHING`
	insertSnapshots = `INSERT INTO snapshots (board_id, key, markdown)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[]) ON CONFLICT DO NOTHING`
	insertLinks = `INSERT INTO board_links (hash, id, board_id, created_by, created_ns, expires_ns)
		SELECT * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[]) ON CONFLICT DO NOTHING`
)

// Flush writes the buffered records in one transaction. It is retried like
// the store's other writes (every statement skips what is already there,
// so a second attempt is harmless).
func (im *Importer) Flush(ctx context.Context) error {
	b := &im.buf
	if b.records == 0 {
		return nil
	}
	ctx, cancel := im.s.call(ctx)
	defer cancel()

	boards, members, err := boardColumnsOf(b.boards)
	if err != nil {
		return err
	}
	states := stateColumnsOf(b.states)
	rows := b.rowsByKind()
	steps := []importStep{
		{persist.CountUsers, insertUsers, len(b.userEmail), []any{b.userEmail, b.userPlan, b.userCreated, b.userCustomer}},
		{persist.CountCustomers, insertCustomers, len(b.custID), []any{b.custID, b.custEmail}},
		{persist.CountBillingEvents, insertEvents, len(b.eventID), []any{b.eventID, b.eventAt}},
		{persist.CountUsage, insertUsage, len(b.usageEmail), []any{b.usageEmail, b.usageMonth, b.usageUsed}},
		{persist.CountSessions, insertSessions, len(b.sessID), []any{b.sessID, b.sessEmail, b.sessCreated, b.sessSeen}},
		{persist.CountOTPs, insertOTPs, len(b.otpEmail), []any{b.otpEmail, b.otpHash, b.otpExpires, b.otpAttempts, b.otpNetwork}},
		{persist.CountBoards, insertBoards, len(boards.id), boards.args()},
		{persist.CountMembers, insertMembers, len(members.email), members.args()},
		{persist.CountNotes, insertRows, len(rows[0].id), rows[0].args()},
		{persist.CountItems, insertRows, len(rows[1].id), rows[1].args()},
		{persist.CountFrames, insertRows, len(rows[2].id), rows[2].args()},
		{persist.CountConnectors, insertRows, len(rows[3].id), rows[3].args()},
		{persist.CountTombstones, insertRows, len(rows[4].id), rows[4].args()},
		{persist.CountRevisions, insertRevisions, len(b.revID), []any{b.revBoard, b.revKind, b.revID, b.revVersion, b.revData, b.revAt}},
		{persist.CountVoteDots, insertVoteDots, len(b.dotVote), []any{b.dotBoard, b.dotVote, b.dotEmail, b.dotNote, b.dotCount}},
		{persist.CountKeys, insertKeys, len(b.keyKey), []any{b.keyBoard, b.keyKey, b.keyVersion, b.keyRecorded}},
		{persist.CountChangelogState, insertStates, len(states.board), states.args()},
		{persist.CountLogEntries, insertEntries, len(b.entKey), []any{b.entBoard, b.entKey, b.entNote, b.entAction, b.entStamp, b.entContent}},
		{persist.CountSnapshots, insertSnapshots, len(b.snapKey), []any{b.snapBoard, b.snapKey, b.snapMD}},
		{persist.CountLinks, insertLinks, len(b.linkID), []any{b.linkHash, b.linkID, b.linkBoard, b.linkBy, b.linkCreated, b.linkExpires}},
	}
	// The imported boards' live-row counts, from the rows now there, and
	// their changelogs' bytes, from the entries now there.
	recount := slices.Compact(slices.Sorted(slices.Values(slices.Concat(rows[0].board, rows[1].board, rows[2].board, rows[3].board))))
	relog := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(b.entBoard), states.board...))))
	steps = append(steps,
		importStep{"", recountSQL, len(recount), []any{recount}},
		importStep{"", recountLogSQL, len(relog), []any{relog}},
	)

	var added map[string]int64
	err = im.s.inTx(ctx, readWrite, true, func(tx pgx.Tx) error {
		added = map[string]int64{}
		if b.secret != nil {
			tag, err := tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('secret', $1)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE meta.value <> excluded.value`, b.secret)
			if err != nil {
				return fmt.Errorf("write the server secret: %w", err)
			}
			added[persist.CountSecret] = tag.RowsAffected()
		}
		if err := checkBoards(ctx, tx, b.boards); err != nil {
			return err
		}
		return runImportSteps(ctx, tx, steps, added)
	})
	if err != nil {
		return wrap(err, "import %d records", b.records)
	}
	for k, v := range added {
		im.added[k] += v
	}
	im.buf = importBuf{}
	return nil
}

// importStep is one statement of a flush: what it counts (empty for the
// recounts after the rows), its SQL, how many records it writes (0: not
// sent) and its arguments.
type importStep struct {
	kind string
	sql  string
	n    int
	args []any
}

// runImportSteps sends the steps that have records in one batch and adds
// what each inserted to added under its kind.
func runImportSteps(ctx context.Context, tx pgx.Tx, steps []importStep, added map[string]int64) error {
	batch := &pgx.Batch{}
	for _, st := range steps {
		if st.n > 0 {
			batch.Queue(st.sql, st.args...)
		}
	}
	res := tx.SendBatch(ctx, batch)
	for _, st := range steps {
		if st.n == 0 {
			continue
		}
		tag, err := res.Exec()
		if err != nil {
			res.Close()
			return fmt.Errorf("%s: %w", st.what(), err)
		}
		if st.kind != "" {
			added[st.kind] += tag.RowsAffected()
		}
	}
	return res.Close()
}

// what says what a failed step was doing, for its error.
func (st importStep) what() string {
	switch {
	case st.kind != "":
		return "write " + st.kind
	case st.sql == recountSQL:
		return "count the imported boards' rows"
	default:
		return "count the imported boards' changelog bytes"
	}
}

// boardCols are boards columns for unnest.
type boardCols struct {
	id, name, owner, updated  []string
	created, version, horizon []int64
	phases, timer, vote       [][]byte
}

func (c *boardCols) args() []any {
	return []any{c.id, c.name, c.owner, c.created, c.updated, c.version, c.horizon, c.phases, c.timer, c.vote}
}

// memberCols are board_members columns for unnest.
type memberCols struct {
	email, board, role []string
}

func (c *memberCols) add(email, board, role string) {
	c.email = append(c.email, email)
	c.board = append(c.board, board)
	c.role = append(c.role, role)
}

func (c *memberCols) args() []any { return []any{c.email, c.board, c.role} }

// boardColumnsOf turns dumped boards into the columns of their boards and
// of their members (the owner and every invitee).
func boardColumnsOf(records []persist.BoardRecord) (boardCols, memberCols, error) {
	var bc boardCols
	var mc memberCols
	for _, r := range records {
		bd := r.Board
		var ph []byte
		if bd.Phases != nil {
			js, err := json.Marshal(bd.Phases)
			if err != nil {
				return boardCols{}, memberCols{}, fmt.Errorf("encode phases of board %s: %w", bd.ID, err)
			}
			ph = js
		}
		timer, err := encodeJSONColumn(bd.Timer)
		if err != nil {
			return boardCols{}, memberCols{}, fmt.Errorf("encode timer of board %s: %w", bd.ID, err)
		}
		bc.timer = append(bc.timer, timer)
		vote, err := encodeJSONColumn(bd.Vote)
		if err != nil {
			return boardCols{}, memberCols{}, fmt.Errorf("encode vote of board %s: %w", bd.ID, err)
		}
		bc.vote = append(bc.vote, vote)
		bc.id = append(bc.id, bd.ID)
		bc.name = append(bc.name, bd.Name)
		bc.owner = append(bc.owner, bd.OwnerEmail)
		bc.created = append(bc.created, nanos(bd.CreatedAt))
		bc.updated = append(bc.updated, bd.UpdatedAt)
		bc.version = append(bc.version, bd.Version)
		bc.horizon = append(bc.horizon, r.Horizon)
		bc.phases = append(bc.phases, ph)
		mc.add(bd.OwnerEmail, bd.ID, "owner")
		for _, e := range bd.InvitedEmails {
			mc.add(e, bd.ID, "invitee")
		}
	}
	return bc, mc, nil
}

// stateCols are changelog_state columns for unnest.
type stateCols struct {
	board, stamp    []string
	md, phases      [][]byte
	version         []*int64 // NULL when there is no current Markdown
	snapshotVersion []int64
}

func (c *stateCols) args() []any {
	return []any{c.board, c.stamp, c.md, c.version, c.phases, c.snapshotVersion}
}

// stateColumnsOf turns dumped changelog states into columns.
func stateColumnsOf(records []persist.ChangelogStateRecord) stateCols {
	var sc stateCols
	for _, c := range records {
		sc.board = append(sc.board, c.BoardID)
		sc.stamp = append(sc.stamp, c.Stamp)
		sc.md = append(sc.md, c.Current)
		sc.phases = append(sc.phases, c.CurrentPhases)
		if c.Current != nil {
			v := c.CurrentVersion
			sc.version = append(sc.version, &v)
		} else {
			sc.version = append(sc.version, nil)
		}
		sc.snapshotVersion = append(sc.snapshotVersion, c.SnapshotVersion)
	}
	return sc
}

// rowsByKind splits the buffered rows in five (live notes, live items,
// live frames, live connectors, tombstones), each written by a statement
// of its own so that what each adds is counted by kind.
func (b *importBuf) rowsByKind() [5]rowColumns {
	var rows [5]rowColumns
	for i := range b.rowID {
		g := 4
		if b.rowData[i] != nil {
			g = map[string]int{persist.RowNote: 0, persist.RowItem: 1, persist.RowFrame: 2, persist.RowConnector: 3}[b.rowKind[i]]
		}
		r := &rows[g]
		r.board = append(r.board, b.rowBoard[i])
		r.kind = append(r.kind, b.rowKind[i])
		r.id = append(r.id, b.rowID[i])
		r.version = append(r.version, b.rowVersion[i])
		r.data = append(r.data, b.rowData[i])
		r.deleted = append(r.deleted, b.rowDeleted[i])
	}
	return rows
}

// rowColumns are board_rows columns for unnest.
type rowColumns struct {
	board, kind, id []string
	version         []int64
	data            [][]byte
	deleted         []*int64
}

func (r *rowColumns) args() []any {
	return []any{r.board, r.kind, r.id, r.version, r.data, r.deleted}
}

// CheckBoards checks that none of the dumped boards conflicts with what the
// database holds: a board already there under the same ID must be the same
// board at the same point (same owner, creation time, version and
// horizon), which is what an earlier import of the same dump left. It
// answers ECONFLICT naming the first board that differs, and writes
// nothing.
func (s *Store) CheckBoards(ctx context.Context, boards []persist.BoardRecord) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	return wrap(checkBoards(ctx, s.pool, boards), "check boards")
}

func checkBoards(ctx context.Context, q querier, boards []persist.BoardRecord) error {
	if len(boards) == 0 {
		return nil
	}
	want := make(map[string]persist.BoardRecord, len(boards))
	ids := make([]string, 0, len(boards))
	for _, r := range boards {
		want[r.Board.ID] = r
		ids = append(ids, r.Board.ID)
	}
	rows, err := q.Query(ctx, "SELECT id, owner_email, created_ns, version, horizon FROM boards WHERE id = ANY($1) ORDER BY id", ids)
	if err != nil {
		return fmt.Errorf("read boards: %w", err)
	}
	var id, owner string
	var created, version, hz int64
	_, err = pgx.ForEachRow(rows, []any{&id, &owner, &created, &version, &hz}, func() error {
		r := want[id]
		switch {
		case owner != r.Board.OwnerEmail || created != nanos(r.Board.CreatedAt):
			return board.Errorf(board.ECONFLICT, "board %s in PostgreSQL belongs to another installation (owner %s, created %s; here: owner %s, created %s)",
				id, owner, fromNanos(created).Format(time.RFC3339Nano), r.Board.OwnerEmail, r.Board.CreatedAt.UTC().Format(time.RFC3339Nano))
		case version > r.Board.Version:
			return board.Errorf(board.ECONFLICT, "board %s is at version %d in PostgreSQL and %d in the bbolt file: it has moved on in PostgreSQL, and copying would lose those changes", id, version, r.Board.Version)
		case version < r.Board.Version, hz != r.Horizon:
			return board.Errorf(board.ECONFLICT, "board %s is at version %d (horizon %d) in PostgreSQL and %d (horizon %d) in the bbolt file: the bbolt installation moved on since an earlier migration; drop the target database (or that board) and migrate again", id, version, hz, r.Board.Version, r.Horizon)
		}
		return nil
	})
	if err != nil {
		var be *board.Error
		if errors.As(err, &be) {
			return be
		}
		return err
	}
	return nil
}

// DumpCounts counts what the database holds, per kind and per board, and
// digests every board's rows (persist.RowsDigest), from one snapshot: what
// `corkboard migrate` compares with the source. It reads every row, so it
// costs about what the copy did.
func (s *Store) DumpCounts(ctx context.Context) (persist.DumpCounts, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	c := persist.NewDumpCounts()
	err := s.inTx(ctx, snapshotRead, false, func(tx pgx.Tx) error {
		for kind, sql := range map[string]string{
			persist.CountSecret:         "SELECT count(*) FROM meta WHERE key = 'secret'",
			persist.CountUsers:          "SELECT count(*) FROM users",
			persist.CountCustomers:      "SELECT count(*) FROM customers",
			persist.CountBillingEvents:  "SELECT count(*) FROM billing_events",
			persist.CountUsage:          "SELECT count(*) FROM usage",
			persist.CountSessions:       "SELECT count(*) FROM sessions",
			persist.CountOTPs:           "SELECT count(*) FROM otps",
			persist.CountBoards:         "SELECT count(*) FROM boards",
			persist.CountMembers:        "SELECT count(*) FROM board_members",
			persist.CountChangelogState: "SELECT count(*) FROM changelog_state",
		} {
			var n int64
			if err := tx.QueryRow(ctx, sql).Scan(&n); err != nil {
				return fmt.Errorf("count %s: %w", kind, err)
			}
			c.Kinds[kind] = n
		}
		rows, err := tx.Query(ctx, "SELECT id, version, horizon FROM boards")
		if err != nil {
			return err
		}
		var id string
		var version, hz int64
		if _, err := pgx.ForEachRow(rows, []any{&id, &version, &hz}, func() error {
			c.Boards[id] = persist.BoardCounts{Version: version, Horizon: hz}
			return nil
		}); err != nil {
			return fmt.Errorf("count boards: %w", err)
		}
		var a, bb, cc, ff, cn int64
		rows, err = tx.Query(ctx, `SELECT board_id,
			count(*) FILTER (WHERE kind = 'n' AND deleted_ns IS NULL),
			count(*) FILTER (WHERE kind = 'i' AND deleted_ns IS NULL),
			count(*) FILTER (WHERE deleted_ns IS NOT NULL),
			count(*) FILTER (WHERE kind = 'f' AND deleted_ns IS NULL),
			count(*) FILTER (WHERE kind = 'c' AND deleted_ns IS NULL)
			FROM board_rows GROUP BY board_id`)
		if err != nil {
			return err
		}
		if _, err := pgx.ForEachRow(rows, []any{&id, &a, &bb, &cc, &ff, &cn}, func() error {
			bc := c.Boards[id]
			bc.Notes, bc.Items, bc.Tombstones, bc.Frames, bc.Connectors = a, bb, cc, ff, cn
			c.Boards[id] = bc
			c.Kinds[persist.CountNotes] += a
			c.Kinds[persist.CountItems] += bb
			c.Kinds[persist.CountTombstones] += cc
			c.Kinds[persist.CountFrames] += ff
			c.Kinds[persist.CountConnectors] += cn
			return nil
		}); err != nil {
			return fmt.Errorf("count rows: %w", err)
		}
		if err := rowDigests(ctx, tx, &c); err != nil {
			return fmt.Errorf("digest rows: %w", err)
		}
		for _, t := range []struct{ kind, table string }{
			{persist.CountRevisions, "board_revisions"},
			{persist.CountVoteDots, "vote_dots"},
			{persist.CountKeys, "idempotency_keys"},
			{persist.CountLogEntries, "changelog_entries"},
			{persist.CountSnapshots, "snapshots"},
			{persist.CountLinks, "board_links"},
		} {
			rows, err := tx.Query(ctx, "SELECT board_id, count(*) FROM "+t.table+" GROUP BY board_id")
			if err != nil {
				return err
			}
			if _, err := pgx.ForEachRow(rows, []any{&id, &a}, func() error {
				bc := c.Boards[id]
				*bc.Of(t.kind) = a
				c.Boards[id] = bc
				c.Kinds[t.kind] += a
				return nil
			}); err != nil {
				return fmt.Errorf("count %s: %w", t.kind, err)
			}
		}
		return nil
	})
	if err != nil {
		return persist.DumpCounts{}, wrap(err, "count records")
	}
	return c, nil
}

// rowDigests sets the Rows digest of every board in c from its rows, read
// in dump order in one statement (without the statement timeout: it
// reads the whole table).
func rowDigests(ctx context.Context, tx pgx.Tx, c *persist.DumpCounts) error {
	empty := persist.NewRowsDigest().Sum()
	for id, bc := range c.Boards {
		bc.Rows = empty
		c.Boards[id] = bc
	}
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT board_id, kind, id, version, data, deleted_ns FROM board_rows
		ORDER BY board_id, kind DESC, id`)
	if err != nil {
		return err
	}
	var cur string
	var d *persist.RowsDigest
	finish := func() {
		if d != nil {
			bc := c.Boards[cur]
			bc.Rows = d.Sum()
			c.Boards[cur] = bc
		}
	}
	var r persist.RowRecord
	var deleted *int64
	_, err = pgx.ForEachRow(rows, []any{&r.BoardID, &r.Kind, &r.ID, &r.Version, &r.Data, &deleted}, func() error {
		if d == nil || r.BoardID != cur {
			finish()
			cur, d = r.BoardID, persist.NewRowsDigest()
		}
		r.DeletedAt = time.Time{}
		if deleted != nil {
			r.DeletedAt = fromNanos(*deleted)
		}
		d.Add(r)
		return nil
	})
	finish()
	return err
}
