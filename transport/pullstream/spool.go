package pullstream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A large answer is read from the store into a spool file and sent from
// there once the read is over (docs/sync.md, "Large reads"). Sending it
// straight from the store's read would keep the read open for as long as
// the client takes to read the answer: on bbolt an open read transaction
// keeps the file from growing, so every push that needs a larger file
// would wait for the slowest reader (up to the server's WriteTimeout);
// on PostgreSQL it holds a pooled connection and a snapshot. The spool's
// cost is disk, not memory: the answer passes through the page cache, and
// the large-read gate bounds how many spools exist at once.

// spoolPattern names spool files, so that those a crash left behind can
// be told from anything else in the folder.
const spoolPattern = "answer-*.spool"

// spool is an answer's bytes written to a temporary file.
type spool struct {
	dir  string
	f    *os.File
	size int64
}

// Write appends p, creating the file on first use.
func (s *spool) Write(p []byte) (int, error) {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, spoolPattern)
		if err != nil {
			return 0, fmt.Errorf("create answer spool: %w", err)
		}
		s.f = f
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("write answer spool: %w", err)
	}
	return n, nil
}

// replay sends what was written, in chunks of at most len(buf) bytes.
func (s *spool) replay(buf []byte, send func(p []byte) error) error {
	if s.f == nil {
		return nil
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind answer spool: %w", err)
	}
	for left := s.size; left > 0; {
		n, err := io.ReadFull(s.f, buf[:min(int64(len(buf)), left)])
		if err != nil {
			return fmt.Errorf("read answer spool: %w", err)
		}
		left -= int64(n)
		if err := send(buf[:n]); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the file (closed first, which Windows needs).
func (s *spool) remove() {
	if s.f == nil {
		return
	}
	name := s.f.Name()
	_ = s.f.Close()
	_ = os.Remove(name)
	s.f, s.size = nil, 0
}

// ClearSpools removes the spool files a crash left in dir, and creates
// dir when it is missing. The server calls it at start-up, before
// serving, on the folder it gives as Config.SpoolDir.
func ClearSpools(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create spool folder: %w", err)
	}
	left, err := filepath.Glob(filepath.Join(dir, spoolPattern))
	if err != nil {
		return fmt.Errorf("list spool folder: %w", err)
	}
	var errs []error
	for _, name := range left {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clear spool folder: %w", err)
	}
	return nil
}
