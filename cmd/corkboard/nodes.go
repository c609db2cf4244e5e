package main

import (
	"context"
	"encoding/hex"
	"log/slog"
	"sync/atomic"

	"corkboard/auth"
	"corkboard/hub"
	"corkboard/internal/cache"
	"corkboard/persist/postgres"
	"corkboard/transport"
)

// invalidateSession is the invalidation kind of an ended session; its key
// is the session's storage key in hex.
const invalidateSession = "session"

// nodeLinks routes what crosses nodes between auth, the hub and the HTTP
// server's caches, which are built one after the other (and the bus may
// deliver before all are).
type nodeLinks struct {
	hub  atomic.Pointer[hub.Hub]
	auth atomic.Pointer[auth.Service]
	srv  atomic.Pointer[transport.Server]
}

func (l *nodeLinks) set(h *hub.Hub, a *auth.Service) {
	l.hub.Store(h)
	l.auth.Store(a)
}

func (l *nodeLinks) setServer(s *transport.Server) { l.srv.Store(s) }

// announce tells the other nodes that a cached record changed here
// (transport's Deps.Announce, the plan admin socket): their copies go at
// once instead of at the end of -cache-ttl. Sessions take sessionEnded.
func (l *nodeLinks) announce(kind cache.Kind, key string) {
	if kind == cache.Session {
		return
	}
	if h := l.hub.Load(); h != nil {
		h.Invalidate(string(kind), key)
	}
}

// sessionEnded tells the other nodes that a session ended here (auth's
// Config.SessionEnded).
func (l *nodeLinks) sessionEnded(id []byte) {
	if h := l.hub.Load(); h != nil {
		h.Invalidate(invalidateSession, hex.EncodeToString(id))
	}
}

// invalidate takes another node's word that a record changed (the hub's
// Options.OnInvalidate). This is where caches of sessions, plans and
// members drop their copies (kind, key), next to the watches of an ended
// session.
func (l *nodeLinks) invalidate(kind, key string) {
	switch kind {
	case invalidateSession:
		id, err := hex.DecodeString(key)
		if a := l.auth.Load(); a != nil && err == nil {
			a.EndSessionWatches(id)
		}
	case string(cache.Plan), string(cache.Board):
		if s := l.srv.Load(); s != nil {
			s.Invalidate(cache.Kind(kind), key)
		}
	}
}

// announcing is the plan admin socket's Invalidator: the Meter here drops
// the plan, and the other nodes are told to.
type announcing struct {
	local cache.Invalidator
	links *nodeLinks
}

func (a announcing) Invalidate(kind cache.Kind, key string) {
	a.local.Invalidate(kind, key)
	a.links.announce(kind, key)
	// The person's open boards on this node learn their new access (the
	// other nodes do on the announcement).
	if s := a.links.srv.Load(); s != nil && kind == cache.Plan {
		s.PlanChanged(context.Background(), key)
	}
}

// openBus returns the bus joining this node to the others on the same
// store, and how to close it: PostgreSQL's LISTEN/NOTIFY for a PostgreSQL
// store, none (nil, one node) for bbolt, which one process alone opens.
func openBus(db closableStore, log *slog.Logger) (hub.Bus, func()) {
	pg, ok := db.(*postgres.Store)
	if !ok {
		return nil, func() {}
	}
	bus := pg.NewBus(postgres.BusOptions{Logger: log})
	return bus, func() { bus.Close() }
}
