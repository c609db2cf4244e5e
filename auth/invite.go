package auth

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// Invitation is what an invitation e-mail says: who invited whom to which
// board, where it is, and what the invitee will be able to do there.
type Invitation struct {
	// From is the owner who invited (canonical address); To the invitee.
	From, To string
	// BoardName is the board's name ("" for an unnamed board); Link its
	// address in the browser client.
	BoardName, Link string
	// CanEdit is the invitee's access as the board guard answers it now;
	// Plan the name of the invitee's plan, which decides it.
	CanEdit bool
	Plan    string
	// EditPlans are the plans whose invitees edit, named to a viewer as
	// the way to edit.
	EditPlans []string
}

// AllowInvite counts one invitation by owner against Config.InviteRate.
// Call it before the invitation is recorded, so that a refused one changes
// nothing. ERATELIMIT (with RetryAfter) past the limit.
func (s *Service) AllowInvite(owner string) error {
	if wait, ok := s.invites.Allow(owner, s.now()); !ok {
		return rateLimited(fmt.Sprintf("You have sent %d invitations in the last %s; try again later.",
			s.cfg.InviteRate.Count, durationForPeople(s.cfg.InviteRate.Window)), wait)
	}
	return nil
}

// SendInvite queues the invitation e-mail for inv.To through the mailer
// that sends login codes (SMTP, or the outbox). Like a login code, it is
// sent in the background: a full queue drops it and logs, and the
// invitation itself stands.
func (s *Service) SendInvite(ctx context.Context, inv Invitation) {
	name := oneLine(inv.BoardName)
	if name == "" {
		name = "an untitled board"
	} else {
		name = `"` + name + `"`
	}
	var access string
	if inv.CanEdit {
		access = fmt.Sprintf("You can view and edit it: your plan (%s) lets invitees edit the boards they are invited to.", inv.Plan)
	} else {
		access = fmt.Sprintf("You can view it, but not edit it: on your plan (%s) invitees view the boards they are invited to.", inv.Plan)
		if len(inv.EditPlans) > 0 {
			access += fmt.Sprintf("\r\nIf your plan changes to one that lets invitees edit (%s), the board becomes editable for you, even while it is open.",
				strings.Join(inv.EditPlans, " or "))
		}
	}
	s.enqueue(ctx, outgoing{
		kind:    "invitation",
		to:      inv.To,
		subject: fmt.Sprintf("%s invited you to %s on Corkboard", inv.From, name),
		body: fmt.Sprintf("%s invited you to the board %s on Corkboard.\r\n\r\n"+
			"Open it here:\r\n%s\r\n\r\n"+
			"%s\r\n\r\n"+
			"Log in with this address (%s); Corkboard sends you a one-time code, no password needed.\r\n"+
			"If you did not expect this invitation, ignore this message.\r\n",
			inv.From, name, inv.Link, access, inv.To),
	})
}

// oneLine keeps a board name to one line of printable text, so that it
// cannot add header lines to the subject or shape the body.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
