package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"corkboard/persist/bolt"
	"corkboard/persist/storetest"
)

// runMainEnv, when set, makes the test binary run corkboard's main with
// the arguments after "--" instead of the tests: a damaged file may kill
// the process (SIGBUS), so those runs happen in a process of their own.
const runMainEnv = "CORKBOARD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"corkboard"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCorkboard runs the corkboard command with args in a subprocess and
// returns its exit code and what it wrote to stderr and stdout.
func runCorkboard(t *testing.T, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// pageSize is the page size of a bbolt file, from its first meta page.
func pageSize(t *testing.T, b []byte) int {
	t.Helper()
	// The meta starts after the 16-byte page header: magic, version, page size.
	if got := binary.LittleEndian.Uint32(b[16:]); got != 0xED0CDAED {
		t.Fatalf("not a bbolt file: magic %x", got)
	}
	return int(binary.LittleEndian.Uint32(b[24:]))
}

// TestMigrateDamagedFile: `corkboard migrate` of a bbolt file damaged in
// one of the ways a disk or a careless copy damages one exits 1 with an
// error that names the file and the damage, never a panic, a Go stack or
// a SIGBUS; and the server refuses to start on it just as clearly.
func TestMigrateDamagedFile(t *testing.T) {
	good := t.TempDir()
	buildInstallation(t, good, storetest.NewClock(storetest.T0))
	orig, err := os.ReadFile(filepath.Join(good, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ps := pageSize(t, orig)
	for _, tt := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string // a part of the error
	}{
		{"Truncated", func(b []byte) []byte { return b[:len(b)/2] }, "damaged"},
		{"TruncatedToOnePage", func(b []byte) []byte { return b[:ps] }, "damaged"},
		{"PageHeaderFlipped", func(b []byte) []byte {
			// Every page after the metas and the freelist gets its header
			// (id and flags) flipped.
			for off := 4 * ps; off+16 <= len(b); off += ps {
				for i := range 16 {
					b[off+i] ^= 0xFF
				}
			}
			return b
		}, "damaged"},
		{"MetaPage0Zeroed", func(b []byte) []byte { clear(b[:ps]); return b }, "meta page 0"},
		{"MetaPage1Zeroed", func(b []byte) []byte { clear(b[ps : 2*ps]); return b }, "meta page 1"},
		{"BothMetaPagesZeroed", func(b []byte) []byte { clear(b[:2*ps]); return b }, "damaged"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, bolt.FileName)
			if err := os.WriteFile(path, tt.damage(bytes.Clone(orig)), 0o600); err != nil {
				t.Fatal(err)
			}
			// The target is never reached: the source is checked first.
			code, out := runCorkboard(t, "migrate", "--from", path, "--to", "postgres://127.0.0.1:1/none")
			if code != 1 {
				t.Fatalf("exit code %d, want 1; output:\n%s", code, out)
			}
			for _, want := range []string{path, tt.want} {
				if !strings.Contains(out, want) {
					t.Errorf("output does not name %q:\n%s", want, out)
				}
			}
			for _, bad := range []string{"panic", "goroutine ", "SIGBUS", "127.0.0.1:1"} {
				if strings.Contains(out, bad) {
					t.Errorf("output has %q:\n%s", bad, out)
				}
			}
		})
	}
	// One damaged meta page is what a torn write leaves: bbolt opens the
	// file from the other, and the server's first write rewrites it, as
	// the error says.
	t.Run("MetaPageRepairedByServerStart", func(t *testing.T) {
		dir := t.TempDir()
		b := bytes.Clone(orig)
		clear(b[:ps])
		if err := os.WriteFile(filepath.Join(dir, bolt.FileName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(dir)
		if err != nil {
			t.Fatalf("the server refuses a file with one valid meta page: %v", err)
		}
		db.Close()
		if code, out := runCorkboard(t, "migrate", "--from", dir, "--to", "postgres://127.0.0.1:1/none"); strings.Contains(out, "damaged") {
			t.Fatalf("exit %d after a server start: %s", code, out)
		}
	})
	// A healthy file passes the check and goes on to the target.
	t.Run("OK", func(t *testing.T) {
		code, out := runCorkboard(t, "migrate", "--from", good, "--to", "postgres://127.0.0.1:1/none")
		if code != 1 || strings.Contains(out, "damaged") || !strings.Contains(out, "--to") {
			t.Fatalf("exit %d, want the target's error only:\n%s", code, out)
		}
	})
}

// TestServeDamagedFile: the server refuses to start on a file whose meta
// pages are gone, naming the file, instead of panicking.
func TestServeDamagedFile(t *testing.T) {
	good := t.TempDir()
	buildInstallation(t, good, storetest.NewClock(storetest.T0))
	path := filepath.Join(good, bolt.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := pageSize(t, b)
	clear(b[:2*ps])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-data", good}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("err=%v, want one naming %s and the damage", err, path)
	}
}
