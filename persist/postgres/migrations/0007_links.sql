-- 0007: read-only links (persist.Link, docs/api.md "Read-only links").
-- A link is found by the SHA-256 of its token (the token itself is never
-- stored); board_id orders the owner's list and counts the board's cap.
-- Times are Unix nanoseconds, like the other tables.
CREATE TABLE board_links (
	hash       bytea PRIMARY KEY,
	id         text NOT NULL,
	board_id   text NOT NULL REFERENCES boards (id) ON DELETE CASCADE,
	created_by text NOT NULL,
	created_ns bigint NOT NULL,
	expires_ns bigint NOT NULL,
	UNIQUE (board_id, id)
);
