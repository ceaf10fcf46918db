//go:build unix

package main

import (
	"strings"
	"testing"
)

// usageError runs montygo with args (stdin empty) and fails the test
// unless it exits 2 with nothing on stdout and stderr's first line
// starting "montygo CMD: " and holding each of want.
func usageError(t *testing.T, cmd string, args []string, want ...string) {
	t.Helper()
	out, errs, code := runCLI(t, "", args...)
	first, _, _ := strings.Cut(errs, "\n")
	ok := code == 2 && out == "" && strings.HasPrefix(first, "montygo "+cmd+": ")
	for _, w := range want {
		ok = ok && strings.Contains(first, w)
	}
	if !ok {
		t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %q; want 2 and a line naming %q", strings.Join(args, " "), code, out, errs, want)
	}
}

// An explicit --protocol 0 (or --inner-protocol 0) is no protocol
// version, yet every command but decode took it as the flag left out:
// run and repl negotiated, subprocess served its default versions,
// conform worker tested protocol 4 and reported it, so the run was not
// the one asked for. And subprocess took any --inner-protocol, a version
// it cannot speak to its inner worker included, to fail only when a
// parent's Configure came. Both are usage errors now, naming the flag.
func TestProtocolFlagsRefuseVersionsNoCodecSpeaks(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"run", []string{"run", "--protocol", "0", "-c", "1"}, "-protocol"},
		{"repl", []string{"repl", "--protocol", "0"}, "-protocol"},
		{"decode", []string{"decode", "--protocol", "0"}, "protocol"},
		{"subprocess", []string{"subprocess", "--protocol", "0"}, "-protocol"},
		{"subprocess", []string{"subprocess", "--inner-protocol", "0"}, "-inner-protocol"},
		{"subprocess", []string{"subprocess", "--inner-protocol", "3"}, "--inner-protocol 3"},
		{"conform worker", []string{"conform", "worker", "--protocol", "0", "--run", `^feed\.complete-value$`}, "-protocol"},
		{"conform parent", []string{"conform", "parent", "--protocol", "0", "--run", "^exit_4$", "--", "true"}, "-protocol"},
	} {
		usageError(t, c.cmd, c.args, c.want)
	}
}
