package access

import (
	"context"
	"maps"
	"time"

	"corkboard/board"
	"corkboard/internal/cache"
	"corkboard/persist"
)

// Defaults of the board cache (Options.CacheSize, CacheTTL).
const (
	defaultCacheSize = 10_000
	defaultCacheTTL  = 5 * time.Second
	// maxCachedBoardBytes is the most a board's invitees, phases and name
	// may weigh to be cached: a board with hundreds of long addresses is
	// read from storage each time instead, so the cache's memory stays
	// bounded by size × this (about 40 MiB by default), whatever boards
	// people make.
	maxCachedBoardBytes = 4 << 10
)

// cachedBoards is the board store the service works on: the deployment's
// store, with FindBoard answered from memory for what the board guard
// reads (the owner, the invitees, the name and the phases). Every write of
// those through it drops the board's entry once the write is done, so on
// one node a removed invitee is refused at their next request; a write
// made on another node reaches this one through Service.Invalidate, or at
// the latest after the TTL.
//
// A cached board carries no version and no updatedAt: the room owns those,
// and nothing behind the guard reads them from the board.
type cachedBoards struct {
	persist.BoardStore
	cache *cache.Cache[string, *board.Board]
	// announce tells the other nodes a board changed (Options.Announce).
	announce func(cache.Kind, string)
}

func newCachedBoards(db persist.BoardStore, opts Options) *cachedBoards {
	announce := opts.Announce
	if announce == nil {
		announce = func(cache.Kind, string) {}
	}
	size, ttl := opts.CacheSize, opts.CacheTTL
	if size <= 0 {
		size = defaultCacheSize
	}
	if ttl <= 0 {
		ttl = defaultCacheTTL
	}
	return &cachedBoards{BoardStore: db, announce: announce, cache: cache.New[string, *board.Board](cache.Options[string]{
		Size: size, TTL: ttl, Hash: cache.StringHash, Now: opts.Now,
	})}
}

// FindBoard returns the board's access facts, from memory when they were
// read less than the TTL ago. The board returned is shared: callers must
// not change it. An unclaimed board is not cached, so a claim counts at
// once and made-up IDs cannot fill the cache; neither is a board heavier
// than maxCachedBoardBytes.
func (c *cachedBoards) FindBoard(ctx context.Context, id string) (*board.Board, error) {
	if b, ok := c.cache.Get(id); ok {
		return b, nil
	}
	gen := c.cache.Gen(id)
	b, err := c.BoardStore.FindBoard(ctx, id)
	if err != nil {
		return nil, err
	}
	if boardBytes(b) > maxCachedBoardBytes {
		return b, nil
	}
	held := &board.Board{ID: b.ID, Name: b.Name, OwnerEmail: b.OwnerEmail, CreatedAt: b.CreatedAt, Phases: b.Phases,
		InvitedEmails: append([]string{}, b.InvitedEmails...), Roles: maps.Clone(b.Roles)}
	c.cache.Add(id, held, gen)
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
	c.cache.Delete(id)
	c.announce(cache.Board, id)
}

// ClaimBoard claims the board and drops any entry of it.
func (c *cachedBoards) ClaimBoard(ctx context.Context, id, email string) (*board.Board, error) {
	defer c.changed(id)
	return c.BoardStore.ClaimBoard(ctx, id, email)
}

// SetPhases saves the phases and drops the board's entry.
func (c *cachedBoards) SetPhases(ctx context.Context, id string, ph *board.Phases) (*board.Board, error) {
	defer c.changed(id)
	return c.BoardStore.SetPhases(ctx, id, ph)
}

// AddInvite adds the invitee and drops the board's entry.
func (c *cachedBoards) AddInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	defer c.changed(id)
	return c.BoardStore.AddInvite(ctx, id, email)
}

// SetRole sets an invitee's role and drops the board's entry.
func (c *cachedBoards) SetRole(ctx context.Context, id, email, role string) (*board.Board, bool, error) {
	defer c.changed(id)
	return c.BoardStore.SetRole(ctx, id, email, role)
}

// RemoveInvite removes the invitee and drops the board's entry.
func (c *cachedBoards) RemoveInvite(ctx context.Context, id, email string) (*board.Board, bool, error) {
	defer c.changed(id)
	return c.BoardStore.RemoveInvite(ctx, id, email)
}
