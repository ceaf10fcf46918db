//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestServeDumpKeyErrorsSayHowToMakeOne: montygo serve without
// --dump-key, or with a file too short to be one, said only that the
// flag is required or how many bytes the file has; a first user was left
// to find out what the key is and how to make one. Both errors now say
// it signs dumps and how to make one (the first also names the flag's
// environment twin), on one line.
func TestServeDumpKeyErrorsSayHowToMakeOne(t *testing.T) {
	short := writeFile(t, "short", "tooshort")
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0"},
		{"serve", "--listen", "127.0.0.1:0", "--dump-key", short},
	} {
		_, stderr, code := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		wants := []string{"at least 16", "signs", "head -c 32 /dev/urandom"}
		if len(args) == 3 {
			wants = append(wants, "$MONTY_SERVER_DUMP_KEY=FILE")
		}
		for _, want := range wants {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: %q does not say %q", args, stderr, want)
			}
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
			t.Errorf("%v: %q is %d lines, want one", args, stderr, n+1)
		}
	}
}
