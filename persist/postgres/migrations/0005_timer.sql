-- 0005: the board's timer (board.Timer, docs/api.md "The board's timer"):
-- its JSON, like phases (bytea: the store reads and writes it whole, never
-- looks inside), NULL when the board has none. A push that acts on it
-- writes it in the transaction that bumps the version, with that
-- transaction's clock.
ALTER TABLE boards ADD COLUMN timer bytea;
