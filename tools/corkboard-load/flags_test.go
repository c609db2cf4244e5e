package main

import (
	"io"
	"strings"
	"testing"
)

// flagCase is one command line of a mode and what check says of it.
type flagCase struct {
	args []string
	want string // "" for accepted, else part of the error
}

// testModeFlags parses each case's args after "-mode mode" and checks
// that Config.check accepts it, or refuses it with an error naming want.
func testModeFlags(t *testing.T, mode string, cases []flagCase) {
	t.Helper()
	for _, tc := range cases {
		cfg := &Config{}
		fs := newFlagSet(cfg, io.Discard)
		if err := fs.Parse(append([]string{"-mode", mode}, tc.args...)); err != nil {
			t.Fatalf("%v: parse: %v", tc.args, err)
		}
		err := cfg.check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one with %q", tc.args, err, tc.want)
		}
	}
}
