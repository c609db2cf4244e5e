package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"corkboard/board"
	"corkboard/changelog"
	"corkboard/persist"
	"corkboard/persist/bolt"
	"corkboard/persist/postgres"
)

// closableStore is the whole store the server runs on.
type closableStore interface {
	persist.Store
	persist.Limited
	SetNoteRenderer(render func(board.Note) []byte)
	Close() error
}

// The server's stores are bbolt (the default) and PostgreSQL.
var (
	_ closableStore = (*bolt.DB)(nil)
	_ closableStore = (*postgres.Store)(nil)
)

// openStore opens the store -store names (see openBackend) and gives it
// the changelog's note renderer, with which a push logs what its merge
// overwrote (persist cannot import changelog), and the limits its pushes
// and claims are checked against.
func openStore(ctx context.Context, cfg *Config) (closableStore, string, error) {
	s, where, err := openBackend(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	s.SetNoteRenderer(changelog.RenderNote)
	s.SetLimits(cfg.limits())
	return s, where, nil
}

// openBackend opens the store -store names: the bbolt file under -data when
// it is empty, PostgreSQL for a postgres:// or postgresql:// URL. It also
// returns where the data lives, for the log (without a password).
func openBackend(ctx context.Context, cfg *Config) (closableStore, string, error) {
	switch {
	case cfg.Store == "":
		db, err := bolt.Open(cfg.DataDir)
		if err != nil {
			if errors.Is(err, bolt.ErrLocked) {
				return nil, "", fmt.Errorf("%w: is another corkboard already running with -data %s?", err, cfg.DataDir)
			}
			return nil, "", err
		}
		return db, db.Path(), nil
	case strings.HasPrefix(cfg.Store, "postgres://"), strings.HasPrefix(cfg.Store, "postgresql://"):
		where := "postgres"
		if u, err := url.Parse(cfg.Store); err == nil {
			where = u.Redacted()
		}
		s, err := postgres.Open(ctx, cfg.Store)
		if err != nil {
			return nil, "", fmt.Errorf("-store %s: %w", where, err)
		}
		return s, where, nil
	}
	return nil, "", fmt.Errorf("-store: want a postgres:// URL, or nothing for the bbolt file under -data")
}
