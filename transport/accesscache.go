package transport

import (
	"context"
	"time"

	"corkboard/board"
	"corkboard/internal/cache"
)

// Defaults of the board cache (Config.BoardCacheSize, BoardCacheTTL).
const (
	defaultBoardCacheSize = 10_000
	defaultBoardCacheTTL  = 5 * time.Second
	// maxCachedBoardBytes is the most a board's invitees, phases and name
	// may weigh to be cached: a board with hundreds of long addresses is
	// read from storage each time instead, so the cache's memory stays
	// bounded by size × this (about 40 MiB by default), whatever boards
	// people make.
	maxCachedBoardBytes = 4 << 10
)

// cachedBoards is the Store the server works on: the deployment's store,
// with FindBoard answered from memory for what the board guard reads (the
// owner, the invitees, the name and the phases). Every write of those
// through it drops the board's entry once the write is done, so on one
// node a removed invitee is refused at their next request; a write made on
// another node reaches this one through Server.Invalidate, or at the
// latest after the TTL.
//
// A cached board carries no version and no updatedAt: the room owns those,
// and nothing behind the guard reads them from the board.
type cachedBoards struct {
	Store
	boards *cache.Cache[string, *board.Board]
	// announce tells the other nodes a board changed (Deps.Announce).
	announce func(cache.Kind, string)
}

func newCachedBoards(db Store, cfg Config, now func() time.Time, announce func(cache.Kind, string)) *cachedBoards {
	if announce == nil {
		announce = func(cache.Kind, string) {}
	}
	size, ttl := cfg.BoardCacheSize, cfg.BoardCacheTTL
	if size <= 0 {
		size = defaultBoardCacheSize
	}
	if ttl <= 0 {
		ttl = defaultBoardCacheTTL
	}
	return &cachedBoards{Store: db, announce: announce, boards: cache.New[string, *board.Board](cache.Options[string]{
		Size: size, TTL: ttl, Hash: cache.StringHash, Now: now,
	})}
}

// FindBoard returns the board's access facts, from memory when they were
// read less than the TTL ago. The board returned is shared: callers must
// not change it. An unclaimed board is not cached, so a claim counts at
// once and made-up IDs cannot fill the cache; neither is a board heavier
// than maxCachedBoardBytes.
func (c *cachedBoards) FindBoard(ctx context.Context, id string) (*board.Board, error) {
	if b, ok := c.boards.Get(id); ok {
		return b, nil
	}
	gen := c.boards.Gen(id)
	b, err := c.Store.FindBoard(ctx, id)
	if err != nil {
		return nil, err
	}
	if boardBytes(b) > maxCachedBoardBytes {
		return b, nil
	}
	held := &board.Board{ID: b.ID, Name: b.Name, OwnerEmail: b.OwnerEmail, CreatedAt: b.CreatedAt, Phases: b.Phases,
		InvitedEmails: append([]string{}, b.InvitedEmails...)}
	c.boards.Add(id, held, gen)
	return held, nil
}

// boardBytes is roughly what caching b holds beyond its fixed fields.
func boardBytes(b *board.Board) int {
	n := len(b.ID) + len(b.Name) + len(b.OwnerEmail)
	for _, e := range b.InvitedEmails {
		n += len(e) + 16
	}
	if b.Phases != nil {
		n += len(b.Phases.CurrentPhaseID)
		for _, p := range b.Phases.Phases {
			n += len(p) + 24
		}
	}
	return n
}

// changed drops the board's entry here and on the other nodes, once the
// write is done (even a failed write may have been stored).
func (c *cachedBoards) changed(id string) {
	c.boards.Delete(id)
	c.announce(cache.Board, id)
}

// ClaimBoard claims the board and drops any entry of it.
func (c *cachedBoards) ClaimBoard(ctx context.Context, id, email string) (*board.Board, error) {
	defer c.changed(id)
	return c.Store.ClaimBoard(ctx, id, email)
}

// SetPhases saves the phases and drops the board's entry.
func (c *cachedBoards) SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error) {
	defer c.changed(id)
	return c.Store.SetPhases(ctx, id, ph)
}

// AddInvite adds the invitee and drops the board's entry.
func (c *cachedBoards) AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	defer c.changed(id)
	return c.Store.AddInvite(ctx, id, email)
}

// RemoveInvite removes the invitee and drops the board's entry.
func (c *cachedBoards) RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	defer c.changed(id)
	return c.Store.RemoveInvite(ctx, id, email)
}

// Invalidate drops what the server holds about a record that changed
// elsewhere (another node, the plan admin socket): cache.Board here,
// cache.Plan in the Meter, cache.Session in auth. A cross-node feed calls
// it with every change other nodes report.
func (s *Server) Invalidate(kind cache.Kind, key string) {
	switch kind {
	case cache.Board:
		if c, ok := s.db.(*cachedBoards); ok {
			c.boards.Delete(key)
		}
	case cache.Plan:
		s.meter.Invalidate(kind, key)
		// Another node changed the plan; this node tells its own sockets.
		s.PlanChanged(context.Background(), key)
	case cache.Session:
		if s.auth != nil {
			s.auth.Invalidate(kind, key)
		}
	}
}
