-- 0002: revisions, the states of rows that pushes superseded: the bases a
-- push with baseVersion is merged against (docs/sync.md, "How a push is
-- merged").
--
-- Every push that overwrites or deletes a row keeps the state it replaced
-- here, in the push's own transaction: the row's JSON as stored, or NULL
-- for a tombstone, with the time (Unix nanoseconds, as everywhere) it was
-- superseded. A revision goes with its board and with its row (a pruned
-- tombstone takes its row's revisions along: a row created later under the
-- same ID must not merge against them). PruneRevisions forgets old ones
-- through board_revisions_due; parked marks a revision it kept only because
-- it is among its row's newest, so that later sweeps do not read it again
-- until the row gets a newer revision (the push clears the flag on the
-- row's oldest then).
CREATE TABLE board_revisions (
	board_id      text NOT NULL REFERENCES boards (id) ON DELETE CASCADE,
	kind          text NOT NULL CHECK (kind IN ('n', 'i')),
	id            text COLLATE "C" NOT NULL,
	version       bigint NOT NULL,
	data          bytea,
	superseded_ns bigint NOT NULL,
	parked        boolean NOT NULL DEFAULT false,
	PRIMARY KEY (board_id, kind, id, version),
	FOREIGN KEY (board_id, kind, id) REFERENCES board_rows (board_id, kind, id) ON DELETE CASCADE
);
CREATE INDEX board_revisions_due ON board_revisions (superseded_ns) WHERE NOT parked;
