-- 0003: each board's live notes and tracker items, kept by every push in
-- its own transaction (board.Limits: a push that would pass a limit is
-- refused), so that the check reads one row instead of counting the board.
-- Tombstones do not count. Boards that exist are counted once, here.
ALTER TABLE boards ADD COLUMN note_count bigint NOT NULL DEFAULT 0,
	ADD COLUMN item_count bigint NOT NULL DEFAULT 0;
UPDATE boards b SET
	note_count = (SELECT count(*) FROM board_rows r WHERE r.board_id = b.id AND r.kind = 'n' AND r.deleted_ns IS NULL),
	item_count = (SELECT count(*) FROM board_rows r WHERE r.board_id = b.id AND r.kind = 'i' AND r.deleted_ns IS NULL);

-- The content bytes of each board's changelog, kept by every append, so
-- that the changelog's limit (board.Limits.ChangelogBytesPerBoard) is
-- checked without summing the entries.
ALTER TABLE changelog_state ADD COLUMN log_bytes bigint NOT NULL DEFAULT 0;
UPDATE changelog_state s SET log_bytes = coalesce((SELECT sum(length(e.content)) FROM changelog_entries e WHERE e.board_id = s.board_id), 0);
