package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// updatesMagic starts a file of pre-generated Yjs updates
// (bench/yws/gen-updates.js): then, per update in sequence order, a 4-byte
// big-endian length and the update's bytes.
const updatesMagic = "CBYUPD1\n"

// maxUpdateSize bounds one update read from the file; the generator's are
// about thirty bytes.
const maxUpdateSize = 1 << 20

// readUpdates reads at most max updates from an updates file. Fewer than max
// is not an error; a truncated record or a wrong header is.
func readUpdates(r io.Reader, max int) ([][]byte, error) {
	br := bufio.NewReader(r)
	head := make([]byte, len(updatesMagic))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != updatesMagic {
		return nil, fmt.Errorf("not an updates file (want it to start with %q; generate one with bench/yws/gen-updates.js)", updatesMagic)
	}
	var out [][]byte
	var lenBuf [4]byte
	for len(out) < max {
		if _, err := io.ReadFull(br, lenBuf[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("update %d: truncated length", len(out))
		}
		n := binary.BigEndian.Uint32(lenBuf[:])
		if n == 0 || n > maxUpdateSize {
			return nil, fmt.Errorf("update %d: length %d out of range 1..%d", len(out), n, maxUpdateSize)
		}
		u := make([]byte, n)
		if _, err := io.ReadFull(br, u); err != nil {
			return nil, fmt.Errorf("update %d: truncated (%d bytes announced)", len(out), n)
		}
		out = append(out, u)
	}
	return out, nil
}
