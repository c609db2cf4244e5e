package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"corkboard/auth"
)

// TestInviteLimitFlag: -invite-limit sets the invitations an owner may
// send (30 an hour by default, auth's own default); a bad rate is refused
// naming the flag.
func TestInviteLimitFlag(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		count int
		win   time.Duration
		bad   bool
	}{
		{nil, 30, time.Hour, false},
		{[]string{"-invite-limit", "2/15m"}, 2, 15 * time.Minute, false},
		{[]string{"-invite-limit", "10000/1h"}, 10000, time.Hour, false},
		{[]string{"-invite-limit", "0/1h"}, 0, 0, true},
		{[]string{"-invite-limit", "many"}, 0, 0, true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cfg, err := parseConfig(tc.args, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			set, err := checkSettings(cfg)
			if tc.bad {
				if err == nil || !strings.Contains(err.Error(), "-invite-limit") {
					t.Fatalf("err=%v, want one naming -invite-limit", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := set.authRates.InviteRate; r.Count != tc.count || r.Window != tc.win {
				t.Fatalf("InviteRate=%+v, want %d per %v", r, tc.count, tc.win)
			}
		})
	}
	if def := auth.Defaults().InviteRate; def.Count != 30 || def.Window != time.Hour {
		t.Fatalf("auth's default is %+v: keep -invite-limit's default the same", def)
	}
}
