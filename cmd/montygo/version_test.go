//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
)

// hangingWorker writes a worker binary that answers nothing to --version
// (a wedged binary, a wrapper waiting on a lock) and, when realFor is not
// empty, relays `subprocess` to the real worker at realFor.
func hangingWorker(t *testing.T, realFor string) string {
	t.Helper()
	script := "#!/bin/sh\n"
	if realFor != "" {
		script += "if [ \"$1\" = subprocess ]; then exec " + realFor + " \"$@\"; fi\n"
	}
	script += "exec sleep 60\n"
	path := filepath.Join(t.TempDir(), "monty")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitDone fails the test if done is not closed within a generous bound.
func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s still waiting for the worker's --version", what)
	}
}

// `montygo version` asks the worker binary its version with a time limit:
// a binary that never answers left it waiting for ever.
func TestVersionBoundsTheWorkersAnswer(t *testing.T) {
	t.Setenv("MONTY_BIN", hangingWorker(t, ""))
	defer func(d time.Duration) { workerVersionTimeout = d }(workerVersionTimeout)
	workerVersionTimeout = 100 * time.Millisecond
	var out, errb strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := versionCmd(context.Background(), nil, nil, &out, &errb); err != nil {
			t.Errorf("version: %v", err)
		}
	}()
	waitDone(t, done, "montygo version")
	if !strings.Contains(out.String(), "worker: unknown version") {
		t.Errorf("stdout %q, want the worker's version unknown", out.String())
	}
}

// The REPL's banner asks the worker its version with the same limit.
func TestREPLBannerBoundsTheWorkersAnswer(t *testing.T) {
	real := testenv.Worker(t)
	t.Setenv("MONTYGO_LOG", "")
	defer func(d time.Duration) { workerVersionTimeout = d }(workerVersionTimeout)
	workerVersionTimeout = 100 * time.Millisecond
	var out, errb strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := replCmd(context.Background(), []string{"--worker", hangingWorker(t, real)}, strings.NewReader("6 * 7\n"), &out, &errb); err != nil {
			t.Errorf("repl: %v (stderr %q)", err, errb.String())
		}
	}()
	waitDone(t, done, "montygo repl")
	if out.String() != "42\n" {
		t.Errorf("stdout %q, stderr %q; want 42", out.String(), errb.String())
	}
}

// version told a worker it could not find in the library's words ("set
// Config.Binary ..., or run scripts/install-worker.sh"), as run did; it has
// no --worker flag, so the advice names $MONTY_BIN alone.
func TestVersionWorkerNotFoundSpeaksTheCLIsWords(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("MONTY_BIN", missing)
	var out, errb strings.Builder
	if code := mainArgs([]string{"version"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "(tried: $MONTY_BIN "+missing+": ") ||
		!strings.Contains(s, "name one with $MONTY_BIN") || strings.Contains(s, "--worker") || strings.Contains(s, "Config.") || strings.Contains(s, "scripts/") {
		t.Errorf("stdout %q: want the worker named by $MONTY_BIN, in the CLI's words", s)
	}
}
