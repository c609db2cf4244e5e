package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// testdata/updates3.bin was written by bench/yws/gen-updates.js 3: three
// real Yjs updates.
func TestReadUpdatesGenerated(t *testing.T) {
	f, err := os.Open("testdata/updates3.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ups, err := readUpdates(f, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ups), 3; got != want {
		t.Fatalf("read %d updates, want %d", got, want)
	}
	y := &ywsRelay{updates: ups, bySum: map[string]int64{}}
	for i, u := range ups {
		if !bytes.Contains(u, fmt.Appendf(nil, "cbload:%d;", i)) {
			t.Errorf("update %d does not carry its sequence number: % x", i, u)
		}
		// Without the byte table, the marker still names the push.
		if seq, ok := y.seqOf(u); !ok || seq != int64(i) {
			t.Errorf("seqOf(update %d)=%d,%v", i, seq, ok)
		}
	}
}

func TestReadUpdatesMax(t *testing.T) {
	file := updatesFile([]byte("a"), []byte("bb"), []byte("ccc"))
	ups, err := readUpdates(bytes.NewReader(file), 2)
	if err != nil || len(ups) != 2 || string(ups[1]) != "bb" {
		t.Fatalf("readUpdates(max 2)=%q, %v", ups, err)
	}
}

func TestReadUpdatesRejects(t *testing.T) {
	good := updatesFile([]byte("abc"))
	tests := map[string][]byte{
		"empty":            nil,
		"wrong magic":      append([]byte("CBYUPD2\n"), good[8:]...),
		"truncated length": append(append([]byte{}, good...), 0, 0),
		"truncated update": good[:len(good)-1],
		"zero length":      append([]byte(updatesMagic), 0, 0, 0, 0),
		"huge length":      append([]byte(updatesMagic), 0x7f, 0xff, 0xff, 0xff),
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			if ups, err := readUpdates(bytes.NewReader(b), 100); err == nil {
				t.Fatalf("accepted, read %d updates", len(ups))
			}
		})
	}
	// The header alone is an empty, valid file.
	if ups, err := readUpdates(strings.NewReader(updatesMagic), 100); err != nil || len(ups) != 0 {
		t.Fatalf("header only: %d updates, %v", len(ups), err)
	}
}

func updatesFile(ups ...[]byte) []byte {
	b := []byte(updatesMagic)
	for _, u := range ups {
		b = append(b, byte(len(u)>>24), byte(len(u)>>16), byte(len(u)>>8), byte(len(u)))
		b = append(b, u...)
	}
	return b
}
