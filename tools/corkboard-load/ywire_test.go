package main

import (
	"bytes"
	"testing"
)

func TestVarUint(t *testing.T) {
	tests := []struct {
		v    uint64
		wire []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{300, []byte{0xac, 0x02}},
		{16383, []byte{0xff, 0x7f}},
		{16384, []byte{0x80, 0x80, 0x01}},
		{maxVarUint, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, tt := range tests {
		if got := appendVarUint(nil, tt.v); !bytes.Equal(got, tt.wire) {
			t.Errorf("appendVarUint(%d)=% x, want % x", tt.v, got, tt.wire)
		}
		// Trailing bytes belong to the next field and are not consumed.
		v, n, err := readVarUint(append(append([]byte{}, tt.wire...), 0x55))
		if err != nil || v != tt.v || n != len(tt.wire) {
			t.Errorf("readVarUint(% x)=%d,%d,%v, want %d,%d", tt.wire, v, n, err, tt.v, len(tt.wire))
		}
	}
}

func TestVarUintRejects(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0x80},       // continuation with nothing after
		{0xff, 0xff}, // truncated
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x10},       // 2^53: above JavaScript's exact range
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, // nine bytes
	} {
		if v, n, err := readVarUint(b); err == nil {
			t.Errorf("readVarUint(% x)=%d,%d, want an error", b, v, n)
		}
	}
}

func TestSyncMessages(t *testing.T) {
	// What a fresh y-websocket client sends first: sync, step 1, an empty
	// state vector (one byte: zero clients).
	if got, want := encodeSyncMessage(ySyncStep1, emptyStateVector), []byte{0, 0, 1, 0}; !bytes.Equal(got, want) {
		t.Fatalf("step 1 = % x, want % x", got, want)
	}
	update := bytes.Repeat([]byte{0xab}, 200) // a length needing two varuint bytes
	msg := encodeSyncMessage(ySyncUpdate, update)
	if !bytes.Equal(msg[:4], []byte{0, 2, 0xc8, 0x01}) {
		t.Fatalf("update header % x, want 00 02 c8 01", msg[:4])
	}
	m, err := parseYMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != yMessageSync || m.SyncType != ySyncUpdate || !bytes.Equal(m.Payload, update) {
		t.Fatalf("parsed %d/%d with %d bytes, want sync update with the 200 bytes", m.Type, m.SyncType, len(m.Payload))
	}
	if _, ok := updateIn(encodeSyncMessage(ySyncStep2, update)); ok {
		t.Fatal("step 2 taken for a push")
	}
	if u, ok := updateIn(msg); !ok || !bytes.Equal(u, update) {
		t.Fatal("update not recognised")
	}
}

func TestParseYMessageRejects(t *testing.T) {
	tests := map[string][]byte{
		"empty":              {},
		"no sync type":       {0},
		"no length":          {0, 2},
		"short payload":      {0, 2, 5, 1, 2},
		"bad type varuint":   {0x80},
		"bad length varuint": {0, 2, 0xff},
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := parseYMessage(b); err == nil {
				t.Fatalf("parseYMessage(% x) accepted", b)
			}
		})
	}
	// Awareness and other types keep their body.
	m, err := parseYMessage([]byte{1, 9, 9})
	if err != nil || m.Type != yMessageAwareness || !bytes.Equal(m.Payload, []byte{9, 9}) {
		t.Fatalf("awareness = %+v, %v", m, err)
	}
}

func FuzzParseYMessage(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0})
	f.Add(encodeSyncMessage(ySyncUpdate, []byte("cbload:3;")))
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseYMessage(b)
		if err != nil || m.Type != yMessageSync {
			return
		}
		// Whatever parses survives our own encoding unchanged.
		again, err := parseYMessage(encodeSyncMessage(m.SyncType, m.Payload))
		if err != nil || again.SyncType != m.SyncType || !bytes.Equal(again.Payload, m.Payload) {
			t.Fatalf("round trip of %+v gave %+v, %v", m, again, err)
		}
	})
}
