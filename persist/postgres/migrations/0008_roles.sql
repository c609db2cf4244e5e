-- 0008: the role the owner gives each invitee (board.RoleView, RoleAdd,
-- RoleEdit; docs/api.md "Locks and roles"). Owners' rows keep 'edit', the
-- default, which they never use: an owner may do anything. Notes' locked
-- and createdBy and frames' locked live in the rows' JSON (board_rows.data)
-- and need no column.
ALTER TABLE board_members ADD COLUMN rights text NOT NULL DEFAULT 'edit'
	CHECK (rights IN ('view', 'add', 'edit'));
