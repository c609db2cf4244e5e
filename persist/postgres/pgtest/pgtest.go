// Package pgtest gives each test a fresh PostgreSQL database of its own on
// the local server, dropped when the test ends.
//
// The server is found through CORKBOARD_TEST_PG_DSN (default DefaultDSN, the
// local cluster with trust auth). When it cannot be reached the test fails:
// CI must run these tests. Set CORKBOARD_TEST_PG=skip to skip them instead
// on a machine without PostgreSQL.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"corkboard/changelog"
	"corkboard/persist/postgres"
	"corkboard/persist/storetest"
)

// DefaultDSN is the administrative connection used when
// CORKBOARD_TEST_PG_DSN is not set.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminDSN returns the DSN of the database tests connect to in order to
// create and drop theirs.
func AdminDSN() string {
	if dsn := os.Getenv("CORKBOARD_TEST_PG_DSN"); dsn != "" {
		return dsn
	}
	return DefaultDSN
}

// NewDatabase creates an empty database named corkboard_test_<random> and
// returns a DSN for it; the database is dropped (WITH (FORCE), so connections
// left open do not keep it) when tb ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	if os.Getenv("CORKBOARD_TEST_PG") == "skip" {
		tb.Skip("CORKBOARD_TEST_PG=skip: PostgreSQL tests skipped")
	}
	admin := AdminDSN()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("PostgreSQL is not reachable at %s: %v\n"+
			"start it (as root: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start; or make pg),\n"+
			"point CORKBOARD_TEST_PG_DSN at another server, or set CORKBOARD_TEST_PG=skip", admin, err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	name := "corkboard_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	dsn, err := withDatabase(admin, name)
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// withDatabase returns dsn naming database name instead.
func withDatabase(dsn, name string) (string, error) {
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return "", fmt.Errorf("parse %s: %w", dsn, err)
	}
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String(), nil
	}
	// A key=value string: a later dbname wins.
	return dsn + " dbname=" + name, nil
}

// Owner owns the boards Open claims.
const Owner = "owner@example.com"

// Open opens a store on a fresh database (see NewDatabase), wired as the
// server wires it (with the changelog's note renderer), whose clock
// stands still at start until the test moves it, claims boards for
// Owner, and closes the store when the test ends. It returns the
// store, its clock and the database's DSN (to open it again, as another
// node would).
func Open(tb testing.TB, start time.Time, boards ...string) (*postgres.Store, *storetest.Clock, string) {
	tb.Helper()
	dsn := NewDatabase(tb)
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("postgres.Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	clock := storetest.NewClock(start)
	s.Now = clock.Now
	s.SetNoteRenderer(changelog.RenderNote)
	for _, id := range boards {
		if _, err := s.ClaimBoard(context.Background(), id, Owner); err != nil {
			tb.Fatalf("ClaimBoard(%s): %v", id, err)
		}
	}
	return s, clock, dsn
}

// T0 is a start for test clocks.
var T0 = storetest.T0
