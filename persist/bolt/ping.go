package bolt

import (
	"context"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// Ping opens and closes a read transaction: it fails once the file is
// closed, and when ctx is done first. bbolt has no network to lose, so an
// open file answers; what a failed Ping catches here is a store closed at
// shutdown or by an error.
func (db *DB) Ping(ctx context.Context) error {
	err := db.view(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return errors.New("meta bucket missing")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ping bbolt %s: %w", db.path, err)
	}
	return nil
}
