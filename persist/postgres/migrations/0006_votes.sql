-- 0006: dot voting (board.Vote, docs/api.md "Dot voting"). The board's vote
-- is JSON on its row like the timer (NULL: none), with its totals; the dots
-- are rows of their own, one per person per note per vote with a count,
-- written in the push transaction that bumps the version and the totals,
-- under the board's row lock: two people voting at once never conflict and
-- the totals are exact. A vote's rows go when it is cleared or replaced.
ALTER TABLE boards ADD COLUMN vote bytea;
CREATE TABLE vote_dots (
	board_id text NOT NULL REFERENCES boards (id),
	vote_id  text COLLATE "C" NOT NULL,
	email    text COLLATE "C" NOT NULL,
	note_id  text COLLATE "C" NOT NULL,
	count    integer NOT NULL CHECK (count > 0),
	PRIMARY KEY (board_id, vote_id, email, note_id)
);
