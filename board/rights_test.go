package board

import "testing"

func TestRoles(t *testing.T) {
	b := &Board{OwnerEmail: "o@x", InvitedEmails: []string{"a@x", "v@x", "e@x"}, Roles: map[string]string{"a@x": RoleAdd, "v@x": RoleView, "o@x": RoleView}}
	for _, tt := range []struct{ email, want string }{
		{"a@x", RoleAdd}, {"v@x", RoleView}, {"e@x", RoleEdit},
		{"o@x", RoleEdit}, // the owner has no role to lower
	} {
		if got := b.RoleOf(tt.email); got != tt.want {
			t.Errorf("RoleOf(%s) = %s, want %s", tt.email, got, tt.want)
		}
	}
	for _, tt := range []struct{ a, b, want string }{
		{RoleEdit, RoleAdd, RoleAdd}, {RoleAdd, RoleEdit, RoleAdd}, {RoleView, RoleEdit, RoleView}, {RoleEdit, RoleEdit, RoleEdit},
	} {
		if got := LesserRole(tt.a, tt.b); got != tt.want {
			t.Errorf("LesserRole(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
	for _, r := range []string{"", "admin", "Edit", "owner"} {
		if ValidRole(r) {
			t.Errorf("ValidRole(%q) = true", r)
		}
	}
}

// TestSettleRightsNoAuthor: the server's own push (no Author) is whole
// rows, unchecked, and keeps createdBy as stored.
func TestSettleRightsNoAuthor(t *testing.T) {
	stored := StoredRows{
		Note: func(id string) (Note, bool, error) {
			return Note{ID: id, Locked: true, CreatedBy: "a@x"}, id == "n1", nil
		},
		Frame: func(id string) (Frame, bool, error) { return Frame{ID: id, Locked: true}, true, nil },
	}
	p := &Push{Notes: NoteChanges{Upserted: []Note{{ID: "n1", CreatedBy: "forged@x"}, {ID: "n2", Locked: true}}, Deleted: []string{"n1"}},
		Frames: FrameChanges{Deleted: []string{"f1"}}}
	if err := SettleRights(p, stored); err != nil {
		t.Fatal(err)
	}
	if n := p.Notes.Upserted; n[0].CreatedBy != "a@x" || n[0].Locked || n[1].CreatedBy != "" || !n[1].Locked {
		t.Fatalf("settled %+v, want createdBy kept, locked as given", n)
	}
}
