package bolt

// SetNoSync turns fsync off, for benchmarks that measure the store's own
// work without the disk (never for a store that keeps anything).
func SetNoSync(db *DB) { db.bolt.NoSync = true }
