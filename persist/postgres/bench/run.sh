#!/usr/bin/env bash
# Measures the raw push transaction (push.sql) with pgbench on a fresh
# database with the store's schema: one hot board, then 1,000 boards, 8
# clients, each for DURATION seconds. Compare with
#   go test -run '^$' -bench 'Pushes' -benchtime 15s ./persist/postgres/
# run right after, on the same machine (docs/postgres.md).
set -euo pipefail
cd "$(dirname "$0")"
ADMIN=${CORKBOARD_TEST_PG_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
DURATION=${DURATION:-15}
DB=corkboard_pgbench_$$
psql -q "$ADMIN" -c "CREATE DATABASE $DB"
trap 'psql -q "$ADMIN" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"' EXIT
URL=${ADMIN%/postgres*}/$DB?sslmode=disable
psql -q "$URL" -v ON_ERROR_STOP=1 -f ../migrations/0001_init.sql
psql -q "$URL" -c "INSERT INTO boards (id, name, owner_email, created_ns, updated_at) SELECT 'b' || i, '', 'o@example.com', 0, '' FROM generate_series(1, 1000) i"
for boards in 1 1000; do
	echo "== pgbench: $boards board(s), 8 clients, ${DURATION}s"
	pgbench -n -M prepared -c 8 -j 2 -T "$DURATION" -D boards="$boards" -f push.sql "$URL" | grep -E '^(tps|latency average|number of transactions actually)'
done
