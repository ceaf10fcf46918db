//go:build unix

package relay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/worker"
)

// missingInnerEnv makes this test binary a relay child (child.Serve over
// stdin and stdout with this package's engine) whose inner worker is the
// binary the variable names, which does not exist.
const missingInnerEnv = "RELAY_TEST_MISSING_INNER"

// TestRelayChildProcess is the relay child the test below starts; run
// directly it does nothing.
func TestRelayChildProcess(t *testing.T) {
	inner := os.Getenv(missingInnerEnv)
	if inner == "" {
		t.Skip("only run as a relay child")
	}
	eng := New(Config{Worker: worker.Config{Binary: inner}})
	err := child.Serve(context.Background(), transport.NewStream(os.Stdin, os.Stdout, 0), eng, child.Options{})
	// As a program serving a child would end: the error on stderr, and
	// its status.
	var ee *child.ExitError
	if errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(int(ee.Code))
	}
	os.Exit(0)
}

// TestMissingInnerWorkerSaysItOnce: a relay child whose inner worker
// binary is missing ends with a FatalError, which its parent's session
// reports as a *worker.CrashError. That error repeated its whole message:
// the FatalError's text, then the child's last stderr line, which said
// the same (a program serving a child writes its error there, as the
// native worker writes its fatal error). It now says it once, and still
// names the missing binary.
func TestMissingInnerWorkerSaysItOnce(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-monty")
	_, err = session.Start(context.Background(), session.Launch{
		Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: self, Logger: quiet,
			Args: []string{"-test.run=^TestRelayChildProcess$"},
			Env:  []string{missingInnerEnv + "=" + missing}}},
	}, session.Config{Logger: quiet})
	var ce *worker.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("Start: %v, want a *worker.CrashError", err)
	}
	text := err.Error()
	t.Logf("the parent sees: %s", text)
	if !strings.Contains(text, missing) {
		t.Errorf("the error does not name the missing binary %s", missing)
	}
	if n := strings.Count(text, worker.ErrBinaryNotFound.Error()); n != 1 {
		t.Errorf("the error says %q %d times, want once", worker.ErrBinaryNotFound, n)
	}
	if n := strings.Count(text, missing); n != 1 {
		t.Errorf("the error names the missing binary %d times, want once", n)
	}
	if !strings.Contains(ce.Stderr, ce.Message) {
		t.Errorf("the child's stderr %q does not repeat its FatalError %q: the test shows nothing", ce.Stderr, ce.Message)
	}
}
