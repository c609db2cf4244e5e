package postgres

import (
	"context"
	"fmt"
)

// Ping runs a round trip on a pooled connection, bounded by ctx and the
// store's call timeout: it fails when the database is down, unreachable or
// refusing connections, and after Close. A readiness probe calls it.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}
