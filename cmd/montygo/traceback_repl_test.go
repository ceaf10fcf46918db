//go:build unix

package main

import (
	"strings"
	"testing"
)

// The REPL renders through the same renderer as `run`: an undefined
// name's call is underlined at the name even in a frame of an earlier
// input, and a bare raise with nothing active shows an empty file name and
// its own line (the REPL knows each input's source), never a NUL byte.
func TestREPLTracebacks(t *testing.T) {
	_, stderr, _ := runCLI(t, "def f():\n    return missing(1)\n\nf()\nraise\n", "repl")
	for _, want := range []string{
		"  File \"<stdin>\", line 1, in <module>\n    f()\n    ~~~\n" +
			"  File \"<stdin>\", line 2, in f\n    return missing(1)\n           ~~~~~~~\n" +
			"NameError: name 'missing' is not defined\n",
		"  File \"\", line 1, in <module>\n    raise\n    ~\nRuntimeError: No active exception to reraise\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the REPL's stderr lacks\n%s\nstderr:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "\x00") {
		t.Errorf("a NUL byte in the REPL's output: %q", stderr)
	}
}
