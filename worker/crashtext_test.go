package worker

import (
	"strings"
	"testing"
)

// TestCrashErrorSaysTheMessageOnce: an announced crash whose last stderr
// line repeats the FatalError text (the native worker's "monty subprocess
// fatal error: ...", a child program that prints the error it ends with)
// quoted that line after the message, saying it twice; the line is left
// out then, also when Error would cut it, and kept when it says more.
func TestCrashErrorSaysTheMessageOnce(t *testing.T) {
	long := strings.Repeat("m", 600)
	for _, tc := range []struct {
		e      CrashError
		stderr bool // quoted
	}{
		{CrashError{Reason: Announced, Message: "desync", Stderr: "monty subprocess fatal error: desync\n"}, false},
		{CrashError{Reason: Announced, Message: long, Stderr: "early\nchild exits with status 4: " + long + "\n\n"}, false},
		{CrashError{Reason: Announced, Message: "desync", Stderr: "desync\nthread panicked at src/x.rs\n"}, true},
		{CrashError{Reason: Announced, Message: "", Stderr: "something\n"}, true},
		{CrashError{Reason: Vanished, Context: ContextWaiting, Stderr: "desync\n"}, true},
	} {
		got := tc.e.Error()
		if quoted := strings.Contains(got, ": stderr: "); quoted != tc.stderr {
			t.Errorf("%q: stderr quoted %v, want %v", got, quoted, tc.stderr)
		}
		if tc.e.Message != "" && strings.Count(got, tc.e.Message) != 1 {
			t.Errorf("%q says %q %d times", got, tc.e.Message, strings.Count(got, tc.e.Message))
		}
	}
}
