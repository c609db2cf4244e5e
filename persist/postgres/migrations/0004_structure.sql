-- 0004: connectors and frames (docs/sync.md, "Connectors and frames"),
-- rows like notes in board_rows and board_revisions under kinds of their
-- own, 'c' and 'f': a live row holds the connector's or frame's JSON, a
-- tombstone data NULL. Each board's live frames and connectors are counted
-- as its notes and items are (0003), for board.Limits. No board has any yet.
ALTER TABLE board_rows DROP CONSTRAINT board_rows_kind_check,
	ADD CONSTRAINT board_rows_kind_check CHECK (kind IN ('n', 'i', 'f', 'c'));
ALTER TABLE board_revisions DROP CONSTRAINT board_revisions_kind_check,
	ADD CONSTRAINT board_revisions_kind_check CHECK (kind IN ('n', 'i', 'f', 'c'));
ALTER TABLE boards ADD COLUMN frame_count bigint NOT NULL DEFAULT 0,
	ADD COLUMN connector_count bigint NOT NULL DEFAULT 0;
