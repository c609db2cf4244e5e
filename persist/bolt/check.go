package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strings"

	bbolt "go.etcd.io/bbolt"
)

// ErrDamaged is wrapped by the errors of a bbolt file whose structure is
// damaged (a truncated file, a broken meta or page): restore a backup.
var ErrDamaged = errors.New("the bbolt file is damaged")

// The layout of a bbolt meta page, as bbolt (go.etcd.io/bbolt v1) writes
// it: a 16-byte page header, then magic, version, page size, flags, the
// root bucket (16 bytes), the freelist's page, the high-water mark (pgid),
// the transaction id and an FNV-64a checksum of the 56 bytes before it.
const (
	metaMagic       = 0xED0CDAED
	metaVersion     = 2
	pageHeaderSize  = 16
	metaPgidOffset  = pageHeaderSize + 40
	metaTxidOffset  = pageHeaderSize + 48
	metaSumOffset   = pageHeaderSize + 56
	metaSizeOnDisk  = metaSumOffset + 8
	maxProbePageLen = 64 << 10
)

// meta is what inspectFile reads of one meta page.
type meta struct {
	pageSize int
	pgid     uint64
	txid     uint64
	problem  string // why bbolt would not use it; "" when it is valid
}

// readMeta decodes the meta page in b (at least metaSizeOnDisk bytes).
func readMeta(b []byte) meta {
	m := meta{
		pageSize: int(binary.LittleEndian.Uint32(b[pageHeaderSize+8:])),
		pgid:     binary.LittleEndian.Uint64(b[metaPgidOffset:]),
		txid:     binary.LittleEndian.Uint64(b[metaTxidOffset:]),
	}
	h := fnv.New64a()
	h.Write(b[pageHeaderSize:metaSumOffset])
	switch {
	case binary.LittleEndian.Uint32(b[pageHeaderSize:]) != metaMagic:
		m.problem = "not a bbolt meta page (wrong magic number)"
	case binary.LittleEndian.Uint32(b[pageHeaderSize+4:]) != metaVersion:
		m.problem = "unknown format version"
	case h.Sum64() != binary.LittleEndian.Uint64(b[metaSumOffset:]):
		m.problem = "checksum mismatch"
	}
	return m
}

// inspectFile checks, before bbolt maps the file at path, what bbolt
// itself does not: that at least one meta page is valid and that the file
// holds every page its newest valid meta page counts. bbolt maps the file
// into memory, and reading a page past the end of a truncated file kills
// the process with SIGBUS, which no recover catches. badMeta lists the
// damaged meta pages when the other one is valid: bbolt then opens the
// file from the valid one, and the next write rewrites the damaged one.
// A missing or empty file is not damaged (Open creates it).
func inspectFile(path string) (badMeta []string, err error) {
	head, size, err := readHead(path)
	if err != nil || size == 0 {
		return nil, err
	}
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s; restore it from a backup", path, ErrDamaged, fmt.Sprintf(format, args...))
	}
	if len(head) < metaSizeOnDisk {
		return nil, damaged("the file is %d bytes, too short for a meta page", size)
	}
	m0 := readMeta(head)
	m1 := secondMeta(head, m0)
	for i, m := range []meta{m0, m1} {
		if m.problem != "" {
			badMeta = append(badMeta, fmt.Sprintf("meta page %d: %s", i, m.problem))
		}
	}
	if len(badMeta) == 2 {
		return nil, damaged("both meta pages are damaged (%s)", strings.Join(badMeta, "; "))
	}
	use := m0
	if m0.problem != "" || (m1.problem == "" && m1.txid > m0.txid) {
		use = m1
	}
	if need := int64(use.pgid) * int64(use.pageSize); size < need {
		return nil, damaged("the file is truncated: %d bytes, its meta page counts %d pages of %d bytes (%d bytes)", size, use.pgid, use.pageSize, need)
	}
	return badMeta, nil
}

// readHead returns the first bytes of the file at path, enough for both
// meta pages at the largest page size probed, and the file's size; a
// missing file has size 0.
func readHead(path string) (head []byte, size int64, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", path, err)
	}
	if st.Size() == 0 {
		return nil, 0, nil
	}
	head = make([]byte, 2*maxProbePageLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	return head[:n], st.Size(), nil
}

// secondMeta reads the second meta page, which starts one page in; the
// page size comes from the first (m0), or, when that one is damaged, from
// probing the sizes bbolt uses for the one where a valid meta page sits.
func secondMeta(head []byte, m0 meta) meta {
	if m0.problem == "" {
		if ps := m0.pageSize; ps >= metaSizeOnDisk && ps+metaSizeOnDisk <= len(head) {
			return readMeta(head[ps:])
		}
		return meta{problem: "the file ends before it"}
	}
	for _, ps := range []int{os.Getpagesize(), 4096, 8192, 16384, 32768, 65536} {
		if ps+metaSizeOnDisk > len(head) {
			continue
		}
		if m := readMeta(head[ps:]); m.problem == "" && m.pageSize == ps {
			return m
		}
	}
	return meta{problem: "not found at any page size bbolt uses"}
}

// Check runs bbolt's consistency check over the whole file (every page
// reachable once, none both used and free, every bucket's keys in order)
// after the checks of the meta pages. It reads the whole file: a
// migration runs it before copying anything; the server does not on
// start. A damage found is an error wrapping ErrDamaged that says the
// first few problems and how many there are.
func (db *DB) Check(ctx context.Context) (err error) {
	if len(db.badMeta) > 0 {
		return fmt.Errorf("%s: %w: %s (the other meta page is valid: starting corkboard on the file once rewrites it, or restore a backup)", db.path, ErrDamaged, strings.Join(db.badMeta, "; "))
	}
	defer recoverDamage(db.path, &err)
	var problems []string
	count := 0
	err = db.view(ctx, func(tx *bbolt.Tx) error {
		// bbolt's check recovers its own panics and sends them as errors.
		for cerr := range tx.Check() {
			count++
			if len(problems) < 5 {
				problems = append(problems, cerr.Error())
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", db.path, err)
	}
	if count > 0 {
		return fmt.Errorf("%s: %w: %d problems found by bbolt's consistency check, first: %s; restore it from a backup", db.path, ErrDamaged, count, strings.Join(problems, "; "))
	}
	return nil
}

// recoverDamage turns a panic of bbolt reading a damaged page (its
// assertions panic) or a memory fault into an error wrapping ErrDamaged.
// Call it deferred in the goroutine that reads; it makes memory faults of
// that goroutine panics for as long as the caller runs.
func recoverDamage(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: %w: reading it failed (%v); restore it from a backup", path, ErrDamaged, r)
	}
}

// withFaultsAsPanics runs fn with memory faults of this goroutine turned
// into panics that recoverDamage can catch.
func withFaultsAsPanics(path string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer recoverDamage(path, &err)
	return fn()
}
