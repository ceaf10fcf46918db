//go:build unix

package main

import (
	"errors"
	"testing"

	"github.com/gomonty/monty/session"
)

// The watchdog that backs --max-duration up ends the program for its own
// time limit: exit 1, as the worker's TimeoutError. The reply bound of a
// turn that runs no code (a Dump, a Load, a Shutdown the worker never
// answered) is no limit of the program's: the worker failed, exit 3.
func TestReplyBoundIsASandboxFailure(t *testing.T) {
	var ee exitError
	if err := sandboxFailed(&session.TimeoutError{Watchdog: true, Limit: session.LimitDuration, Killed: true}); errors.As(err, &ee) {
		t.Fatalf("max_duration watchdog: exit %d, want the program's own failure", ee.code)
	}
	err := sandboxFailed(&session.TimeoutError{Watchdog: true, Limit: session.LimitReply, Killed: true})
	if !errors.As(err, &ee) || ee.code != exitSandboxFailed {
		t.Fatalf("reply bound: %v, want exit %d", err, exitSandboxFailed)
	}
}
