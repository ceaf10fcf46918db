package main

import (
	"strings"
	"testing"
	"time"
)

// NaN passes every "< 0" and "> max" comparison, so a range check written
// that way let --max-duration NaN through as no limit at all (a negative
// duration after the float-to-int conversion): a runaway loop then ran
// forever. Every seconds flag refuses it.
func TestSecondsFlagsRefuseNaN(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-duration", "NaN", "-c", "1"}, "--max-duration"},
		{[]string{"run", "--max-duration", "nan", "-c", "1"}, "--max-duration"},
		{[]string{"run", "--start-timeout", "NaN", "-c", "1"}, "--start-timeout"},
		{[]string{"repl", "--max-duration", "NaN"}, "--max-duration"},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %s", c.args, code, stderr, c.want)
		}
	}
	for _, s := range []string{"NaN", "-NaN", "nan"} {
		f := secondsFlag{new(time.Duration)}
		if err := f.Set(s); err == nil {
			t.Errorf("secondsFlag.Set(%q) = nil, %v; want an error", s, *f.d)
		}
	}
}

// Input that ends inside a block (no blank line after it) or inside an
// open bracket is run at the end of the input, as python3 -i does with
// piped input, rather than dropped without a word.
func TestREPLRunsTheBlockPendingAtEOF(t *testing.T) {
	out, _, code := runCLI(t, "x = 1\nif x:\n    print('tail', x)\n", "repl")
	if code != 0 || !strings.Contains(out, "tail 1") {
		t.Errorf("a block cut off by EOF: exit %d, stdout %q; want it run", code, out)
	}
	_, stderr, code := runCLI(t, "y = (1,\n", "repl")
	if code != 0 || !strings.Contains(stderr, "SyntaxError") {
		t.Errorf("an open bracket at EOF: exit %d, stderr %q; want a SyntaxError", code, stderr)
	}
	// A pending blank tail is nothing to run.
	out, stderr, code = runCLI(t, "print('a')\n\n\n", "repl")
	if code != 0 || !strings.Contains(out, "a\n") || stderr != "" {
		t.Errorf("blank lines at EOF: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
