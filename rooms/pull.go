package rooms

import (
	"context"
	"time"

	"corkboard/board"
	"corkboard/persist"
)

// Pulls are answered in the caller's goroutine, from the room's version in
// memory when nothing changed and from the store otherwise, so a large
// pull never holds up the room.

// PullResult answers a pull: Changes is nil when nothing changed after the
// client's version (never for since 0, a full sync), and the answer is then
// {serverVersion} alone.
type PullResult struct {
	ServerVersion int64
	Changes       *board.Changes
}

// Pull answers a pull. When since equals the room's version it answers at
// once without touching storage on a single node, and on several (a
// Relay) when the Relay is current and no note above the version is on
// its way; otherwise it first reads the board's version from the store,
// since another node may have acknowledged a push whose note has not come
// yet, and reads the changes when the store is ahead (the room catches up
// too). Otherwise it
// reads the store in the caller's goroutine, so a large pull never holds
// up the room. since 0 is a full sync and always gets the full shape, even
// from a board still at version 0 (its header and empty lists).
func (r *Room) Pull(ctx context.Context, since int64) (*PullResult, error) {
	if since < 0 {
		return nil, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	if r.closing.Load() {
		return nil, ErrClosed
	}
	now := r.touch()
	var start time.Time
	if v := r.version.Load(); since == v && since != 0 {
		if r.peers.current(v, now) {
			// One node, or several whose notes up to the lease ago are in
			// (scale-out.md, "Pulls from memory"). Not timed: the cheapest
			// pull would pay more for two clock reads than for its answer.
			r.opts.Observer.Pulled(0, false, nil)
			return &PullResult{ServerVersion: v}, nil
		}
		start = time.Now()
		sv, err := r.storeVersion(ctx)
		if err != nil || sv <= v {
			r.opts.Observer.Pulled(time.Since(start), true, err)
			if err != nil {
				return nil, err
			}
			return &PullResult{ServerVersion: v}, nil
		}
		r.storeSaid(sv)
	} else {
		start = time.Now()
	}
	ch, err := r.store.ChangesSince(ctx, r.id, since)
	r.opts.Observer.Pulled(time.Since(start), true, err)
	if err != nil {
		return nil, err
	}
	r.storeSaid(ch.ServerVersion)
	if since == ch.ServerVersion && since != 0 && !ch.Reset {
		return &PullResult{ServerVersion: ch.ServerVersion}, nil
	}
	return &PullResult{ServerVersion: ch.ServerVersion, Changes: ch}, nil
}

// PullTo answers a pull as Pull does, but streams the answer: fn gets
// its parts (persist.SyncStore.ScanChangesSince) as the store reads them,
// the header first, so the answer is never held whole. With nothing new
// after since, fn is not called and changed is false. fn runs in the
// caller's goroutine inside the store's read transaction; its error stops
// the read and comes back as it is.
func (r *Room) PullTo(ctx context.Context, since int64, fn func(p *persist.ChangePart) error) (serverVersion int64, changed bool, err error) {
	if since < 0 {
		return 0, false, board.FieldErrorf("since", "since must be a non-negative integer.")
	}
	if r.closing.Load() {
		return 0, false, ErrClosed
	}
	now := r.touch()
	if v := r.version.Load(); since == v && since != 0 && r.peers.current(v, now) {
		r.opts.Observer.Pulled(0, false, nil)
		return v, false, nil
	}
	start := time.Now()
	if v := r.version.Load(); since == v && since != 0 {
		// With several nodes, "nothing new" is confirmed with the store, as
		// in Pull; when the store is ahead the read below streams it.
		sv, err := r.storeVersion(ctx)
		if err != nil || sv <= v {
			r.opts.Observer.Pulled(time.Since(start), true, err)
			return v, false, err
		}
		r.storeSaid(sv)
	}
	err = r.store.ScanChangesSince(ctx, r.id, since, func(p *persist.ChangePart) error {
		if p.Kind == persist.PartHeader {
			h := p.Header
			serverVersion = h.ServerVersion
			r.storeSaid(h.ServerVersion)
			if since == h.ServerVersion && since != 0 && !h.Reset {
				return nil // the header alone: nothing new
			}
			changed = true
		}
		return fn(p)
	})
	r.opts.Observer.Pulled(time.Since(start), true, err)
	if err != nil {
		return 0, false, err
	}
	return serverVersion, changed, nil
}
