-- The push transaction ApplyPush runs for one note with an idempotency
-- key, statement for statement (persist/postgres/sync.go). :boards is set
-- by run.sh: 1 for one hot board, 1000 for spread pushes.
\set b random(1, :boards)
\set k random(1, 1000000000)
BEGIN;
SELECT id, name, owner_email, created_ns, updated_at, version, phases FROM boards WHERE id = 'b' || :b FOR UPDATE;
SELECT version FROM idempotency_keys WHERE board_id = 'b' || :b AND key = 'k' || :k || '-' || :client_id;
UPDATE boards SET version = version + 1, updated_at = '2026-11-23T00:00:00Z', name = COALESCE(NULL, name) WHERE id = 'b' || :b RETURNING version, name, updated_at;
INSERT INTO board_rows (board_id, kind, id, version, data, deleted_ns) VALUES ('b' || :b, 'n', 'a', 1, convert_to(repeat('x', 300), 'UTF8'), NULL) ON CONFLICT (board_id, kind, id) DO UPDATE SET version = excluded.version, data = excluded.data, deleted_ns = NULL;
INSERT INTO idempotency_keys (board_id, key, version, recorded_ns) VALUES ('b' || :b, 'k' || :k || '-' || :client_id, 1, 0) ON CONFLICT (board_id, key) DO UPDATE SET version = excluded.version, recorded_ns = excluded.recorded_ns;
COMMIT;
