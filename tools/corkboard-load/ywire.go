package main

import (
	"errors"
	"fmt"
)

// The y-protocol as y-websocket speaks it, minimally: every WebSocket message
// is a varuint message type, then its body. Numbers are lib0 varuints:
// unsigned LEB128, seven bits per byte, least significant group first, the
// high bit set on every byte but the last.
const (
	yMessageSync      = 0
	yMessageAwareness = 1

	ySyncStep1  = 0
	ySyncStep2  = 1
	ySyncUpdate = 2
)

// maxVarUint is the largest number lib0 reads: JavaScript numbers are exact
// up to 2^53-1, and a longer varuint is garbage rather than a big number.
const maxVarUint = 1<<53 - 1

var errVarUint = errors.New("varuint: truncated or longer than 53 bits")

// appendVarUint appends v as a lib0 varuint.
func appendVarUint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// readVarUint reads a lib0 varuint from the start of b and returns it and
// the number of bytes it took.
func readVarUint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 8; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if v > maxVarUint {
				return 0, 0, errVarUint
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errVarUint
}

// yMessage is a decoded y-protocol message: Sync is set for sync messages
// (SyncType and the length-prefixed Payload: a state vector for step 1, an
// update for step 2 and update); other types carry their raw body.
type yMessage struct {
	Type     uint64
	SyncType uint64
	Payload  []byte
}

// parseYMessage decodes one WebSocket message of the y-protocol. Payload
// aliases b.
func parseYMessage(b []byte) (yMessage, error) {
	t, n, err := readVarUint(b)
	if err != nil {
		return yMessage{}, fmt.Errorf("message type: %w", err)
	}
	m := yMessage{Type: t}
	b = b[n:]
	if t != yMessageSync {
		m.Payload = b
		return m, nil
	}
	st, n, err := readVarUint(b)
	if err != nil {
		return yMessage{}, fmt.Errorf("sync type: %w", err)
	}
	m.SyncType = st
	b = b[n:]
	l, n, err := readVarUint(b)
	if err != nil {
		return yMessage{}, fmt.Errorf("sync payload length: %w", err)
	}
	b = b[n:]
	if uint64(len(b)) < l {
		return yMessage{}, fmt.Errorf("sync payload: %d bytes announced, %d present", l, len(b))
	}
	m.Payload = b[:l]
	return m, nil
}

// encodeSyncMessage encodes a sync message of syncType carrying payload.
func encodeSyncMessage(syncType uint64, payload []byte) []byte {
	b := make([]byte, 0, len(payload)+12)
	b = appendVarUint(b, yMessageSync)
	b = appendVarUint(b, syncType)
	b = appendVarUint(b, uint64(len(payload)))
	return append(b, payload...)
}

// emptyStateVector is an encoded Yjs state vector with no clients: the
// client knows nothing, so the server answers with its whole document.
var emptyStateVector = []byte{0}
