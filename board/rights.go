package board

import "fmt"

// Locks and roles (docs/api.md, "Locks and roles"). The owner may lock
// notes and frames and give each invitee a role; a push is checked
// against the rows as stored, in the store's transaction, so that a lock
// or a row's author cannot change between the check and the write on any
// node. Who the pusher is (owner, role, plan) is decided by the board
// guard (access); what that lets them do to a row is decided here, once,
// for both stores.

// Roles an owner gives an invitee. An invitee's rights are the lesser of
// their role and their plan's (a plan whose invitees only view makes any
// role RoleView).
const (
	// RoleView reads the board and pushes nothing.
	RoleView = "view"
	// RoleAdd adds notes, and changes and deletes only the notes they
	// created; frames, connectors, tracker items and the board's name are
	// not theirs to change.
	RoleAdd = "add"
	// RoleEdit changes anything but locked rows: every invitee's role
	// unless the owner chose another.
	RoleEdit = "edit"
)

// ValidRole reports whether r is a role an owner may give.
func ValidRole(r string) bool {
	return r == RoleView || r == RoleAdd || r == RoleEdit
}

// RoleOf is the role the owner gave email on b (RoleEdit when none); the
// owner's is RoleEdit.
func (b *Board) RoleOf(email string) string {
	if r, ok := b.Roles[email]; ok && email != b.OwnerEmail {
		return r
	}
	return RoleEdit
}

// LesserRole is the lesser of two roles (view < add < edit).
func LesserRole(a, b string) string {
	rank := func(r string) int {
		switch r {
		case RoleEdit:
			return 2
		case RoleAdd:
			return 1
		}
		return 0
	}
	if rank(a) <= rank(b) {
		return a
	}
	return b
}

// Author is who pushes, as the board guard decided.
type Author struct {
	Email string
	// Owner may do anything, locks included.
	Owner bool
	// Role is the author's effective role (RoleView, RoleAdd, RoleEdit);
	// the owner's is RoleEdit.
	Role string
}

// StoredRows looks up a push's rows as the store holds them, live ones
// only: ok false when the row does not exist or is deleted.
type StoredRows struct {
	Note  func(id string) (n Note, ok bool, err error)
	Frame func(id string) (f Frame, ok bool, err error)
}

// lockedError is the refusal of a push that touches a locked row.
func lockedError(noun, id, field string) *Error {
	return &Error{Code: EFORBIDDEN, Field: field, ID: id,
		Message: fmt.Sprintf("%s %q is locked by the board's owner.", noun, id)}
}

// SettleRights checks p against the rows as stored and settles what the
// store writes: each upserted note keeps its stored createdBy (a new one,
// or one brought back from a tombstone, gets the author's e-mail), and a
// note or frame that a person pushed without "locked" keeps its stored
// lock (a push without Author, the server's own, is whole rows: its
// Locked is written as given). A push the
// author may not make is EFORBIDDEN naming the first row refused (Field,
// ID), and nothing of it may be written. It reads the stored rows only
// for the IDs the push names.
func SettleRights(p *Push, stored StoredRows) error {
	a := p.Author
	restricted := a != nil && !a.Owner
	if restricted {
		if err := a.checkKinds(p); err != nil {
			return err
		}
	}
	// The steps run in this order, each reading only its own rows, so
	// that the first row refused is the one named.
	if err := settleNoteUpserts(p, stored, restricted); err != nil {
		return err
	}
	if restricted {
		if err := a.checkNoteDeletes(p.Notes.Deleted, stored); err != nil {
			return err
		}
	}
	if err := settleFrameUpserts(p, stored, restricted); err != nil {
		return err
	}
	if restricted {
		return checkFrameDeletes(p.Frames.Deleted, stored)
	}
	return nil
}

// settleNoteUpserts checks each upserted note against its stored row
// (when restricted: the author is neither the owner nor the server) and
// settles its createdBy and, unless the push sent it, its lock.
func settleNoteUpserts(p *Push, stored StoredRows, restricted bool) error {
	a := p.Author
	for i := range p.Notes.Upserted {
		n := &p.Notes.Upserted[i]
		cur, live, err := stored.Note(n.ID)
		if err != nil {
			return fmt.Errorf("read note %q: %w", n.ID, err)
		}
		if restricted {
			if err := a.checkNoteUpsert(fmt.Sprintf("notes.upserted[%d]", i), n, cur, live); err != nil {
				return err
			}
		}
		switch {
		case live:
			n.CreatedBy = cur.CreatedBy
		case a != nil:
			n.CreatedBy = a.Email
		default:
			n.CreatedBy = ""
		}
		if !n.LockedSent && a != nil {
			n.Locked = live && cur.Locked
		}
	}
	return nil
}

// checkNoteUpsert refuses an upsert of n over the stored note cur that
// the author may not make: checkNote's refusals, or a change of its lock.
func (a *Author) checkNoteUpsert(field string, n *Note, cur Note, live bool) error {
	if err := a.checkNote(field, n.ID, cur, live); err != nil {
		return err
	}
	if n.LockedSent && n.Locked != (live && cur.Locked) {
		return &Error{Code: EFORBIDDEN, Field: field + ".locked", ID: n.ID,
			Message: "Only the board's owner can lock or unlock a note."}
	}
	return nil
}

// checkNoteDeletes refuses the deletion of a live note the author may not
// change (checkNote); deleting a missing note is no change to refuse.
func (a *Author) checkNoteDeletes(ids []string, stored StoredRows) error {
	for i, id := range ids {
		cur, live, err := stored.Note(id)
		if err != nil {
			return fmt.Errorf("read note %q: %w", id, err)
		}
		if live {
			if err := a.checkNote(fmt.Sprintf("notes.deleted[%d]", i), id, cur, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleFrameUpserts refuses, when restricted, an upsert of a locked frame
// or one that changes a frame's lock, and keeps the stored lock of a frame
// a person pushed without "locked". It reads nothing when there is nothing
// to check or settle (the owner sending "locked", or the server's push).
func settleFrameUpserts(p *Push, stored StoredRows, restricted bool) error {
	a := p.Author
	for i := range p.Frames.Upserted {
		f := &p.Frames.Upserted[i]
		if !restricted && (f.LockedSent || a == nil) {
			continue
		}
		cur, live, err := stored.Frame(f.ID)
		if err != nil {
			return fmt.Errorf("read frame %q: %w", f.ID, err)
		}
		if restricted {
			if err := checkFrameUpsert(fmt.Sprintf("frames.upserted[%d]", i), f, cur, live); err != nil {
				return err
			}
		}
		if !f.LockedSent { // a != nil here
			f.Locked = live && cur.Locked
		}
	}
	return nil
}

// checkFrameUpsert refuses a non-owner's upsert of f over the stored
// frame cur: a locked frame, or a change of its lock.
func checkFrameUpsert(field string, f *Frame, cur Frame, live bool) error {
	if live && cur.Locked {
		return lockedError("Frame", f.ID, field)
	}
	if f.LockedSent && f.Locked != (live && cur.Locked) {
		return &Error{Code: EFORBIDDEN, Field: field + ".locked", ID: f.ID,
			Message: "Only the board's owner can lock or unlock a frame."}
	}
	return nil
}

// checkFrameDeletes refuses a non-owner's deletion of a locked frame.
func checkFrameDeletes(ids []string, stored StoredRows) error {
	for i, id := range ids {
		cur, live, err := stored.Frame(id)
		if err != nil {
			return fmt.Errorf("read frame %q: %w", id, err)
		}
		if live && cur.Locked {
			return lockedError("Frame", id, fmt.Sprintf("frames.deleted[%d]", i))
		}
	}
	return nil
}

// checkKinds refuses what a role may not push at all, whatever the rows.
func (a *Author) checkKinds(p *Push) error {
	switch a.Role {
	case RoleEdit:
		return nil
	case RoleAdd:
		msg := "You can add notes and edit your own on this board, not %s."
		switch {
		case p.Board != nil:
			return &Error{Code: EFORBIDDEN, Field: "board", Message: fmt.Sprintf(msg, "rename it")}
		case len(p.TrackerItems.Upserted) > 0 || len(p.TrackerItems.Deleted) > 0:
			return &Error{Code: EFORBIDDEN, Field: "trackerItems", Message: fmt.Sprintf(msg, "change its tracker items")}
		case len(p.Frames.Upserted) > 0 || len(p.Frames.Deleted) > 0:
			return &Error{Code: EFORBIDDEN, Field: "frames", Message: fmt.Sprintf(msg, "change its frames")}
		case len(p.Connectors.Upserted) > 0 || len(p.Connectors.Deleted) > 0:
			return &Error{Code: EFORBIDDEN, Field: "connectors", Message: fmt.Sprintf(msg, "change its connectors")}
		}
		return nil
	}
	return Errorf(EFORBIDDEN, "You can view this board but not edit it.")
}

// checkNote refuses a change to the stored note cur (live: it exists) that
// the author may not make: a locked note, or for RoleAdd someone else's
// (a note without createdBy is the owner's).
func (a *Author) checkNote(field, id string, cur Note, live bool) error {
	if !live {
		return nil
	}
	if cur.Locked {
		return lockedError("Note", id, field)
	}
	if a.Role == RoleAdd && cur.CreatedBy != a.Email {
		return &Error{Code: EFORBIDDEN, Field: field, ID: id,
			Message: fmt.Sprintf("Note %q was added by someone else: you can add notes and edit only your own.", id)}
	}
	return nil
}
