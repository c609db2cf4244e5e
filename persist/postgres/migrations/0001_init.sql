-- 0001: everything persist's bbolt store keeps, as tables.
--
-- Times that the contract compares (sessions, codes, tombstones, keys) are
-- kept as Unix nanoseconds in bigint columns: timestamptz keeps only
-- microseconds, and a sweep must treat a time 1 ns after its cutoff as
-- after it, as bbolt does. Keys that are listed in order use COLLATE "C" so
-- that they sort as bytes, as bbolt's cursors do.

CREATE TABLE meta (
	key   text PRIMARY KEY,
	value bytea NOT NULL
);

CREATE TABLE users (
	email       text COLLATE "C" PRIMARY KEY,
	plan        text NOT NULL,
	created_ns  bigint NOT NULL,
	customer_id text NOT NULL DEFAULT ''
);

-- The payment provider's customer id → the user's address.
CREATE TABLE customers (
	customer_id text PRIMARY KEY,
	email       text NOT NULL
);

-- Provider event ids already applied (at most once).
CREATE TABLE billing_events (
	event_id     text PRIMARY KEY,
	processed_at timestamptz NOT NULL
);

-- AI credits used per user and calendar month ("2026-11").
CREATE TABLE usage (
	email text NOT NULL,
	month text NOT NULL,
	used  bigint NOT NULL CHECK (used >= 0),
	PRIMARY KEY (email, month)
);

CREATE TABLE sessions (
	id           bytea PRIMARY KEY,
	email        text NOT NULL,
	created_ns   bigint NOT NULL,
	last_seen_ns bigint NOT NULL
);

-- One-time codes pending, one per address.
CREATE TABLE otps (
	email      text COLLATE "C" PRIMARY KEY,
	hash       bytea NOT NULL,
	expires_ns bigint NOT NULL,
	attempts   integer NOT NULL,
	network    text NOT NULL DEFAULT ''
);

-- A claimed board. version is the board's sync version, bumped by the push
-- transaction (UPDATE … SET version = version + 1 … RETURNING); horizon is
-- the highest version whose tombstones may have been pruned.
CREATE TABLE boards (
	id          text PRIMARY KEY,
	name        text NOT NULL,
	owner_email text NOT NULL,
	created_ns  bigint NOT NULL,
	updated_at  text NOT NULL,
	version     bigint NOT NULL DEFAULT 0,
	horizon     bigint NOT NULL DEFAULT 0,
	phases      bytea
);

-- Owners and invitees of each board; pos keeps the invitation order.
CREATE TABLE board_members (
	email    text COLLATE "C" NOT NULL,
	board_id text NOT NULL REFERENCES boards (id),
	role     text NOT NULL CHECK (role IN ('owner', 'invitee')),
	pos      bigserial NOT NULL,
	PRIMARY KEY (email, board_id)
);
CREATE INDEX board_members_board ON board_members (board_id, pos);

-- Notes (kind 'n') and tracker items (kind 'i'): a live row holds the JSON
-- of the note or item; a tombstone has data NULL and deleted_ns set.
CREATE TABLE board_rows (
	board_id   text NOT NULL REFERENCES boards (id),
	kind       text NOT NULL CHECK (kind IN ('n', 'i')),
	id         text COLLATE "C" NOT NULL,
	version    bigint NOT NULL,
	data       bytea,
	deleted_ns bigint,
	PRIMARY KEY (board_id, kind, id),
	CHECK ((data IS NULL) = (deleted_ns IS NOT NULL))
);
CREATE INDEX board_rows_version ON board_rows (board_id, version);
CREATE INDEX board_rows_tombstones ON board_rows (deleted_ns) WHERE deleted_ns IS NOT NULL;

CREATE TABLE idempotency_keys (
	board_id    text NOT NULL REFERENCES boards (id),
	key         text NOT NULL,
	version     bigint NOT NULL,
	recorded_ns bigint NOT NULL,
	PRIMARY KEY (board_id, key)
);
CREATE INDEX idempotency_keys_recorded ON idempotency_keys (recorded_ns);

-- Per-board changelog state: the last stamp handed out, current.md with the
-- version and phases it shows, and the version of the last snapshot.
CREATE TABLE changelog_state (
	board_id         text PRIMARY KEY REFERENCES boards (id),
	stamp            text NOT NULL DEFAULT '',
	current_md       bytea,
	current_version  bigint,
	current_phases   bytea,
	snapshot_version bigint NOT NULL DEFAULT 0
);

CREATE TABLE changelog_entries (
	board_id text NOT NULL REFERENCES boards (id),
	key      text COLLATE "C" NOT NULL,
	note_id  text COLLATE "C" NOT NULL,
	action   text COLLATE "C" NOT NULL,
	stamp    text NOT NULL,
	content  bytea NOT NULL,
	PRIMARY KEY (board_id, key)
);
CREATE INDEX changelog_entries_note ON changelog_entries (board_id, note_id, key) WHERE note_id <> '';
CREATE INDEX changelog_entries_action ON changelog_entries (board_id, action, key);

CREATE TABLE snapshots (
	board_id text NOT NULL REFERENCES boards (id),
	key      text COLLATE "C" NOT NULL,
	markdown bytea NOT NULL,
	PRIMARY KEY (board_id, key)
);
